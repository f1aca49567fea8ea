import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  latestRunRecord,
  parseRunRecordKey,
  readRunRecords,
  recordRun,
  type RunRecord,
  runRecordKey,
  type StoredRunRecord,
  writeRunRecord,
} from '../../src/export/run/run-records.js';
import { silentLogger } from '../../src/log.js';
import { createLocalStore } from '../../src/output/local-store.js';
import { createS3Store } from '../../src/output/s3-store.js';
import type { OutputStore } from '../../src/output/store.js';
import { loadJob, removeTempDirs, tempDir } from '../support/export-harness.js';
import { captureLogger } from '../support/log-capture.js';
import { S3RVER_ACCESS, S3RVER_CREDENTIALS, type S3TestServer, startS3Server } from '../support/s3-server.js';

/**
 * The run records of src/export/run-records.ts (`_runs/`, one per run): their names, writing and reading them
 * newest first through a folder and through a bucket (s3rver on loopback), damaged files skipped,
 * and the CLI's recordRun, which never fails a run.
 */

let server: S3TestServer;

beforeAll(async () => {
  server = await startS3Server({ bucket: 'lake' });
});
afterAll(async () => {
  await server.close();
  vi.unstubAllEnvs();
});
afterEach(removeTempDirs);

/** A complete run's record that ended at `finishedAt`, with `changes`. */
function record(finishedAt: string | null, changes: Partial<RunRecord> = {}): RunRecord {
  return {
    exitCode: 0,
    state: 'complete',
    reason: null,
    destination: '/out',
    startedAt: finishedAt,
    finishedAt,
    durationMs: finishedAt === null ? null : 1500,
    requests: 12,
    retries: 1,
    throttled: 0,
    rowsThisRun: 4000,
    streams: [
      {
        name: 'events',
        resource: 'events',
        mode: 'full',
        state: 'done',
        rows: 4000,
        files: 2,
        bytes: 1234,
        run: null,
        window: { minLastUpdatedTime: null, maxLastUpdatedTime: 1_795_675_849_381 },
      },
    ],
    errors: [],
    verified: null,
    ...changes,
  };
}

const FAILED: Partial<RunRecord> = {
  exitCode: 1,
  state: 'failed',
  reason: { code: 'E_HTTP_STATUS', message: 'GET /events: HTTP 500' },
  errors: [{ stream: 'events', partition: 2, code: 'E_HTTP_STATUS', message: 'GET /events: HTTP 500' }],
};

describe('record names', () => {
  it.each([
    ['2026-11-26T07:12:03.456Z', undefined, '_runs/2026-11-26T07-12-03.456Z.json'],
    ['2026-01-02T00:00:00.000Z', { index: 2, count: 4 }, '_runs/2026-01-02T00-00-00.000Z.worker-2-of-4.json'],
  ])('%s, worker %o: %s', (at, worker, key) => {
    expect(runRecordKey(new Date(at), worker)).toBe(key);
    expect(parseRunRecordKey(key)).toEqual({ recordedAt: at, worker: worker ?? null });
  });

  it('reads the worker from a record an older version named after its --shard (.shard-2-of-4.json)', () => {
    expect(parseRunRecordKey('_runs/2026-01-02T00-00-00.000Z.shard-2-of-4.json')).toEqual({
      recordedAt: '2026-01-02T00:00:00.000Z',
      worker: { index: 2, count: 4 },
    });
  });

  it.each([
    '_runs/2026-11-26T07:12:03.456Z.json',
    '_runs/2026-11-26T07-12-03.456Z.json.inprogress',
    '_runs/README.md',
    '_runs/old/2026-11-26T07-12-03.456Z.json',
    'events/2026-11-26T07-12-03.456Z.json',
  ])('%s is not a record name', (key) => {
    expect(parseRunRecordKey(key)).toBeUndefined();
  });

  it('have no colon, round-trip, and sort as their times do', () => {
    const time = fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(9999, 11, 31) });
    const shard = fc.option(fc.integer({ min: 1, max: 1000 }).chain((count) =>
      fc.record({ index: fc.integer({ min: 0, max: count - 1 }), count: fc.constant(count) })), { nil: undefined });
    fc.assert(
      fc.property(time, shard, time, (a, s, b) => {
        const key = runRecordKey(new Date(a), s);
        expect(key).not.toContain(':');
        expect(parseRunRecordKey(key)).toEqual({ recordedAt: new Date(a).toISOString(), worker: s ?? null });
        if (a !== b) expect(key < runRecordKey(new Date(b), s)).toBe(a < b);
      }),
    );
  });
});

/** A store that counts its getText calls. */
function counting(store: OutputStore): { store: OutputStore; reads: () => number } {
  let reads = 0;
  return {
    store: {
      ...store,
      getText: (key) => {
        reads++;
        return store.getText(key);
      },
    },
    reads: () => reads,
  };
}

