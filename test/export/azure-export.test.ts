import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ContainerSASPermissions, generateBlobSASQueryParameters, StorageSharedKeyCredential } from '@azure/storage-blob';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { createAzureStore } from '../../src/output/azure-store.js';
import { AZURITE_ACCOUNT, AZURITE_KEY, type Azurite, startAzureProxy, startAzurite } from '../support/azurite.js';
import {
  describeExit,
  type Exit,
  expectedIds,
  expectExactOutput,
  jobYaml,
  newSimulator,
  runCliWith,
  tempDir,
} from '../support/resume-harness.js';
import { downloadAll } from '../support/s3-download.js';
import {
  contents,
  type ExportOptions,
  itExportsExactly,
  itFinalizesASplitJob,
  itRepairsADamagedPartition,
  itReplacesAnUncountedUpload,
  itResumesAKillMidUpload,
  itSealsSnapshots,
  type StoreExport,
} from '../support/object-store-export.js';

/**
 * output.dir: an Azure URL (abfss://, az://) against Microsoft's Azurite on loopback, with real CLI
 * processes: the container ends up holding exactly what a local output folder would; kills between
 * an upload and the checkpoint are resumed without a lost or repeated row; verify, status, repair,
 * --fresh, a split job of 3 workers and snapshots with keep work as on s3:// (s3-export.test.ts);
 * a wrong key, a missing container and an expired SAS token each stop with one line and the exit
 * code docs/errors.md gives, and lose nothing committed. The cases every object store shares are in
 * test/support/object-store-export.ts; Azure's own are here.
 *
 * Events: 40,000 in 2 partitions of 20 pages (limit 1000), NDJSON, shards of 20,000 rows.
 */
const KEY = 'azure-export-key-001';
const EVENTS = 40_000;

let azurite: Azurite;

beforeAll(async () => {
  azurite = await startAzurite();
  await azurite.container('lake');
});
afterAll(async () => {
  await azurite.close();
});

/** A stderr line other than an info log line, the warning that api keys (the simulator's) are deprecated or the end. */
const notInfo = (line: string) => line !== '' && !line.startsWith('{"level":30') && !line.startsWith('warning: API keys');

interface SetupOptions extends ExportOptions {
  /** 'abfss' (default) or 'az' (the account from output.azure.account). */
  form?: 'abfss' | 'az';
  /** The Blob endpoint the CLI reaches (default: Azurite's; a proxy in front of it). */
  endpoint?: string;
}

type AzureExport = StoreExport & { dir: string; file: string };

async function setup(seed: number, path: string, options: SetupOptions = {}): Promise<AzureExport> {
  const { stream = { resource: 'events', partitions: 2, limit: 1000 }, maxRows = 20_000, formats = ['ndjson'] } = options;
  const sim = await newSimulator({ events: EVENTS, assets: 10, seed, apiKeys: [KEY], recordRequests: true });
  const dir = tempDir('azure-export');
  const url = options.form === 'az' ? `az://lake/${path}` : `abfss://lake@${AZURITE_ACCOUNT}.dfs.core.windows.net/${path}`;
  const file = join(dir, 'job.yaml');
  const job = jobYaml({ baseUrl: sim.baseUrl, outDir: url, streams: [stream], formats, maxRows });
  const account = options.form === 'az' ? `    account: ${AZURITE_ACCOUNT}\n` : '';
  // Retries wait a few ms, as the harness's source.retry does: no test waits out a real backoff.
  const retry = '    retry:\n      baseDelayMs: 1\n      maxDelayMs: 5\n';
  const endpoint = options.endpoint ?? azurite.endpoint;
  const azure = `  azure:\n${account}    endpoint: ${endpoint}\n    staging: ${join(dir, 'staging')}\n${retry}`;
  writeFileSync(file, job.replace(/^output:\n/m, `output:\n${azure}`));
  const cli = (args: string[], env: Record<string, string> = {}): Promise<Exit> =>
    runCliWith([...args, '--config', file], { cwd: dir, env: { SIM_KEY: KEY, AZURE_STORAGE_KEY: AZURITE_KEY, ...env } });
  const store = createAzureStore({
    url,
    account: AZURITE_ACCOUNT,
    endpoint: azurite.endpoint,
    env: azurite.env,
    logger: silentLogger,
  });
  const expected = [
    { name: 'events', resource: 'events' as const, partitions: 2, formats: ['ndjson' as const], ids: expectedIds(sim, 'events') },
  ];
  return { sim, dir, url, prefix: path, file, cli, store, expected, staging: join(dir, 'staging') };
}

