import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
type Resource = 'assets' | 'events';
import type { Manifest } from '../../src/export/state/manifest.js';
import { runJob, type RunResult } from '../../src/export/run/run-job.js';
import { silentLogger } from '../../src/log.js';
import {
  ASSET_ID_BASE,
  ASSET_ID_STRIDE,
  EVENT_ID_BASE,
  EVENT_ID_STRIDE,
  type Simulator,
  startSimulator,
} from '../../src/simulator/index.js';
import {
  asNumber,
  type Duck,
  expectedDuckColumns,
  ndjsonAt,
  openDuck,
  parquetAt,
  parquetItems,
} from '../support/export-duckdb.js';
import {
  closedFormIdSum,
  type JobSpec,
  loadJob,
  removeTempDirs,
  SIM_KEY,
  sha256File,
  sql,
  tempDir,
} from '../support/export-harness.js';
import { createFakeClock } from '../support/fake-clock.js';

const EVENTS = 12_000;
const ASSETS = 4_000;
const COUNTS: Record<'assets' | 'events', number> = { events: EVENTS, assets: ASSETS };
const ID_BASE: Record<'assets' | 'events', [number, number]> = {
  events: [EVENT_ID_BASE, EVENT_ID_STRIDE],
  assets: [ASSET_ID_BASE, ASSET_ID_STRIDE],
};

type Item = Record<string, unknown>;

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ assets: ASSETS, events: EVENTS, seed: 11, apiKeys: [SIM_KEY], recordRequests: true });
});

afterAll(async () => {
  await sim.close();
});

afterEach(removeTempDirs);

function indexOf(resource: Resource, id: number): number {
  const [base, stride] = ID_BASE[resource];
  const index = (id - base) / stride;
  if (!Number.isInteger(index) || index < 0) throw new Error(`${id} is not a ${resource} id of the simulator`);
  return index;
}

function datasetItem(simulator: Simulator, resource: Resource, index: number): Item {
  return { ...simulator.dataset[resource].item(index) };
}

/** Runs a job to completion in-process; the clock is fake, so retry back-off never sleeps. */
async function exportWith(
  spec: Omit<JobSpec, 'baseUrl' | 'out'>,
  out: string,
  simulator = sim,
): Promise<RunResult> {
  const config = loadJob(join(out, '..'), { ...spec, baseUrl: simulator.baseUrl, out });
  const result = await runJob({ config, logger: silentLogger, clock: createFakeClock() });
  expect(result.errors).toEqual([]);
  expect(result.state).toBe('complete');
  return result;
}

function newOut(tracked = true): string {
  return join(tempDir('bulk-extract-export-', tracked), 'out');
}

function readManifest(out: string): Manifest {
  return JSON.parse(readFileSync(join(out, '_manifest.json'), 'utf8')) as Manifest;
}

/** Shard files under <out>/<stream>/, relative to out, `/`-separated. */
function shardFiles(out: string, stream: string): string[] {
  const files: string[] = [];
  for (const part of readdirSync(join(out, stream))) {
    for (const name of readdirSync(join(out, stream, part))) files.push(`${stream}/${part}/${name}`);
  }
  return files.sort();
}