const kinds: [string, () => OutputStore][] = [
  ['a folder', () => createLocalStore(join(tempDir(), 'out'), silentLogger)],
  [
    'a bucket (s3rver)',
    () => createS3Store({
      url: `s3://${server.bucket}/records/${Math.random().toString(16).slice(2)}`,
      endpoint: server.endpoint,
      forcePathStyle: true,
      logger: silentLogger,
      ...S3RVER_ACCESS,
    }),
  ],
];

describe.each(kinds)('in %s', (_kind, open) => {
  let store: OutputStore;
  afterEach(async () => {
    await store.close();
  });

  it('writes the line run --json prints under the run\'s end, and reads records back newest first', async () => {
    store = open();
    const first = record('2026-11-26T05:00:00.000Z');
    const failed = record('2026-11-26T06:00:00.000Z', FAILED);
    const refused = record(null, { exitCode: 75, state: 'refused', reason: { code: 'E_LOCKED', message: 'in use' } });
    expect(await writeRunRecord(store, first)).toBe('_runs/2026-11-26T05-00-00.000Z.json');
    expect(await writeRunRecord(store, failed, { worker: { index: 1, count: 2 } })).toBe(
      '_runs/2026-11-26T06-00-00.000Z.worker-1-of-2.json',
    );
    const now = () => Date.parse('2026-11-26T07:00:00.000Z');
    expect(await writeRunRecord(store, refused, { now })).toBe('_runs/2026-11-26T07-00-00.000Z.json');
    expect(await store.getText('_runs/2026-11-26T05-00-00.000Z.json')).toBe(`${JSON.stringify(first)}\n`);

    const all = await readRunRecords(store);
    expect(all.map((entry) => entry.record)).toEqual([refused, failed, first]);
    expect(all.map(({ recordedAt, worker }) => ({ recordedAt, worker }))).toEqual([
      { recordedAt: '2026-11-26T07:00:00.000Z', worker: null },
      { recordedAt: '2026-11-26T06:00:00.000Z', worker: { index: 1, count: 2 } },
      { recordedAt: '2026-11-26T05:00:00.000Z', worker: null },
    ]);
    expect((await readRunRecords(store, 2)).map((entry) => entry.record.state)).toEqual(['refused', 'failed']);
    expect(await readRunRecords(store, 0)).toEqual([]);
  });

  it('latestRunRecord reads newest first and stops at the first match', async () => {
    store = open();
    await writeRunRecord(store, record('2026-11-26T05:00:00.000Z'));
    await writeRunRecord(store, record('2026-11-26T06:00:00.000Z', FAILED));
    await writeRunRecord(store, record('2026-11-26T07:00:00.000Z', FAILED));
    const counted = counting(store);
    const success = await latestRunRecord(counted.store, (entry) => entry.record.exitCode === 0);
    expect(success?.recordedAt).toBe('2026-11-26T05:00:00.000Z');
    expect(counted.reads()).toBe(3);
    const last = counting(store);
    expect((await latestRunRecord(last.store, () => true))?.record.state).toBe('failed');
    expect(last.reads(), 'only the newest was read').toBe(1);
    expect(await latestRunRecord(store, (entry) => entry.record.exitCode === 3)).toBeUndefined();
  });

  it('skips a damaged or foreign record with a warning naming it; other files in _runs/ are not records', async () => {
    store = open();
    await writeRunRecord(store, record('2026-11-26T05:00:00.000Z'));
    await store.putText('_runs/2026-11-26T06-00-00.000Z.json', '{"exitCode": 0, "sta');
    await store.putText('_runs/2026-11-26T07-00-00.000Z.json', '{"hello": "world"}\n');
    await store.putText('_runs/README.md', 'our notes\n');
    const captured = captureLogger('warn');
    const read: StoredRunRecord[] = await readRunRecords(store, 5, { logger: captured.logger });
    expect(read.map((entry) => entry.recordedAt)).toEqual(['2026-11-26T05:00:00.000Z']);
    const warnings = captured.records().map((line) => String(line.msg));
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain(`${store.where('_runs/2026-11-26T07-00-00.000Z.json')} is not a run record of bulk-extract`);
    expect(warnings[1]).toContain(`${store.where('_runs/2026-11-26T06-00-00.000Z.json')} is not valid JSON (damaged or truncated): not a run record of bulk-extract.`);
    expect(warnings.every((text) => text.endsWith('Skipped; delete it, or move it out of _runs/.'))).toBe(true);
  });
});