/** A SAS token for the container `lake`, valid until `expiresOn`. */
function sasToken(expiresOn: Date): string {
  const key = new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY);
  const startsOn = new Date(Date.now() - 3_600_000);
  return generateBlobSASQueryParameters(
    { containerName: 'lake', permissions: ContainerSASPermissions.parse('racwdl'), startsOn, expiresOn },
    key,
  ).toString();
}

/**
 * After a complete export: --dry-run names the container and the credential and leaves it as it was;
 * a container named on the command line without the job file is refused (its settings are in the job).
 */
async function expectDryRunAndBareRefusal({ cli, store, url }: StoreExport): Promise<void> {
  const before = await store.list('');
  const dry = await cli(['run', '--dry-run']);
  expect(dry.code, describeExit(dry)).toBe(0);
  expect(dry.stdout).toContain(`output      ${url}\n`);
  expect(dry.stdout).toContain('output auth the account key in AZURE_STORAGE_KEY\n');
  expect(dry.stdout).toContain(`checkpoint  ${url}/_checkpoint.json\n`);
  expect(await store.list('')).toEqual(before);
  const bare = await runCliWith(['status', '--out', url]);
  expect(bare.code).toBe(2);
  expect(bare.stderr).toContain("is a container, read with the job's output.azure settings");
}

