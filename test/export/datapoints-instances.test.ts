import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { verifyOutput } from '../../src/export/inspect/verify.js';
import { runJob } from '../../src/export/run/run-job.js';
import { silentLogger } from '../../src/log.js';
import { createLocalStore, readDeltaLog } from '../../src/output/index.js';
import { MIN_POINT_TIME } from '../../src/resources/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { expectedAggregateRows, expectedRaw, expectPoints, expectRows, keyOf, writePointsJob } from '../support/datapoints-export.js';
import { openDuck } from '../support/export-duckdb.js';
import { createFakeClock } from '../support/fake-clock.js';
import { captureLogger } from '../support/log-capture.js';
import { describeExit, newSimulator, readCheckpoint, runCliWith, tempDir } from '../support/resume-harness.js';

/**
 * Time series that live in the data model, named by `timeseries: {instanceIds: [...]}`: their
 * points read by instanceId through the real simulator (whose CogniteTimeSeries node CTS-i is
 * series i), read back with DuckDB and compared point by point with the simulator's generator;
 * an instanceId the platform does not know is skipped and named, as an unknown id is; a run
 * killed after a shard commit resumes each series from its last committed point, exactly. The
 * rows of such a stream (and only of such a stream) carry the node's key, `instanceSpace` and
 * `instanceExternalId`, in both formats, in a Delta table too, and verify matches the series the
 * checkpoint holds by instanceId against them.
 */
const KEY = 'datapoints-instances-key-1';
const SERIES = 60;
const NODES = 40;
const T0 = Date.UTC(2026, 0, 1);

let sim: Simulator;

beforeAll(async () => {
  sim = await newSimulator({
    seed: 28,
    timeseries: SERIES,
    datapoints: 40_000,
    instances: { assets: 10, activities: 0, timeseries: NODES, edges: 0 },
    apiKeys: [KEY],
    // Frozen at T0, when the runs start: the live series' points end there.
    clock: createFakeClock(T0),
  });
});

/** The instanceId of series `index`: the key of its CogniteTimeSeries node. */
function instanceIdOf(index: number): { space: string; externalId: string } {
  const instanceId = sim.dataset.timeseries.item(index).instanceId;
  if (instanceId === undefined) throw new Error(`series ${index} is no data-model node`);
  return instanceId;
}

