import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadConfig } from '../../src/config/load-config.js';
import { verifyStore } from '../../src/export/inspect/verify.js';
import { runJob } from '../../src/export/run/run-job.js';
import { silentLogger } from '../../src/log.js';
import { type DeltaSnapshot, type OutputStore, readDeltaLog } from '../../src/output/index.js';
import { createS3Store } from '../../src/output/s3-store.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { asNumber, type Duck, openDuck } from '../support/export-duckdb.js';
import { removeTempDirs, SIM_ENV, sql, tempDir } from '../support/export-harness.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';
import { downloadAll } from '../support/s3-download.js';
import { S3RVER_ACCESS, S3RVER_ENV, startS3Server, type S3TestServer } from '../support/s3-server.js';

/**
 * The scheduled modes of a Delta table on s3:// (s3rver, with the conditional put the test server
 * adds): an incremental stream run 12 times with items changed between runs (an overwrite, then an
 * append per window; a checkpoint at version 10), and a snapshot stream with keep 2 run 4 times
 * (an overwrite per snapshot; only the newest two versions keep their files). Each version is read
 * through the bucket by the log reader, the last ones by DuckDB over a copy of exactly their files.
 */
const EVENTS = 800;
const T0 = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;
const KEY = 'delta-s3-modes-key-1';

/** Each test changes items of its own simulator. */
const sims: Simulator[] = [];
let s3: S3TestServer;
let duck: Duck;

beforeAll(async () => {
  // The run's S3 client takes its credentials from the environment, as a user's does.
  Object.assign(process.env, S3RVER_ENV);
  s3 = await startS3Server({ bucket: 'lake' });
  duck = await openDuck();
});

afterAll(async () => {
  duck.close();
  await s3.close();
  await Promise.all(sims.map((sim) => sim.close()));
  removeTempDirs();
});

async function setUp(prefix: string, stream: Record<string, unknown>) {
  const sim = await startSimulator({ seed: 47, apiKeys: [KEY], events: EVENTS, assets: 10 });
  sims.push(sim);
  const dir = tempDir('delta-s3-modes-');
  const url = `s3://${s3.bucket}/${prefix}`;
  const file = join(dir, 'job.yaml');
  const output = {
    dir: url,
    table: 'delta',
    formats: ['parquet'],
    shard: { maxRows: 300 },
    s3: { endpoint: s3.endpoint, forcePathStyle: true, staging: join(dir, 'staging') },
  };
  const source = { baseUrl: sim.baseUrl, auth: { type: 'api-key', apiKey: '${SIM_KEY}' } };
  writeFileSync(file, stringify({ source, streams: [{ resource: 'events', partitions: 2, limit: 200, ...stream }], output }));
  const config = loadConfig(file, { ...SIM_ENV, SIM_KEY: KEY });
  const access = { endpoint: s3.endpoint, forcePathStyle: true, logger: silentLogger, ...S3RVER_ACCESS };
  const store = createS3Store({ url, ...access });
  const run = async (clock: FakeClock) => {
    const result = await runJob({ config, logger: silentLogger, clock });
    expect(result.errors).toEqual([]);
    expect(result.state).toBe('complete');
  };
  return { sim, dir, store, run };
}

/** Rows and distinct ids in exactly the files of the version, from a local copy of the bucket. */
async function rowsOf(copy: string, table: DeltaSnapshot): Promise<{ rows: number; ids: number }> {
  const files = table.files.map((file) => sql(join(copy, file.key))).join(', ');
  const row = await duck.one(`SELECT count(*) AS n, count(DISTINCT id) AS ids FROM read_parquet([${files}], hive_partitioning = false)`);
  return { rows: asNumber(row.n), ids: asNumber(row.ids) };
}

async function exists(store: OutputStore, table: DeltaSnapshot): Promise<boolean[]> {
  return Promise.all(table.files.map(async (file) => (await store.size(file.key)) === file.size));
}

describe.concurrent('a Delta table on s3://', () => {
  it('incremental, 12 runs with changes between them: version k is window k; a checkpoint at version 10', { timeout: 120_000 }, async () => {
    const { sim, dir, store, run } = await setUp('incremental', { mode: 'incremental', safetyLag: '1m' });
    const clock = createFakeClock(T0);
    let rows = 0;
    for (let k = 0; k < 12; k++) {
      if (k > 0) {
        const changed = [...new Set([k, 5 * k, 11 * k + 2])];
        sim.update('events', changed, T0 + (k - 1) * 10 * MINUTE + 1000);
        rows += changed.length;
      } else {
        rows += EVENTS;
      }
      await run(clock);
      clock.advance(10 * MINUTE);
      const table = await readDeltaLog(store, 'events');
      expect(table.version).toBe(k);
      expect(table.files.reduce((sum, file) => sum + (file.stats?.numRecords ?? 0), 0)).toBe(rows);
    }
    const latest = await readDeltaLog(store, 'events');
    expect(latest.checkpoint).toBe(10);
    expect(await exists(store, latest)).not.toContain(false);
    expect((await verifyStore(store)).problems).toEqual([]);
    const copy = await downloadAll(store, join(dir, 'copy'));
    expect(await rowsOf(copy, latest)).toEqual({ rows, ids: EVENTS });
  });

  it('snapshot with keep 2, 4 runs: an overwrite each; the files of the newest two versions stay', { timeout: 120_000 }, async () => {
    const { dir, store, run } = await setUp('snapshot', { mode: 'snapshot', keep: 2 });
    const clock = createFakeClock(T0);
    for (let k = 0; k < 4; k++) {
      await run(clock);
      clock.advance(MINUTE);
      expect((await readDeltaLog(store, 'events')).version).toBe(k);
    }
    const versions = await Promise.all([0, 1, 2, 3].map((asOf) => readDeltaLog(store, 'events', { asOf })));
    expect(await Promise.all(versions.map(async (table) => (await exists(store, table)).every(Boolean)))).toEqual([
      false,
      false,
      true,
      true,
    ]);
    expect((await verifyStore(store)).problems).toEqual([]);
    const copy = await downloadAll(store, join(dir, 'copy'));
    for (const table of versions.slice(2)) expect(await rowsOf(copy, table)).toEqual({ rows: EVENTS, ids: EVENTS });
  });
});
