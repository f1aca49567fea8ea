import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3Store } from '../../src/output/s3-store.js';
import { downloadAll } from '../support/s3-download.js';
import { silentLogger } from '../../src/log.js';
import { EVENT_ID_BASE, EVENT_ID_STRIDE, type SimulatorOptions } from '../../src/simulator/index.js';
import { createFakeClock } from '../support/fake-clock.js';
import {
  itExportsExactly,
  itFinalizesASplitJob,
  itRepairsADamagedPartition,
  itReplacesAnUncountedUpload,
  itResumesAKillMidUpload,
  itSealsSnapshots,
  type ExportOptions,
  type StoreExport,
} from '../support/object-store-export.js';
import {
  describeExit,
  type Exit,
  expectedIds,
  expectExactOutput,
  jobYaml,
  newSimulator,
  runCliWith,
  type StreamSpec,
  tempDir,
} from '../support/resume-harness.js';
import { S3RVER_ACCESS, startS3Server } from '../support/s3-server.js';

/**
 * output.dir: s3://bucket/prefix against a real S3-protocol server on loopback (s3rver), with real
 * CLI processes: the store ends up holding exactly what a local output folder would, shards are
 * committed only once their multipart upload completed, and a kill in the middle of an upload (or
 * between an upload and the checkpoint) is resumed without a lost or repeated row. The cases every
 * object store shares are in test/support/object-store-export.ts; S3's own are here.
 *
 * Events: 40,000 in 2 partitions of 20 pages (limit 1000), NDJSON only, shards of 20,000 rows
 * (about 8 MB): one shard per partition, each uploaded in 2 parts of 5 MiB (S3's smallest part).
 */
const KEY = 's3-export-key-001';
const EVENTS = 40_000;
// No instance metadata lookup (169.254.169.254 is not loopback) when credentials are missing.
const S3_ENV = {
  AWS_ACCESS_KEY_ID: 'S3RVER',
  AWS_SECRET_ACCESS_KEY: 'S3RVER',
  AWS_REGION: 'us-east-1',
  AWS_EC2_METADATA_DISABLED: 'true',
};

let server: Awaited<ReturnType<typeof startS3Server>>;

beforeAll(async () => {
  server = await startS3Server({ bucket: 'lake' });
});
afterAll(async () => {
  await server.close();
});

interface SetupOptions extends ExportOptions {
  simulator?: Partial<SimulatorOptions>;
}

async function setup(seed: number, prefix: string, options: SetupOptions = {}): Promise<StoreExport & { dir: string }> {
  const { stream = { resource: 'events', partitions: 2, limit: 1000 }, maxRows = 20_000, formats = ['ndjson'] } = options;
  const sim = await newSimulator({
    events: EVENTS,
    assets: 10,
    seed,
    apiKeys: [KEY],
    recordRequests: true,
    ...options.simulator,
  });
  const dir = tempDir('s3-export');
  const url = `s3://${server.bucket}/${prefix}`;
  const file = join(dir, 'job.yaml');
  const job = jobYaml({
    baseUrl: sim.baseUrl,
    outDir: url,
    streams: [stream],
    formats,
    maxRows,
  });
  // The harness knows no s3 settings: add them.
  const s3 = `  s3:\n    endpoint: ${server.endpoint}\n    forcePathStyle: true\n    partSizeMiB: 5\n    staging: ${join(dir, 'staging')}\n`;
  writeFileSync(file, job.replace(/^output:\n/m, `output:\n${s3}`));
  const cli = (args: string[], env: Record<string, string> = {}): Promise<Exit> =>
    runCliWith([...args, '--config', file], { cwd: dir, env: { SIM_KEY: KEY, ...S3_ENV, ...env } });
  // The store this file opens itself, to read the bucket back.
  const store = createS3Store({
    url,
    endpoint: server.endpoint,
    forcePathStyle: true,
    partSizeBytes: 5 * 1024 * 1024,
    logger: silentLogger,
    ...S3RVER_ACCESS,
  });
  const expected = [
    { name: 'events', resource: 'events' as const, partitions: 2, formats: ['ndjson' as const], ids: expectedIds(sim, 'events') },
  ];
  return { sim, dir, url, prefix, cli, store, expected, staging: join(dir, 'staging') };
}

/** The keys s3rver is asked to put from now on (PutObject, UploadPart and the like). */
function putsFromNow(): () => string[] {
  const from = server.requests().length;
  return () => server.requests().slice(from).filter((r) => r.method === 'PUT').map((r) => r.key);
}

/** Each shard went up in parts, and was completed. */
function expectMultipartUploads({ prefix }: StoreExport, _exit: Exit, shards: string[]): void {
  for (const key of shards) {
    const ops = server.requests().filter((r) => r.key === `${prefix}/${key}` && r.status === 200).map((r) => r.operation);
    expect(ops).toEqual(['CreateMultipartUpload', 'UploadPart', 'UploadPart', 'CompleteMultipartUpload']);
  }
}

