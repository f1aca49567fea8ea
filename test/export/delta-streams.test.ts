import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadConfig } from '../../src/config/load-config.js';
import { verifyOutput, verifyStore } from '../../src/export/inspect/verify.js';
import { runJob } from '../../src/export/run/run-job.js';
import { silentLogger } from '../../src/log.js';
import { createLocalStore, readDeltaLog } from '../../src/output/index.js';
import { createS3Store } from '../../src/output/s3-store.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { asNumber, type Duck, openDuck } from '../support/export-duckdb.js';
import { removeTempDirs, SIM_ENV, sql, tempDir } from '../support/export-harness.js';
import { downloadAll } from '../support/s3-download.js';
import { S3RVER_ACCESS, S3RVER_ENV, startS3Server, type S3TestServer } from '../support/s3-server.js';
import { createFakeClock } from '../support/fake-clock.js';

/**
 * Every kind of stream as a Delta table, full: the six collections, raw datapoints and the nodes of
 * a view, to a folder and to s3:// (s3rver). Each table's version 0 is read by the log reader and,
 * independently, by DuckDB over exactly the files it names: its key set equals what the same job
 * exports as plain files (each key once), and its rows equal the manifest's.
 */
const STREAMS = [
  { resource: 'assets', partitions: 2, limit: 100 },
  { resource: 'events', partitions: 3, limit: 200 },
  { resource: 'timeseries', partitions: 2, limit: 100 },
  { resource: 'files', partitions: 2, limit: 100 },
  { resource: 'sequences', partitions: 2, limit: 100 },
  { resource: 'relationships', partitions: 2, limit: 100 },
  { resource: 'datapoints', name: 'points', partitions: 2, limit: 100 },
  { resource: 'instances', name: 'nodes', view: { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' }, limit: 200 },
];
/** What identifies a row of each table. */
const KEYS: Record<string, string> = {
  assets: 'id',
  events: 'id',
  timeseries: 'id',
  files: 'id',
  sequences: 'id',
  relationships: 'externalId',
  points: 'timeseriesId, timestamp',
  nodes: 'space, externalId',
};
const KEY = 'delta-streams-key-01';

let sim: Simulator;
let s3: S3TestServer;
let duck: Duck;
/** The same job exported as plain files: what each table must hold. */
let plain: string;

function job(dir: string, outDir: string, table: 'files' | 'delta', s3Settings?: Record<string, unknown>) {
  const file = join(dir, `job-${table}.yaml`);
  const output = { dir: outDir, table, formats: ['parquet'], shard: { maxRows: 400 }, ...(s3Settings === undefined ? {} : { s3: s3Settings }) };
  writeFileSync(file, stringify({ source: { baseUrl: sim.baseUrl, auth: { type: 'api-key', apiKey: '${SIM_KEY}' } }, streams: STREAMS, output }));
  return loadConfig(file, { ...SIM_ENV, SIM_KEY: KEY });
}

async function exportJob(config: ReturnType<typeof job>): Promise<void> {
  const result = await runJob({ config, logger: silentLogger });
  expect(result.errors).toEqual([]);
  expect(result.state).toBe('complete');
}

beforeAll(async () => {
  // The run's S3 client takes its credentials from the environment, as a user's does.
  Object.assign(process.env, S3RVER_ENV);
  sim = await startSimulator({
    seed: 46,
    apiKeys: [KEY],
    assets: 300,
    events: 900,
    timeseries: 30,
    files: 200,
    sequences: 120,
    relationships: 300,
    datapoints: 6000,
    instances: { assets: 250, activities: 10, timeseries: 10, edges: 10 },
    // A frozen clock: the simulator's live series gain no point while the test runs.
    clock: createFakeClock(),
  });
  s3 = await startS3Server({ bucket: 'lake' });
  duck = await openDuck();
  const dir = tempDir('delta-streams-');
  plain = join(dir, 'plain');
  await exportJob(job(dir, plain, 'files'));
}, 120_000);

afterAll(async () => {
  duck.close();
  await s3.close();
  await sim.close();
  removeTempDirs();
});

/** Each stream's table at version 0 against the plain export: same keys, each once; rows as the manifest says. */
async function expectTables(out: string): Promise<void> {
  const store = createLocalStore(out, silentLogger);
  for (const stream of STREAMS) {
    const name = stream.name ?? stream.resource;
    const table = await readDeltaLog(store, name);
    expect(table.version, name).toBe(0);
    expect(table.files.length, name).toBeGreaterThan(0);
    const files = `read_parquet([${table.files.map((file) => sql(join(out, file.key))).join(', ')}], hive_partitioning = false)`;
    const others = `read_parquet(${sql(join(plain, name, '**', '*.parquet'))}, hive_partitioning = false)`;
    const key = KEYS[name]!;
    const counts = await duck.one(`SELECT count(*) AS n, count(DISTINCT (${key})) AS keys FROM ${files}`);
    const expected = await duck.one(`SELECT count(*) AS n FROM ${others}`);
    expect(asNumber(counts.n), name).toBe(asNumber(expected.n));
    expect(asNumber(counts.keys), `${name}: each key once`).toBe(asNumber(counts.n));
    const missing = await duck.one(`SELECT count(*) AS n FROM (SELECT ${key} FROM ${others} EXCEPT SELECT ${key} FROM ${files})`);
    const extra = await duck.one(`SELECT count(*) AS n FROM (SELECT ${key} FROM ${files} EXCEPT SELECT ${key} FROM ${others})`);
    expect([asNumber(missing.n), asNumber(extra.n)], `${name}: keys missing, keys extra`).toEqual([0, 0]);
    expect(table.files.reduce((sum, file) => sum + (file.stats?.numRecords ?? 0), 0), name).toBe(asNumber(counts.n));
  }
}

describe.concurrent('every kind of stream as a Delta table, full', () => {
  it('to a folder', { timeout: 120_000 }, async () => {
    const dir = tempDir('delta-streams-');
    const out = join(dir, 'out');
    await exportJob(job(dir, out, 'delta'));
    await expectTables(out);
    const verified = await verifyOutput(out);
    expect(verified.problems).toEqual([]);
    expect(Object.keys(verified.tables ?? {}).sort()).toEqual(STREAMS.map((s) => s.name ?? s.resource).sort());
  });

  it('to s3:// (s3rver, whose conditional put the test server adds)', { timeout: 120_000 }, async () => {
    const dir = tempDir('delta-streams-');
    const url = `s3://${s3.bucket}/tables`;
    const settings = { endpoint: s3.endpoint, forcePathStyle: true, staging: join(dir, 'staging') };
    const config = job(dir, url, 'delta', settings);
    await exportJob(config);
    const store = createS3Store({
      url,
      endpoint: s3.endpoint,
      forcePathStyle: true,
      logger: silentLogger,
      ...S3RVER_ACCESS,
    });
    expect((await verifyStore(store)).problems).toEqual([]);
    const local = await downloadAll(store, join(dir, 'copy'));
    await expectTables(local);
  });
});
