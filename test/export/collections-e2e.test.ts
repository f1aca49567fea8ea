import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Format } from '../../src/config/job-schema.js';
import { loadConfig } from '../../src/config/load-config.js';
import { runJob } from '../../src/export/run/run-job.js';
import { verifyOutput } from '../../src/export/inspect/verify.js';
import { silentLogger } from '../../src/log.js';
import { type Resource, RESOURCES, resourceSpec } from '../../src/resources/index.js';
import { DATA_SET_ID_BASE, type Simulator } from '../../src/simulator/index.js';
import { openDuck, parquetItems } from '../support/export-duckdb.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';
import {
  describeExit,
  expectedIds,
  expectExactOutput,
  type IdStats,
  type Job,
  listFiles,
  newJob,
  newSimulator,
  runCliWith,
  type StreamSpec,
} from '../support/resume-harness.js';

/**
 * Every collection end to end, through the real export: n = 1, 3 and 10 partitions, both formats
 * read back (Parquet by DuckDB) and every row compared with the simulator's item; a filter only
 * POST takes; two incremental runs; a SIGKILL at a commit and a resume. Each output is exact: every
 * item once, by the collection's key.
 */
const KEY = 'collections-e2e-key-01';
const SIZES = { assets: 400, events: 900, timeseries: 800, files: 800, sequences: 500, relationships: 1000 } as const;
const FORMATS: Format[] = ['parquet', 'ndjson'];
/** After every generated lastUpdatedTime (2019 to 2026), so a first incremental run reads everything. */
const T0 = Date.UTC(2027, 0, 1);

type Item = Record<string, unknown>;

let sim: Simulator;

beforeAll(async () => {
  sim = await newSimulator({ ...SIZES, seed: 71, apiKeys: [KEY], recordRequests: true });
});

function itemsOf(source: Simulator, resource: Resource, wanted: (item: Item) => boolean = () => true): Item[] {
  const set: { count: number; item(index: number): object } = source.dataset[resource];
  const items: Item[] = [];
  for (let index = 0; index < set.count; index++) {
    const item = { ...set.item(index) } as Item;
    if (wanted(item)) items.push(item);
  }
  return items;
}

/** What expectExactOutput checks of these items, by their key. */
function statsOf(resource: Resource, items: readonly Item[]): IdStats {
  const key = resourceSpec(resource).key;
  if (key === 'externalId') {
    return { count: items.length, sum: 0n, min: 0n, max: 0n, keys: items.map((item) => String(item[key])).sort() };
  }
  const ids = items.map((item) => BigInt(item[key] as number));
  return {
    count: ids.length,
    sum: ids.reduce((sum, id) => sum + id, 0n),
    min: ids.reduce((min, id) => (id < min ? id : min), ids[0] ?? 0n),
    max: ids.reduce((max, id) => (id > max ? id : max), 0n),
  };
}

function job(streams: StreamSpec[], prefix: string): Job {
  return newJob(sim, streams, { formats: FORMATS, maxRows: 250 }, prefix);
}

async function runInProcess(target: Job, clock: FakeClock = createFakeClock(T0)) {
  const result = await runJob({ config: loadConfig(target.file, { SIM_KEY: KEY }), logger: silentLogger, clock });
  expect(result.errors).toEqual([]);
  expect(result.state).toBe('complete');
  return result;
}

/**
 * The list requests since `before`, but the one-item page that proves the credential where there
 * is no count to ask for (relationships).
 */
function listRequests(source: Simulator, before: number) {
  return source
    .requests()
    .slice(before)
    .filter((request) => !request.route.endsWith('/aggregate'))
    .filter((request) => !(request.params.length === 1 && request.params[0]?.[0] === 'limit' && request.params[0][1] === '1'));
}

/** Every row of both formats under `folder` equals the item of its key, each expected item once. */
async function expectRows(folder: string, resource: Resource, expected: readonly Item[]): Promise<void> {
  const key = resourceSpec(resource).key;
  const wanted = new Map(expected.map((item) => [item[key], item]));
  const files = listFiles(folder);
  const lines = files
    .filter((file) => file.endsWith('.ndjson'))
    .flatMap((file) => readFileSync(join(folder, file), 'utf8').split('\n').filter((line) => line !== ''));
  const ndjson = lines.map((line) => JSON.parse(line) as Item);
  const duck = await openDuck();
  try {
    const parquet = await parquetItems(duck, resource, `${folder}/**/*.parquet`);
    for (const [format, rows] of [['ndjson', ndjson], ['parquet', parquet]] as const) {
      expect(rows.length, `${resource} ${format} rows`).toBe(wanted.size);
      for (const row of rows) expect(row, `${resource} ${format} ${key} ${String(row[key])}`).toEqual(wanted.get(row[key]));
    }
  } finally {
    duck.close();
  }
}