describe('datapoints of series named by instanceId', () => {
  it('an explicit list, one key unknown: the others\' points exact in both formats; the unknown one skipped, named', async () => {
    const known = [3, 8, 16, 21, 29, 33];
    const unknown = { space: 'sp_nowhere', externalId: instanceIdOf(3).externalId };
    const instanceIds = [...known.slice(0, 3).map(instanceIdOf), unknown, ...known.slice(3).map(instanceIdOf)];
    const dir = tempDir('dp-instances');
    const out = join(dir, 'out');
    const file = writePointsJob(join(dir, 'job.yaml'), {
      baseUrl: sim.baseUrl,
      out,
      streams: [{ resource: 'datapoints', name: 'points', partitions: 2, timeseries: { instanceIds } }],
    });
    const log = captureLogger('info');
    const config = loadConfig(file, { SIM_KEY: KEY });
    const result = await runJob({ config, logger: log.logger, clock: createFakeClock(T0) });
    expect(result.errors).toEqual([]);
    expect(result.state).toBe('complete');

    const warnings = log.records().filter((record) => record.level === 40 && /does not know/.test(String(record.msg)));
    expect(warnings.flatMap((record) => record.series as unknown[])).toEqual([{ instanceId: unknown }]);
    expect(result.manifest.streams.points?.unknownSeries).toEqual([{ instanceId: unknown }]);
    const duck = await openDuck();
    try {
      await expectPoints(duck, join(out, 'points'), expectedRaw(sim, known, { start: MIN_POINT_TIME, end: T0 }, {}, true));
      const types = await duck.rows(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${join(out, 'points')}/**/*.parquet'))`);
      expect(types.slice(0, 5)).toEqual([
        { column_name: 'timeseriesId', column_type: 'BIGINT' },
        { column_name: 'externalId', column_type: 'VARCHAR' },
        { column_name: 'instanceSpace', column_type: 'VARCHAR' },
        { column_name: 'instanceExternalId', column_type: 'VARCHAR' },
        { column_name: 'timestamp', column_type: 'TIMESTAMP WITH TIME ZONE' },
      ]);
    } finally {
      duck.close();
    }
    const columns = result.manifest.streams.points?.columns?.map((column) => column.name);
    expect(columns?.slice(0, 5)).toEqual(['timeseriesId', 'externalId', 'instanceSpace', 'instanceExternalId', 'timestamp']);
    expect((await verifyOutput(out)).problems).toEqual([]);
  });

  it('a stream of the same series by ids keeps its columns: no node key in its rows or its manifest', async () => {
    const indexes = [3, 8, 16];
    const dir = tempDir('dp-instances-ids');
    const out = join(dir, 'out');
    const ids = indexes.map((index) => sim.dataset.timeseries.idOf(index));
    const file = writePointsJob(join(dir, 'job.yaml'), {
      baseUrl: sim.baseUrl,
      out,
      streams: [{ resource: 'datapoints', name: 'points', partitions: 1, timeseries: { ids } }],
    });
    const config = loadConfig(file, { SIM_KEY: KEY });
    const result = await runJob({ config, logger: captureLogger('info').logger, clock: createFakeClock(T0) });
    expect(result.state).toBe('complete');
    const duck = await openDuck();
    try {
      await expectPoints(duck, join(out, 'points'), expectedRaw(sim, indexes, { start: MIN_POINT_TIME, end: T0 }));
    } finally {
      duck.close();
    }
    const columns = result.manifest.streams.points?.columns?.map((column) => column.name) ?? [];
    expect(columns.filter((name) => name.startsWith('instance'))).toEqual([]);
  });

  it('the nodes of a view that match a filter: each partition its share, every point of exactly those series', async () => {
    const view = { space: 'cdf_cdm', externalId: 'CogniteTimeSeries', version: 'v1' };
    const space = instanceIdOf(0).space;
    const indexes = Array.from({ length: NODES }, (_, index) => index);
    const selected = indexes.filter((index) => instanceIdOf(index).space === space);
    expect(selected.length).toBeGreaterThan(3);
    expect(selected.length).toBeLessThan(NODES);
    const dir = tempDir('dp-instances-view');
    const out = join(dir, 'out');
    const filter = { equals: { property: ['node', 'space'], value: space } };
    const file = writePointsJob(join(dir, 'job.yaml'), {
      baseUrl: sim.baseUrl,
      out,
      streams: [{ resource: 'datapoints', name: 'points', partitions: 3, timeseries: { view, filter } }],
    });
    const config = loadConfig(file, { SIM_KEY: KEY });
    const result = await runJob({ config, logger: captureLogger('info').logger, clock: createFakeClock(T0) });
    expect(result.errors).toEqual([]);
    expect(result.state).toBe('complete');
    expect(result.manifest.streams.points?.unknownSeries).toBeUndefined();
    const duck = await openDuck();
    try {
      await expectPoints(duck, join(out, 'points'), expectedRaw(sim, selected, { start: MIN_POINT_TIME, end: T0 }, {}, true));
    } finally {
      duck.close();
    }
    expect((await verifyOutput(out)).problems).toEqual([]);
  });

  it('hourly aggregates by instanceIds, and the nodes of a view as a Delta table: the node key in every row', async () => {
    const view = { space: 'cdf_cdm', externalId: 'CogniteTimeSeries', version: 'v1' };
    const space = instanceIdOf(0).space;
    const nodes = Array.from({ length: NODES }, (_, index) => index);
    const selected = nodes.filter((index) => instanceIdOf(index).space === space);
    const numeric = selected.filter((index) => !sim.dataset.timeseries.item(index).isString);
    const filter = { equals: { property: ['node', 'space'], value: space } };
    // Aggregates exist for numeric series only: the hourly stream lists them (the simulator's
    // nodes draw their `type` apart from their series' isString, so a filter on it would not do).
    const numericIds = numeric.map(instanceIdOf);
    const window = { start: T0 - 3 * 86_400_000, end: T0 };
    const hourly = { aggregates: ['count', 'average'], granularity: '1h', start: window.start, end: window.end };
    const dir = tempDir('dp-instances-delta');
    const out = join(dir, 'out');
    const file = writePointsJob(join(dir, 'job.yaml'), {
      baseUrl: sim.baseUrl,
      out,
      formats: ['parquet'],
      streams: [
        { resource: 'datapoints', name: 'hourly', partitions: 2, timeseries: { instanceIds: numericIds }, ...hourly, formats: ['parquet', 'ndjson'] },
        { resource: 'datapoints', name: 'table', partitions: 2, timeseries: { view, filter }, ...window, table: 'delta' },
      ],
    });
    const config = loadConfig(file, { SIM_KEY: KEY });
    const result = await runJob({ config, logger: captureLogger('info').logger, clock: createFakeClock(T0) });
    expect(result.errors).toEqual([]);
    expect(result.state).toBe('complete');
    const duck = await openDuck();
    try {
      const buckets = expectedAggregateRows(sim, numeric, { ...window, granularity: '1h' }, ['count', 'average'], true);
      expect(buckets.parquet.size).toBeGreaterThan(0);
      await expectPoints(duck, join(out, 'hourly'), buckets);
      const table = await readDeltaLog(createLocalStore(out, silentLogger), 'table');
      const fields = (JSON.parse(table.metaData.schemaString ?? '{}') as { fields: { name: string }[] }).fields.map((field) => field.name);
      expect(fields.slice(0, 4)).toEqual(['timeseriesId', 'externalId', 'instanceSpace', 'instanceExternalId']);
      const files = table.files.map((one) => `'${join(out, one.key)}'`).join(', ');
      const rows = await duck.rows(`SELECT * REPLACE (epoch_ms("timestamp") AS "timestamp") FROM read_parquet([${files}], hive_partitioning = false)`);
      const plainRows = rows.map((row) => Object.fromEntries(Object.entries(row).map(([name, value]) => [name, typeof value === 'bigint' ? Number(value) : value])));
      const expected = expectedRaw(sim, selected, window, {}, true);
      expect(expected.parquet.size).toBeGreaterThan(0);
      expectRows('delta', plainRows, expected.parquet, (row) => keyOf(row.timeseriesId, row.timestamp));
    } finally {
      duck.close();
    }
    expect((await verifyOutput(out)).problems).toEqual([]);
  });

  it('a window with no point: the nodes of a view and a list of instanceIds name their newest point, before the window', async () => {
    const view = { space: 'cdf_cdm', externalId: 'CogniteTimeSeries', version: 'v1' };
    const window = { start: '2098-01-01T00:00:00.000Z', end: '2098-02-01T00:00:00.000Z' };
    const dir = tempDir('dp-instances-empty');
    const file = writePointsJob(join(dir, 'job.yaml'), {
      baseUrl: sim.baseUrl,
      out: join(dir, 'out'),
      streams: [
        { resource: 'datapoints', name: 'view', partitions: 2, timeseries: { view }, ...window },
        { resource: 'datapoints', name: 'listed', partitions: 1, timeseries: { instanceIds: [3, 8].map(instanceIdOf) }, ...window },
      ],
    });
    const config = loadConfig(file, { SIM_KEY: KEY });
    const result = await runJob({ config, logger: captureLogger('info').logger, clock: createFakeClock(T0) });
    expect(result.state).toBe('complete');
    const newest = (indexes: number[]) => {
      let found = -Infinity;
      for (const index of indexes) {
        const points = sim.dataset.datapoints.series(index);
        for (let k = 0; k < points.count; k++) if (points.qualityOf(k) === 'good') found = Math.max(found, points.timestampOf(k));
      }
      return new Date(found).toISOString();
    };
    const all = Array.from({ length: NODES }, (_, index) => index);
    const before = `before the window: start is ${window.start}`;
    const notes = Object.fromEntries(result.empty.map(({ stream, note }) => [stream, note]));
    expect(notes.view).toMatch(new RegExp(`^${NODES} series, 0 points in \\[.*\\): the newest point of these series is ${newest(all)} \\(series .+\\), ${before}$`));
    expect(notes.listed).toMatch(new RegExp(`^2 series, 0 points in \\[.*\\): the newest point of these series is ${newest([3, 8])} \\(series .+\\), ${before}$`));
  });

  it('killed after its second shard commit: the checkpoint holds series by instanceId, and the resumed run is exact', async () => {
    const indexes = Array.from({ length: NODES }, (_, index) => index);
    const dir = tempDir('dp-instances-kill');
    const out = join(dir, 'out');
    const file = writePointsJob(join(dir, 'job.yaml'), {
      baseUrl: sim.baseUrl,
      out,
      streams: [{ resource: 'datapoints', name: 'points', partitions: 2, timeseries: { instanceIds: indexes.map(instanceIdOf) } }],
      maxRows: 500,
    });
    const env = { SIM_KEY: KEY };
    // The window ends when the first run starts, after every point of the simulator's (its clock stands at T0).
    const end = Date.now();
    const killed = await runCliWith(['run', '--config', file, '--log-level', 'warn'], {
      cwd: dir,
      env: { ...env, BULK_EXTRACT_CRASH_AT: 'after-checkpoint-write:2' },
    });
    expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
    const parts = Object.values(readCheckpoint(out)?.streams.points?.parts ?? {});
    const inFlight = parts.flatMap((part) => part.points?.series ?? []);
    expect(inFlight.length).toBeGreaterThan(0);
    expect(inFlight.every((series) => series.instanceId !== undefined && series.id === undefined)).toBe(true);
    // The series in flight are matched by the rows' node keys: the shards end where the checkpoint says.
    const atKill = await verifyOutput(out);
    expect(atKill.problems.filter((problem) => problem.includes('in flight'))).toEqual([]);

    const resumed = await runCliWith(['run', '--config', file, '--log-level', 'warn'], { cwd: dir, env });
    expect(resumed.code, describeExit(resumed)).toBe(0);
    const duck = await openDuck();
    try {
      await expectPoints(duck, join(out, 'points'), expectedRaw(sim, indexes, { start: MIN_POINT_TIME, end }, {}, true));
    } finally {
      duck.close();
    }
    expect((await verifyOutput(out)).problems).toEqual([]);
  });
});