describe.concurrent('output.dir: abfss:// and az://', () => {
  itExportsExactly(
    'an export lands in the container exactly; verify, status and --dry-run read it there',
    (o) => setup(31, 'exports/full', o),
    { afterRun: (_, exit) => expect(exit.stderr).not.toContain(AZURITE_KEY), afterStatus: expectDryRunAndBareRefusal },
  );

  itResumesAKillMidUpload(
    'killed in the middle of an upload: the blob is absent, the resume uploads it and the output is exact',
    (o) => setup(32, 'exports/kill-upload', o),
    'after-upload-part:2',
  );

  itReplacesAnUncountedUpload(
    'killed after an upload but before the checkpoint counted it: the blob is replaced, not doubled',
    (o) => setup(33, 'exports/kill-after-upload', o),
  );

  itRepairsADamagedPartition(
    'repair on az://: a truncated and a corrupted blob are found, only their partition is read again',
    (o) => setup(34, 'exports/repair', { ...o, form: 'az' }),
  );

  it('--fresh on az:// starts over: the old shards are deleted, the new export is exact', async () => {
    const { cli, store, expected } = await setup(35, 'exports/fresh', { form: 'az' });
    try {
      expect((await cli(['run'])).code).toBe(0);
      const first = JSON.parse((await store.getText('_manifest.json')) ?? '{}') as { startedAt?: string };
      const again = await cli(['run', '--fresh']);
      expect(again.code, describeExit(again)).toBe(0);
      const second = JSON.parse((await store.getText('_manifest.json')) ?? '{}') as { startedAt?: string };
      expect(second.startedAt).not.toBe(first.startedAt);
      await expectExactOutput(await downloadAll(store, tempDir('azure-fresh')), expected);
    } finally {
      await store.close();
    }
  });

  itFinalizesASplitJob(
    '3 workers (--shard i/3) on az://: one killed and resumed alone, the last finalizes, the union is exact',
    (o) => setup(36, 'exports/shard', { ...o, form: 'az' }),
  );

  itSealsSnapshots(
    'mode: snapshot on az://: each run seals a copy, _LATEST moves, keep 1 deletes the older one',
    (o) => setup(37, 'exports/snap', { ...o, form: 'az' }),
  );

  it('throttled (503 ServerBusy, 500 OperationTimedOut) on every kind of write: retried with backoff, the export exact', async () => {
    const proxy = await startAzureProxy(azurite);
    const { cli, store, expected } = await setup(39, 'exports/busy', { endpoint: proxy.endpoint, maxRows: 5000 });
    try {
      const under = (r: { path: string }) => r.path.startsWith('/lake/exports/busy/');
      // The lock, each shard, the manifest and the checkpoint: throttled twice each, somewhere in the run.
      proxy.failNext((r) => under(r) && r.method === 'PUT' && r.path.endsWith('/.lock'), 503, 'ServerBusy', 2);
      proxy.failNext((r) => under(r) && r.method === 'PUT' && r.path.endsWith('.ndjson'), 503, 'ServerBusy', 3);
      proxy.failNext((r) => under(r) && r.method === 'PUT' && r.path.endsWith('/_manifest.json'), 500, 'OperationTimedOut', 2);
      proxy.failNext((r) => under(r) && r.method === 'PUT' && r.path.endsWith('/_checkpoint.json'), 503, 'ServerBusy', 2);
      // A listing names the container alone (the prefix is in its query): this proxy serves this test only.
      proxy.failNext((r) => r.comp === 'list', 503, 'ServerBusy', 1);
      const exit = await cli(['run']);
      expect(exit.code, describeExit(exit)).toBe(0);
      const faults = proxy.requests().filter((r) => r.status >= 500);
      expect(faults.length, 'every injected fault was met').toBe(10);
      await expectExactOutput(await downloadAll(store, tempDir('azure-busy')), expected);
    } finally {
      await store.close();
      await proxy.close();
    }
  });

  it('a wrong key, an expired SAS token, a missing container: one line each, exit 3, 3 and 2; nothing committed lost', async () => {
    const { cli, store, file, dir, expected } = await setup(38, 'exports/refused');
    try {
      // Half an export committed: the first shard counted, the run killed.
      const killed = await cli(['run'], { BULK_EXTRACT_CRASH_AT: 'after-checkpoint-write:2' });
      expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
      const committed = await contents(store, '');
      delete committed['.lock'];
      delete committed['.progress.json'];
      const wrongKey = Buffer.from('a key of another account, 64 bytes long, as account keys are..!').toString('base64');
      const refusals: [string, Record<string, string>, number, string][] = [
        ['wrong key', { AZURE_STORAGE_KEY: wrongKey }, 3, 'Tried the account key in AZURE_STORAGE_KEY'],
        [
          'expired SAS',
          { AZURE_STORAGE_KEY: '', AZURE_STORAGE_SAS_TOKEN: sasToken(new Date(Date.now() - 60_000)) },
          3,
          'Tried the SAS token in AZURE_STORAGE_SAS_TOKEN: check that it has not expired (se=)',
        ],
      ];
      for (const [what, env, code, says] of refusals) {
        const exit = await cli(['run'], env);
        expect(exit.code, `${what}: ${describeExit(exit)}`).toBe(code);
        // The refusal: one line of its own (the logs are JSON lines), naming the blob and the credential tried.
        const said = exit.stderr.split('\n').filter((line) => line.startsWith('bulk-extract run: '));
        expect(said, `${what}: ${exit.stderr}`).toHaveLength(1);
        // Nothing else worth a look: no warning (a run record the refused output cannot take either).
        expect(exit.stderr.split('\n').filter(notInfo), what).toEqual(said);
        const lock = `abfss://lake@${AZURITE_ACCOUNT}.dfs.core.windows.net/exports/refused/.lock`;
        expect(said[0]).toContain(`bulk-extract run: Azure Put Blob of ${lock} failed: AuthorizationFailure (HTTP 403)`);
        expect(said[0]).toContain(says);
        const shown = exit.stderr + exit.stdout;
        for (const secret of Object.values(env).filter((v) => v.length > 8)) expect(shown).not.toContain(secret);
        const sig = new URLSearchParams(env.AZURE_STORAGE_SAS_TOKEN ?? '').get('sig');
        if (sig !== null) expect(shown).not.toContain(sig);
      }
      // --dry-run: the refusal every request to the output meets, once, with the count of the others.
      const dry = await cli(['run', '--dry-run'], { AZURE_STORAGE_KEY: wrongKey });
      expect(dry.code, describeExit(dry)).toBe(3);
      const refused = dry.stdout.split('\n').filter((line) => line.startsWith('REFUSED'));
      expect(refused, dry.stdout).toHaveLength(1);
      expect(refused[0]).toContain('AuthorizationFailure (HTTP 403)');
      expect(refused[0]).toMatch(/ \(and \d+ more requests? to the output refused the same way\)$/);

      const yaml = readFileSync(file, 'utf8');
      writeFileSync(file, yaml.replace('abfss://lake@', 'abfss://no-such-container@'));
      const missing = await cli(['run']);
      expect(missing.code, describeExit(missing)).toBe(2);
      expect(missing.stderr).toContain('The container "no-such-container" does not exist');
      expect(missing.stderr.split('\n').filter(notInfo)).toHaveLength(1);
      expect(existsSync(join(dir, 'out'))).toBe(false);
      writeFileSync(file, yaml);

      const left = await contents(store, '');
      delete left['.lock'];
      delete left['.progress.json'];
      for (const [key, text] of Object.entries(committed)) {
        if (key.startsWith('_runs/')) continue;
        expect(left[key], key).toBe(text);
      }
      const resumed = await cli(['run']);
      expect(resumed.code, describeExit(resumed)).toBe(0);
      await expectExactOutput(await downloadAll(store, tempDir('azure-after-refusals')), expected);
    } finally {
      await store.close();
    }
  });
});