describe.concurrent('output.dir: s3://', () => {
  itExportsExactly(
    'an export lands in the bucket exactly: every shard once, manifest, checkpoint, _SUCCESS; staging left empty',
    (o) => setup(21, 'exports/full', o),
    { afterRun: expectMultipartUploads },
  );

  // The second part of some upload was received; CompleteMultipartUpload was never sent.
  itResumesAKillMidUpload(
    'killed in the middle of a multipart upload: the object is absent, the resume uploads it and the output is exact',
    (o) => setup(22, 'exports/kill-upload', o),
    'after-upload-part:3',
  );

  itReplacesAnUncountedUpload(
    'killed after an upload completed but before the checkpoint counted it: the object is replaced, not doubled',
    (o) => setup(23, 'exports/kill-after-upload', o),
  );

  it('mode: incremental: each run\'s folder is sealed in the bucket, and the second run holds exactly what changed', { timeout: 120_000 }, async () => {
    const stream: StreamSpec = { resource: 'events', mode: 'incremental', safetyLag: 0, partitions: 2, limit: 1000 };
    const { sim, cli, store } = await setup(26, 'exports/incremental', { stream });
    try {
      const first = await cli(['run']);
      expect(first.code, describeExit(first)).toBe(0);
      const changed = [7, 20_000, 39_999];
      sim.update('events', changed, Date.now());
      const second = await cli(['run']);
      expect(second.code, describeExit(second)).toBe(0);

      const keys = await store.list('events/');
      const runs = [...new Set(keys.map((key) => key.split('/')[1]))].sort();
      expect(runs).toHaveLength(2);
      for (const run of runs) {
        expect(keys).toEqual(expect.arrayContaining([`events/${run}/_SUCCESS`, `events/${run}/_manifest.json`]));
      }
      const sealed = JSON.parse((await store.getText(`events/${runs[1]}/_manifest.json`)) ?? '{}') as { rows: number };
      expect(sealed.rows).toBe(3);
      const lines = [];
      for (const key of keys.filter((k) => k.startsWith(`events/${runs[1]}/`) && k.endsWith('.ndjson'))) {
        lines.push(...(await text(await store.read(key))).split('\n').filter(Boolean));
      }
      const ids = lines.map((line) => (JSON.parse(line) as { id: number }).id).sort((a, b) => a - b);
      expect(ids).toEqual(changed.map((i) => EVENT_ID_BASE + i * EVENT_ID_STRIDE));
      const verify = await cli(['verify']);
      expect(verify.code, describeExit(verify)).toBe(0);
    } finally {
      await store.close();
    }
  });

  it('the bucket refuses a checkpoint write: exit 2 naming the key and the S3 code, and the next run completes exactly', async () => {
    const { cli, store, expected } = await setup(27, 'exports/refused');
    try {
      // The second checkpoint put (the first commit's) is refused as a credential problem would be.
      let puts = 0;
      server.failNext(
        (r) => r.operation === 'PutObject' && r.key === 'exports/refused/_checkpoint.json' && ++puts === 2,
        { status: 403, code: 'AccessDenied' },
      );
      const failed = await cli(['run']);
      // AccessDenied: the credential works, its policy does not allow the write; no retry mends that.
      expect(failed.code, describeExit(failed)).toBe(2);
      expect(failed.stderr).toContain('s3://lake/exports/refused/_checkpoint.json failed: AccessDenied (HTTP 403)');
      expect(failed.stderr).toContain('The credential works, but its policy does not allow this on the bucket');
      expect(failed.stderr).not.toContain('S3RVER');

      const resumed = await cli(['run']);
      expect(resumed.code, describeExit(resumed)).toBe(0);
      await expectExactOutput(await downloadAll(store, tempDir('s3-copy')), expected);
    } finally {
      await store.close();
    }
  });

  it('a checkpointed cursor refused on resume: the partition\'s objects are deleted in the bucket and it is read again, exactly', async () => {
    const clock = createFakeClock();
    // Shards of 5000 rows: 4 per partition (single PutObjects), so a kill leaves a partition mid-way.
    const { sim, cli, store, expected } = await setup(28, 'exports/expired', {
      maxRows: 5000,
      simulator: { faults: { cursorTtlMs: 60_000 }, clock },
    });
    try {
      const killed = await cli(['run'], { BULK_EXTRACT_CRASH_AT: 'after-checkpoint-write:4' });
      expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
      const saved = JSON.parse((await store.getText('_checkpoint.json')) ?? '{}') as {
        streams: Record<string, { parts: Record<string, { cursor: string | null; done: boolean }> }>;
      };
      const refused = Object.entries(saved.streams.events?.parts ?? {}).filter(([, p]) => p.cursor !== null && !p.done);
      expect(refused.length, 'a partition resumes from a cursor').toBeGreaterThan(0);

      // A file bulk-extract did not write, in every partition folder: the restart empties a
      // partition's folder of its own files only, and names the one it leaves.
      for (const m of ['1', '2']) await store.putText(`events/part=${m}-of-2/marker.txt`, m);

      clock.advance(120_000);
      const resumed = await cli(['run']);
      expect(resumed.code, describeExit(resumed)).toBe(0);
      expect(resumed.stderr.split('\n').filter((l) => l.includes('refused the checkpointed cursor'))).toHaveLength(refused.length);
      expect(sim.requests().filter((r) => r.status === 400)).toHaveLength(refused.length);
      // The refused partitions' folders were emptied of their shards before they were read again;
      // the file of someone else stayed, in every partition, and each restart said so.
      for (const m of ['1', '2']) expect(await store.getText(`events/part=${m}-of-2/marker.txt`), `partition ${m}`).toBe(m);
      const left = resumed.stderr.split('\n').filter((l) => l.includes('that bulk-extract did not write'));
      const named = left.map((line) => /part=(\d)-of-2\/marker\.txt/.exec(line)?.[1]);
      expect(named.sort()).toEqual(refused.map(([m]) => m).sort());
      for (const m of ['1', '2']) await store.remove([`events/part=${m}-of-2/marker.txt`]);
      await expectExactOutput(await downloadAll(store, tempDir('s3-copy')), expected);
    } finally {
      await store.close();
    }
  });

  itRepairsADamagedPartition(
    'repair: a truncated and a corrupted object are found in the bucket, only their partition is read again, exactly',
    (o) => setup(29, 'exports/repair', o),
    putsFromNow,
  );

  itFinalizesASplitJob(
    '3 workers (--shard i/3) into the bucket: one killed and resumed alone, the last finalizes, the union is exact',
    (o) => setup(25, 'exports/shard', o),
  );

  it('a bucket that does not exist: exit 2 naming the bucket, nothing written locally but staging', async () => {
    const { cli, dir } = await setup(24, 'x');
    const yaml = join(dir, 'job.yaml');
    const text = readFileSync(yaml, 'utf8').replace(`s3://${server.bucket}/x`, 's3://no-such-bucket/x');
    writeFileSync(yaml, text);
    const exit = await cli(['run']);
    expect(exit.code, describeExit(exit)).toBe(2);
    expect(exit.stderr).toContain('The bucket "no-such-bucket" does not exist: create it or fix output.dir.');
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });

  it('--dry-run names the bucket, not the staging folder, proves it can write there and leaves it as it was', async () => {
    const { cli, store, url, staging, dir } = await setup(26, 'exports/dry');
    try {
      const first = await cli(['run']);
      expect(first.code, describeExit(first)).toBe(0);
      const before = await store.list('');
      const from = server.requests().length;
      const exit = await cli(['run', '--dry-run']);
      expect(exit.code, describeExit(exit)).toBe(0);
      expect(exit.stdout).toContain(`output      ${url}\n`);
      expect(exit.stdout).toContain(`checkpoint  ${url}/_checkpoint.json\n`);
      expect(exit.stdout).not.toContain(staging);
      expect(exit.stdout).toContain('events: complete since');
      const seen = server.requests().slice(from);
      const probe = seen.findIndex((r) => r.operation === 'PutObject' && r.key.includes('_probe-'));
      expect(probe, 'one probe object put').toBeGreaterThanOrEqual(0);
      // Other tests of this file share the server, so requests interleave: the probe is gone from the
      // prefix (below), and a delete came after it.
      expect(seen.slice(probe + 1).some((r) => r.operation === 'DeleteObjects'), 'and deleted').toBe(true);
      expect(await store.list('')).toEqual(before);

      // A bucket that does not exist: the dry run says so once, naming it, with a run's exit code.
      const yaml = join(dir, 'job.yaml');
      writeFileSync(yaml, readFileSync(yaml, 'utf8').replace(`s3://${server.bucket}/exports/dry`, 's3://no-such-bucket/x'));
      const missing = await cli(['run', '--dry-run']);
      expect(missing.code, describeExit(missing)).toBe(2);
      const refused = missing.stdout.split('\n').filter((line) => line.startsWith('REFUSED'));
      expect(refused, missing.stdout).toHaveLength(1);
      expect(refused[0]).toMatch(/REFUSED {5}a run now would stop here: .*The bucket "no-such-bucket" does not exist/);
    } finally {
      await store.close();
    }
  });

  itSealsSnapshots(
    'mode: snapshot: each run seals a copy in the bucket, _LATEST moves there, keep 1 deletes the older one',
    (o) => setup(27, 'exports/snap', o),
  );
});