describe('recordRun (the CLI\'s end of a run)', () => {
  const BASE_URL = 'http://127.0.0.1:9/api/v1/projects/demo';
  const job = (out: string) => loadJob(tempDir(), { baseUrl: BASE_URL, out, streams: [{ resource: 'events' }] });
  const refusal = (code: string) => record(null, { exitCode: 2, state: 'refused', reason: { code, message: 'no' } });

  it('writes a run\'s record into its output', async () => {
    const out = join(tempDir(), 'out');
    const key = await recordRun(job(out), record('2026-11-26T05:00:00.000Z'), { logger: silentLogger });
    expect(key).toBe('_runs/2026-11-26T05-00-00.000Z.json');
    expect(JSON.parse(readFileSync(join(out, key ?? ''), 'utf8'))).toEqual(record('2026-11-26T05:00:00.000Z'));
  });

  it('records a refusal only in an output that holds an export, and never one of the command or the job file', async () => {
    const out = join(tempDir(), 'out');
    expect(await recordRun(job(out), refusal('E_LOCKED'), { logger: silentLogger })).toBeUndefined();
    expect(existsSync(out), 'a refusal creates no folder').toBe(false);
    const store = createLocalStore(out, silentLogger);
    await store.putText('_manifest.json', '{}');
    expect(await recordRun(job(out), refusal('E_CONFIG'), { logger: silentLogger })).toBeUndefined();
    expect(await recordRun(job(out), refusal('E_USAGE'), { logger: silentLogger })).toBeUndefined();
    const now = () => Date.parse('2026-11-26T05:00:00.000Z');
    expect(await recordRun(job(out), refusal('E_LOCKED'), { logger: silentLogger, now })).toBe(
      '_runs/2026-11-26T05-00-00.000Z.json',
    );
    expect((await readRunRecords(store)).map((entry) => entry.record.reason?.code)).toEqual(['E_LOCKED']);
  });

  it('a record it cannot write is a warning, not a failure', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'out'), 'a file, not a folder');
    const captured = captureLogger('warn');
    const written = await recordRun(job(join(dir, 'out')), record('2026-11-26T05:00:00.000Z'), { logger: captured.logger });
    expect(written).toBeUndefined();
    expect(captured.records().map((line) => line.msg)).toEqual([
      expect.stringContaining('the run\'s record was not written to _runs/ (the run\'s outcome stands): '),
    ]);
  });

  it('writes into an s3:// output through the bucket', async () => {
    const dir = tempDir();
    const url = `s3://${server.bucket}/jobs/recorded`;
    const s3 = { endpoint: server.endpoint, forcePathStyle: true, staging: join(dir, 'staging') };
    const config = loadJob(dir, { baseUrl: BASE_URL, out: url, streams: [{ resource: 'events' }], output: { s3 } });
    const failed = record('2026-11-26T06:00:00.000Z', FAILED);
    const worker = { index: 3, count: 4 };
    const key = '_runs/2026-11-26T06-00-00.000Z.worker-3-of-4.json';
    // A job's store takes its credentials from the SDK's chain, as a run in production does: the environment.
    for (const [name, value] of Object.entries(S3RVER_CREDENTIALS)) vi.stubEnv(name, value);
    try {
      expect(await recordRun(config, failed, { logger: silentLogger, worker })).toBe(key);
    } finally {
      vi.unstubAllEnvs();
    }
    const store = createS3Store({
      url, endpoint: server.endpoint, forcePathStyle: true, logger: silentLogger, ...S3RVER_ACCESS,
    });
    try {
      expect(await readRunRecords(store)).toEqual([{ key, recordedAt: '2026-11-26T06:00:00.000Z', worker, record: failed }]);
    } finally {
      await store.close();
    }
  });

  it('a run object storage refused (its credential, a missing bucket) is not recorded there, and says nothing more', async () => {
    const dir = tempDir();
    const url = `s3://${server.bucket}/jobs/store-refused`;
    const s3 = { endpoint: server.endpoint, forcePathStyle: true, staging: join(dir, 'staging') };
    const config = loadJob(dir, { baseUrl: BASE_URL, out: url, streams: [{ resource: 'events' }], output: { s3 } });
    const store = createS3Store({
      url, endpoint: server.endpoint, forcePathStyle: true, logger: silentLogger, ...S3RVER_ACCESS,
    });
    const captured = captureLogger('debug');
    for (const [name, value] of Object.entries(S3RVER_CREDENTIALS)) vi.stubEnv(name, value);
    try {
      await store.putText('_manifest.json', '{}');
      for (const code of ['E_OUTPUT_AUTH', 'E_OUTPUT_ACCESS']) {
        const failed = record('2026-11-26T05:00:00.000Z', { exitCode: 3, state: 'failed', reason: { code, message: 'refused' } });
        expect(await recordRun(config, failed, { logger: captured.logger })).toBeUndefined();
      }
      expect(await readRunRecords(store)).toEqual([]);
      expect(captured.records()).toEqual([]);
    } finally {
      vi.unstubAllEnvs();
      await store.close();
    }
  });

  it("a folder's E_OUTPUT_ACCESS names one file it may not write: the run is still recorded", async () => {
    const out = join(tempDir(), 'out');
    const store = createLocalStore(out, silentLogger);
    await store.putText('_manifest.json', '{}');
    const failed = record('2026-11-26T05:00:00.000Z', { exitCode: 2, state: 'failed', reason: { code: 'E_OUTPUT_ACCESS', message: 'no' } });
    expect(await recordRun(job(out), failed, { logger: silentLogger })).toBe('_runs/2026-11-26T05-00-00.000Z.json');
  });
});