describe.each(RESOURCES.map((resource) => [resource]))('%s, end to end', (resource) => {
  it.each([1, 3, 10])('n = %i: both formats hold every item exactly once, equal to the platform\'s', async (n) => {
    const target = job([{ resource, partitions: n, limit: 97 }], `e2e-${resource}-${n}`);
    const result = await runInProcess(target);
    expect(result.manifest.streams[resource]).toMatchObject({ key: resourceSpec(resource).key, rows: SIZES[resource] });
    await expectExactOutput(target.out, [
      { name: resource, resource, partitions: n, formats: FORMATS, ids: expectedIds(sim, resource) },
    ]);
    await expectRows(join(target.out, resource), resource, itemsOf(sim, resource));
    expect((await verifyOutput(target.out)).problems).toEqual([]);
  });

  it('a filter only POST takes (data sets by externalId and by id): listed by POST, exactly the matching items', async () => {
    const dataSets = [DATA_SET_ID_BASE + 1, DATA_SET_ID_BASE + 2];
    const filter = { dataSetIds: ['DS-1', DATA_SET_ID_BASE + 2] };
    const target = job([{ resource, partitions: 3, limit: 61, filter }], `e2e-${resource}-filter`);
    const before = sim.requests().length;
    await runInProcess(target);
    const routes = new Set(listRequests(sim, before).map((request) => request.route));
    expect(routes).toContain(`POST /${resource}/list`);
    expect(routes).not.toContain(`GET /${resource}`);
    const expected = itemsOf(sim, resource, (item) => dataSets.includes(item.dataSetId as number));
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(SIZES[resource]);
    await expectExactOutput(target.out, [
      { name: resource, resource, partitions: 3, formats: FORMATS, ids: statsOf(resource, expected) },
    ]);
    await expectRows(join(target.out, resource), resource, expected);
  });

  it('incremental: the first run reads everything, the second exactly the items updated since', async () => {
    const stream: StreamSpec = { resource, mode: 'incremental', safetyLag: '1m', partitions: 3, limit: 83 };
    // Updates change the data: this test has a simulator of its own.
    const own = await newSimulator({ ...SIZES, seed: 71, apiKeys: [KEY], recordRequests: true });
    const target = newJob(own, [stream], { formats: FORMATS, maxRows: 250 }, `e2e-${resource}-incremental`);
    const clock = createFakeClock(T0);
    await runInProcess(target, clock);
    const runs = () => readdirSync(join(target.out, resource)).filter((name) => name.startsWith('run=')).sort();
    expect(runs()).toHaveLength(1);
    await expectRows(join(target.out, resource, runs()[0]!), resource, itemsOf(own, resource));

    // Update a seventh of the items after the first run's window; the second run reads them alone.
    const updated = Array.from({ length: Math.floor(SIZES[resource] / 7) }, (_, k) => k * 7);
    own.update(resource, updated, T0 + 1000);
    clock.advance(15 * 60_000);
    const before = own.requests().length;
    await runInProcess(target, clock);
    const lists = listRequests(own, before);
    // Time series, sequences and relationships have no time filter on GET: their window goes by POST.
    const byPost = resourceSpec(resource).filters.find((filter) => filter.key === 'minLastUpdatedTime')?.via === 'body';
    expect(new Set(lists.map((request) => request.route))).toEqual(new Set([byPost ? `POST /${resource}/list` : `GET /${resource}`]));
    expect(runs()).toHaveLength(2);
    const wanted = new Set(updated);
    const changed = itemsOf(own, resource).filter((_, index) => wanted.has(index));
    await expectRows(join(target.out, resource, runs()[1]!), resource, changed);
    expect((await verifyOutput(target.out)).problems).toEqual([]);
  });

  it('SIGKILL at a commit, then a resume: the output is exact', async () => {
    const target = job([{ resource, partitions: 3, limit: 50 }], `e2e-${resource}-kill`);
    const env = { SIM_KEY: KEY };
    const killed = await runCliWith(['run', '--config', target.file, '--log-level', 'warn'], {
      cwd: target.dir,
      env: { ...env, BULK_EXTRACT_CRASH_AT: 'after-shard-rename:3' },
    });
    expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
    const resumed = await runCliWith(['run', '--config', target.file, '--log-level', 'warn'], { cwd: target.dir, env });
    expect(resumed.code, describeExit(resumed)).toBe(0);
    await expectExactOutput(target.out, [
      { name: resource, resource, partitions: 3, formats: FORMATS, ids: expectedIds(sim, resource) },
    ]);
    await expectRows(join(target.out, resource), resource, itemsOf(sim, resource));
  });
});