function ndjsonLines(path: string): string[] {
  const raw = readFileSync(path);
  const text = (path.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text.slice(0, -1).split('\n');
}

/** Every NDJSON line of a stream parsed; checks each equals the dataset item of its id, each id once. */
function expectNdjsonEqualsDataset(simulator: Simulator, out: string, stream: string, resource: Resource,
  expected: readonly number[]): void {
  const seen = new Set<number>();
  let mismatches = 0;
  for (const file of shardFiles(out, stream)) {
    if (!/\.ndjson(\.gz)?$/.test(file)) continue;
    for (const line of ndjsonLines(join(out, file))) {
      const item = JSON.parse(line) as Item;
      const index = indexOf(resource, item.id as number);
      expect(seen.has(index), `index ${index} twice`).toBe(false);
      seen.add(index);
      const want = datasetItem(simulator, resource, index);
      if (mismatches < 3 && !isDeepStrictEqual(item, want)) {
        mismatches++;
        expect(item).toStrictEqual(want);
      }
    }
  }
  expect(mismatches).toBe(0);
  expect([...seen].sort((a, b) => a - b)).toEqual(expected);
}

/** Every manifest file exists with its rows, bytes and sha256; every shard on disk is listed. */
async function expectManifestMatchesDisk(duck: Duck, out: string, streams: readonly string[]): Promise<Manifest> {
  const manifest = readManifest(out);
  const onDisk = streams.flatMap((stream) => shardFiles(out, stream)).sort();
  expect(onDisk.filter((file) => file.endsWith('.inprogress'))).toEqual([]);
  expect(manifest.files.map((file) => file.path).sort()).toEqual(onDisk);
  for (const file of manifest.files) {
    const path = join(out, file.path);
    expect(file.bytes, file.path).toBe(statSync(path).size);
    expect(file.sha256, file.path).toBe(sha256File(path));
    const rows =
      file.format === 'parquet'
        ? asNumber((await duck.one(`SELECT count(*) AS c FROM ${parquetAt(path)}`)).c)
        : ndjsonLines(path).length;
    expect(file.rows, file.path).toBe(rows);
    expect(file.path).toBe(`${file.stream}/part=${file.m}-of-${file.n}/${String(file.seq).padStart(6, '0')}.${file.format === 'parquet' ? 'parquet' : file.path.endsWith('.gz') ? 'ndjson.gz' : 'ndjson'}`);
  }
  return manifest;
}

async function countSumDistinct(duck: Duck, from: string): Promise<{ count: number; sum: bigint; distinct: number }> {
  const row = await duck.one(`SELECT count(*) AS c, sum(id) AS s, count(DISTINCT id) AS d FROM ${from}`);
  expect(typeof row.s).toBe('bigint');
  return { count: asNumber(row.c), sum: row.s as bigint, distinct: asNumber(row.d) };
}

function allIndexes(count: number): number[] {
  return Array.from({ length: count }, (_, i) => i);
}

/** The first index of the dataset whose metadata has `key`. */
function indexWithMetadataKey(resource: Resource, key: string): number {
  for (let i = 0; i < COUNTS[resource]; i++) {
    const metadata = datasetItem(sim, resource, i).metadata as Record<string, string> | undefined;
    if (metadata !== undefined && key in metadata) return i;
  }
  throw new Error(`no ${resource} item with metadata key ${key}`);
}

const CASES: [Resource, number][] = [
  ['events', 1],
  ['events', 3],
  ['events', 10],
  ['assets', 1],
  ['assets', 3],
  ['assets', 10],
];

describe.each(CASES)('export of %s with %i partition(s), parquet + ndjson', (resource, n) => {
  const count = COUNTS[resource];
  const [base, stride] = ID_BASE[resource];
  let out: string;
  let dir: string;
  let duck: Duck;
  let result: RunResult;
  const parquet = () => parquetAt(`${out}/${resource}/*/*.parquet`);

  beforeAll(async () => {
    out = newOut(false);
    dir = join(out, '..');
    duck = await openDuck();
    result = await exportWith({ streams: [{ resource, partitions: n, limit: 500 }], output: { formats: ['parquet', 'ndjson'] } }, out);
  });

  afterAll(() => {
    duck.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('completes with _SUCCESS, one folder per partition and a complete manifest', async () => {
    expect(existsSync(join(out, '_SUCCESS'))).toBe(true);
    expect(readdirSync(join(out, resource)).sort()).toEqual(
      Array.from({ length: n }, (_, i) => `part=${i + 1}-of-${n}`).sort(),
    );
    const manifest = await expectManifestMatchesDisk(duck, out, [resource]);
    expect(manifest.state).toBe('complete');
    expect(manifest.streams[resource]).toMatchObject({ rows: count, done: true, partitions: n });
    expect(result.manifest.files.length).toBe(manifest.files.length);
    const byFormat = (format: string) =>
      manifest.files.filter((f) => f.format === format).reduce((sum, f) => sum + f.rows, 0);
    expect(byFormat('parquet')).toBe(count);
    expect(byFormat('ndjson')).toBe(count);
  });

  it('parquet: count, sum(id) and count(distinct id) equal the dataset', async () => {
    expect(await countSumDistinct(duck, parquet())).toEqual({
      count,
      sum: closedFormIdSum(base, stride, count),
      distinct: count,
    });
  });

  it('ndjson: count, sum(id) and count(distinct id) equal the dataset', async () => {
    expect(await countSumDistinct(duck, ndjsonAt(`${out}/${resource}/*/*.ndjson`))).toEqual({
      count,
      sum: closedFormIdSum(base, stride, count),
      distinct: count,
    });
  });

  it('parquet column types follow the profile (DESCRIBE)', async () => {
    const described = await duck.rows(`DESCRIBE SELECT * FROM ${parquet()}`);
    expect(described.map((row) => ({ name: row.column_name, type: row.column_type }))).toEqual(
      expectedDuckColumns(resource),
    );
    expect(described.find((row) => row.column_name === 'id')?.column_type).toBe('BIGINT');
    expect(described.find((row) => row.column_name === 'createdTime')?.column_type).toBe('TIMESTAMP WITH TIME ZONE');
    expect(described.find((row) => row.column_name === 'metadata')?.column_type).toBe('MAP(VARCHAR, VARCHAR)');
    expect(described.find((row) => row.column_name === 'extra')?.column_type).toBe('VARCHAR');
    if (resource === 'events') {
      expect(described.find((row) => row.column_name === 'assetIds')?.column_type).toBe('BIGINT[]');
    }
  });

  it.each(['温度', 'key with "quotes"', 'site', 'ключ'])('metadata[%j] of an item that has it', async (key) => {
    const index = indexWithMetadataKey(resource, key);
    const item = datasetItem(sim, resource, index);
    const row = await duck.one(`SELECT metadata[${sql(key)}] AS v FROM ${parquet()} WHERE id = ${String(item.id)}`);
    expect(row.v).toBe((item.metadata as Record<string, string>)[key]);
  });

  it('every parquet row equals the dataset item of its id (absent fields NULL, extra fields in extra)', async () => {
    const items = await parquetItems(duck, resource, `${out}/${resource}/*/*.parquet`);
    expect(items.length).toBe(count);
    const seen = new Set<number>();
    let mismatches = 0;
    for (const item of items) {
      const index = indexOf(resource, item.id as number);
      seen.add(index);
      const want = datasetItem(sim, resource, index);
      if (mismatches < 3 && !isDeepStrictEqual(item, want)) {
        mismatches++;
        expect(item).toStrictEqual(want);
      }
    }
    expect(mismatches).toBe(0);
    expect(seen.size).toBe(count);
  });

  if (resource === 'events') {
    it('endTime is NULL exactly for the events without endTime', async () => {
      const rows = await duck.rows(`SELECT id FROM ${parquet()} WHERE endTime IS NULL ORDER BY id`);
      const want = allIndexes(count).filter((i) => datasetItem(sim, 'events', i).endTime === undefined);
      expect(want.length).toBeGreaterThan(0);
      expect(rows.map((row) => indexOf('events', asNumber(row.id)))).toEqual(want);
    });

    it('subtype, description and dataSetId are NULL exactly where the dataset lacks them', async () => {
      for (const field of ['subtype', 'description', 'dataSetId']) {
        const rows = await duck.rows(`SELECT id FROM ${parquet()} WHERE "${field}" IS NULL ORDER BY id`);
        const want = allIndexes(count).filter((i) => datasetItem(sim, 'events', i)[field] === undefined);
        expect(want.length, field).toBeGreaterThan(0);
        expect(rows.map((row) => indexOf('events', asNumber(row.id))), field).toEqual(want);
      }
    });
  } else {
    it('labels is a list of externalIds, exactly for the assets that have them; geoLocation is kept in extra as JSON', async () => {
      const rows = await duck.rows(`SELECT id, to_json(labels)::VARCHAR AS labels FROM ${parquet()} WHERE labels IS NOT NULL ORDER BY id`);
      const labelled = allIndexes(count).filter((i) => datasetItem(sim, 'assets', i).labels !== undefined);
      expect(labelled.length).toBeGreaterThan(0);
      expect(rows.map((row) => indexOf('assets', asNumber(row.id)))).toEqual(labelled);
      for (const row of rows) {
        const want = datasetItem(sim, 'assets', indexOf('assets', asNumber(row.id)));
        const externalIds = (want.labels as { externalId: string }[]).map((label) => label.externalId);
        expect(JSON.parse(String(row.labels))).toEqual(externalIds);
      }
      const extras = await duck.rows(`SELECT id, extra FROM ${parquet()} WHERE extra IS NOT NULL ORDER BY id`);
      const located = allIndexes(count).filter((i) => datasetItem(sim, 'assets', i).geoLocation !== undefined);
      expect(located.length).toBeGreaterThan(0);
      expect(extras.map((row) => indexOf('assets', asNumber(row.id)))).toEqual(located);
      for (const row of extras) {
        const want = datasetItem(sim, 'assets', indexOf('assets', asNumber(row.id)));
        expect(JSON.parse(String(row.extra))).toEqual({ geoLocation: want.geoLocation });
      }
    });

    it('parentId is NULL exactly for the roots', async () => {
      const rows = await duck.rows(`SELECT id FROM ${parquet()} WHERE parentId IS NULL ORDER BY id`);
      const roots = allIndexes(count).filter((i) => datasetItem(sim, 'assets', i).parentId === undefined);
      expect(roots.length).toBeGreaterThan(0);
      expect(rows.map((row) => indexOf('assets', asNumber(row.id)))).toEqual(roots);
    });
  }

  it('ndjson lines equal the simulator items exactly', () => {
    expectNdjsonEqualsDataset(sim, out, resource, resource, allIndexes(count));
  });
});

describe('ndjson with gzip', () => {
  it('writes .ndjson.gz shards that DuckDB reads and that gunzip to the items exactly', async () => {
    const out = newOut();
    await exportWith(
      { streams: [{ resource: 'events', partitions: 3, limit: 700 }], output: { formats: ['ndjson'], ndjson: { compression: 'gzip' } } },
      out,
    );
    const files = shardFiles(out, 'events');
    expect(files.length).toBeGreaterThanOrEqual(3);
    for (const file of files) expect(file).toMatch(/^events\/part=\d-of-3\/\d{6}\.ndjson\.gz$/);
    const duck = await openDuck();
    try {
      expect(await countSumDistinct(duck, ndjsonAt(`${out}/events/*/*.ndjson.gz`))).toEqual({
        count: EVENTS,
        sum: closedFormIdSum(EVENT_ID_BASE, EVENT_ID_STRIDE, EVENTS),
        distinct: EVENTS,
      });
      await expectManifestMatchesDisk(duck, out, ['events']);
    } finally {
      duck.close();
    }
    expectNdjsonEqualsDataset(sim, out, 'events', 'events', allIndexes(EVENTS));
    expect(existsSync(join(out, '_SUCCESS'))).toBe(true);
  });
});

describe('a filtered stream', () => {
  const since = '2022-01-01T00:00:00Z';
  const filter = { type: 'alarm', minLastUpdatedTime: Date.parse(since) };

  it('exports exactly the items that match type=alarm and minLastUpdatedTime (ISO)', async () => {
    const out = newOut();
    const before = sim.requests().length;
    await exportWith(
      {
        streams: [{ resource: 'events', name: 'alarms', partitions: 3, limit: 200, filter: { type: 'alarm', minLastUpdatedTime: since } }],
        output: { formats: ['parquet', 'ndjson'] },
      },
      out,
    );
    const want = allIndexes(EVENTS).filter((i) => sim.dataset.events.matches(i, filter));
    expect(want.length).toBeGreaterThan(100);
    expect(want.length).toBeLessThan(EVENTS / 4);

    const duck = await openDuck();
    try {
      const rows = await duck.rows(`SELECT id FROM ${parquetAt(`${out}/alarms/*/*.parquet`)} ORDER BY id`);
      expect(rows.map((row) => indexOf('events', asNumber(row.id)))).toEqual(want);
      await expectManifestMatchesDisk(duck, out, ['alarms']);
    } finally {
      duck.close();
    }
    expectNdjsonEqualsDataset(sim, out, 'alarms', 'events', want);

    // Every request of a chain repeats the first one's params (the ISO time sent as epoch ms), with
    // maxLastUpdatedTime pinned just before the run's start (the checkpoint's window), in every partition.
    const requests = sim.requests().slice(before).filter((r) => r.route === 'GET /events' && r.status === 200);
    const saved = JSON.parse(readFileSync(join(out, '_checkpoint.json'), 'utf8')) as {
      streams: Record<string, { window: { until: number } }>;
    };
    const pin = String((saved.streams.alarms?.window.until ?? Number.NaN) - 1);
    for (let m = 1; m <= 3; m++) {
      const chain = requests.filter((r) => r.params.some(([k, v]) => k === 'partition' && v === `${m}/3`));
      expect(chain.length).toBeGreaterThan(0);
      for (const request of chain) {
        expect(request.params.filter(([key]) => key !== 'cursor')).toEqual([
          ['limit', '200'],
          ['type', 'alarm'],
          ['minLastUpdatedTime', String(Date.parse(since))],
          ['maxLastUpdatedTime', pin],
          ['partition', `${m}/3`],
        ]);
      }
      expect(chain[0]?.params.some(([key]) => key === 'cursor')).toBe(false);
      expect(chain.slice(1).every((r) => r.params.some(([key]) => key === 'cursor'))).toBe(true);
    }
  });
});

describe('shard rotation', () => {
  it('closes shards at the page boundary past maxRows, names them 000000.., lists them all in the manifest', async () => {
    const out = newOut();
    const limit = 100;
    const maxRows = 500;
    const result = await exportWith(
      {
        streams: [{ resource: 'events', partitions: 3, limit }],
        output: { formats: ['parquet', 'ndjson'], shard: { maxRows } },
      },
      out,
    );
    expect(existsSync(join(out, '_SUCCESS'))).toBe(true);
    const duck = await openDuck();
    let manifest: Manifest;
    try {
      manifest = await expectManifestMatchesDisk(duck, out, ['events']);
      expect(await countSumDistinct(duck, parquetAt(`${out}/events/*/*.parquet`))).toEqual({
        count: EVENTS,
        sum: closedFormIdSum(EVENT_ID_BASE, EVENT_ID_STRIDE, EVENTS),
        distinct: EVENTS,
      });
    } finally {
      duck.close();
    }
    for (let m = 1; m <= 3; m++) {
      const names = readdirSync(join(out, 'events', `part=${m}-of-3`)).sort();
      const parquet = names.filter((name) => name.endsWith('.parquet'));
      expect(parquet.length).toBeGreaterThan(3);
      expect(parquet).toEqual(parquet.map((_, seq) => `${String(seq).padStart(6, '0')}.parquet`));
      expect(names.filter((name) => name.endsWith('.ndjson'))).toEqual(
        parquet.map((name) => name.replace('.parquet', '.ndjson')),
      );
      const files = manifest.files.filter((f) => f.m === m && f.format === 'parquet').sort((a, b) => a.seq - b.seq);
      expect(files.map((f) => f.seq)).toEqual(parquet.map((_, seq) => seq));
      files.forEach((file, i) => {
        const last = i === files.length - 1;
        expect(file.rows, file.path).toBeLessThan(maxRows + limit);
        if (!last) expect(file.rows, file.path).toBeGreaterThanOrEqual(maxRows);
        else expect(file.rows, file.path).toBeGreaterThan(0);
        const twin = manifest.files.find((f) => f.m === m && f.seq === file.seq && f.format === 'ndjson');
        expect(twin?.rows).toBe(file.rows);
      });
    }
    expect(manifest.streams.events).toMatchObject({ rows: EVENTS, done: true, files: manifest.files.length });
    expect(result.manifest.state).toBe('complete');
  });

  it('ndjson: maxBytes closes a shard at the first page boundary past it', async () => {
    const out = newOut();
    const maxBytes = 32 * 1024;
    await exportWith(
      { streams: [{ resource: 'events', partitions: 1, limit: 100 }], output: { formats: ['ndjson'], shard: { maxBytes } } },
      out,
    );
    const files = readManifest(out).files.sort((a, b) => a.seq - b.seq);
    expect(files.length).toBeGreaterThan(10);
    expect(files.reduce((sum, f) => sum + f.rows, 0)).toBe(EVENTS);
    files.slice(0, -1).forEach((file) => {
      expect(file.bytes, file.path).toBeGreaterThanOrEqual(maxBytes);
      // A page of 100 events is well under 16 KiB of NDJSON.
      expect(file.bytes, file.path).toBeLessThan(maxBytes + 16 * 1024);
    });
  });

  it.each([1000, 100_000])(
    'parquet (rowGroupRows %i): maxBytes closes a shard near the limit, not several times past it',
    async (rowGroupRows) => {
      const out = newOut();
      const maxBytes = 32 * 1024;
      await exportWith(
        {
          streams: [{ resource: 'events', partitions: 1, limit: 100 }],
          output: { formats: ['parquet'], parquet: { rowGroupRows }, shard: { maxBytes } },
        },
        out,
      );
      const files = readManifest(out).files.sort((a, b) => a.seq - b.seq);
      expect(files.reduce((sum, f) => sum + f.rows, 0)).toBe(EVENTS);
      // The whole export is ~450 KiB of Parquet: a 32 KiB limit must give many shards, none of them huge.
      expect(files.length).toBeGreaterThan(5);
      for (const file of files) expect(file.bytes, file.path).toBeLessThan(2 * maxBytes);
    },
  );

  it('the manifest schema lists the profile columns of each parquet resource', async () => {
    const out = newOut();
    await exportWith(
      {
        streams: [
          { resource: 'events', partitions: 2, limit: 1000 },
          { resource: 'assets', partitions: 2, limit: 1000 },
        ],
        output: { formats: ['parquet'] },
      },
      out,
    );
    const manifest = readManifest(out);
    const duck = await openDuck();
    try {
      for (const resource of ['events', 'assets'] as const) {
        const columns = manifest.schema[resource];
        expect(columns?.map((c) => c.name)).toEqual(expectedDuckColumns(resource).map((c) => c.name));
        const described = await duck.rows(`DESCRIBE SELECT * FROM ${parquetAt(`${out}/${resource}/*/*.parquet`)}`);
        expect(columns?.map((c) => c.name)).toEqual(described.map((row) => row.column_name));
        expect(columns?.find((c) => c.name === 'id')?.type).toBe('INT64');
        expect(columns?.find((c) => c.name === 'metadata')?.type).toMatch(/^MAP<STRING, ?STRING>$/);
        expect(columns?.find((c) => c.name === 'createdTime')?.type).toMatch(/TIMESTAMP\(MILLIS, ?UTC\)/);
      }
      expect(manifest.schema.events?.find((c) => c.name === 'assetIds')?.type).toBe('LIST<INT64>');
    } finally {
      duck.close();
    }
  });
});

describe('with faults', () => {
  let faulty: Simulator;
  const events = 8_000;
  const assets = 3_000;

  beforeAll(async () => {
    faulty = await startSimulator({
      assets,
      events,
      seed: 5,
      apiKeys: [SIM_KEY],
      faults: { rate429: 0.2, rate5xx: 0.05, resetRate: 0.02, truncateRate: 0.02, shortPageRate: 0.2 },
    });
  });

  afterAll(async () => {
    await faulty.close();
  });

  it('429s, 5xx, resets, truncated bodies and short pages still give exact output', async () => {
    const out = newOut();
    const result = await exportWith(
      {
        streams: [
          { resource: 'events', partitions: 4, limit: 100 },
          { resource: 'assets', partitions: 3, limit: 100 },
        ],
        output: { formats: ['parquet', 'ndjson'], shard: { maxRows: 1000 } },
        retry: { baseDelayMs: 1, maxDelayMs: 5 },
      },
      out,
      faulty,
    );
    const faults = faulty.stats().faults;
    for (const kind of ['429', 'reset', 'truncate', 'short-page'] as const) {
      expect(faults[kind] ?? 0, kind).toBeGreaterThan(0);
    }
    expect((faults['500'] ?? 0) + (faults['502'] ?? 0) + (faults['503'] ?? 0) + (faults['504'] ?? 0)).toBeGreaterThan(0);
    expect(result.manifest.retries).toBeGreaterThan(0);

    const duck = await openDuck();
    try {
      for (const [resource, count] of [['events', events], ['assets', assets]] as const) {
        const [base, stride] = ID_BASE[resource];
        const want = { count, sum: closedFormIdSum(base, stride, count), distinct: count };
        expect(await countSumDistinct(duck, parquetAt(`${out}/${resource}/*/*.parquet`)), resource).toEqual(want);
        expect(await countSumDistinct(duck, ndjsonAt(`${out}/${resource}/*/*.ndjson`)), resource).toEqual(want);
      }
      await expectManifestMatchesDisk(duck, out, ['events', 'assets']);
    } finally {
      duck.close();
    }
    expectNdjsonEqualsDataset(faulty, out, 'events', 'events', allIndexes(events));
    expectNdjsonEqualsDataset(faulty, out, 'assets', 'assets', allIndexes(assets));
    expect(existsSync(join(out, '_SUCCESS'))).toBe(true);
  });
});
