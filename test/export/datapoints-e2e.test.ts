import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Format } from '../../src/config/job-schema.js';
import { loadConfig } from '../../src/config/load-config.js';
import { verifyOutput } from '../../src/export/inspect/verify.js';
import { type RunResult, runJob } from '../../src/export/run/run-job.js';
import { type Logger, silentLogger } from '../../src/log.js';
import { MIN_POINT_TIME } from '../../src/resources/index.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { type Expected, expectedRaw, expectPoints, keyOf, seriesIndexes, writePointsJob } from '../support/datapoints-export.js';
import { type Duck, openDuck, parquetAt } from '../support/export-duckdb.js';
import { createFakeClock } from '../support/fake-clock.js';

/**
 * Raw datapoints end to end, through the real export in this process against the simulator: every
 * (series, timestamp) exactly once in both formats (Parquet read back by DuckDB, NDJSON parsed),
 * equal value for value to the points recomputed from the simulator's generator. For n = 1, 3 and
 * 10 partitions; numeric and string series; the whole history and a window; series by filter, by
 * ids and by externalIds; the platform's defaults (Good points only) and every point with its
 * status.
 *
 * Data: seed 28, 60 series, 60,000 points (the longest series about 18,000; string series, series
 * without externalId, one across 1970, empty ones, hundreds of bad and uncertain points with NaN,
 * Infinity and -Infinity values, string points without a value). Shards of 2000 rows.
 */
const KEY = 'datapoints-e2e-key-01';
const SERIES = 60;
const POINTS = 60_000;
/** The runs' clock and the simulator's, frozen: its start, so an open end reads every point. */
const T0 = Date.UTC(2026, 0, 1);
const FORMATS: Format[] = ['parquet', 'ndjson'];
/** Every point, whatever its status, with the status. */
const EVERY_POINT = { includeStatus: true, ignoreBadDataPoints: false };

let sim: Simulator;
let duck: Duck;
const dirs: string[] = [];

beforeAll(async () => {
  const clock = createFakeClock(T0);
  sim = await startSimulator({ seed: 28, timeseries: SERIES, datapoints: POINTS, apiKeys: [KEY], clock });
});

afterAll(async () => {
  await sim.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  duck = await openDuck();
});

afterEach(() => {
  duck.close();
});

interface Exported {
  out: string;
  folder: string;
  result: RunResult;
}

/** Exports one datapoints stream `stream` (named `points`) in this process; expects it complete. */
async function exportPoints(
  stream: Record<string, unknown>,
  options: { logger?: Logger; maxRows?: number } = {},
): Promise<Exported> {
  const dir = mkdtempSync(join(tmpdir(), 'bulk-extract-dp-e2e-'));
  dirs.push(dir);
  const out = join(dir, 'out');
  const file = writePointsJob(join(dir, 'job.yaml'), {
    baseUrl: sim.baseUrl,
    out,
    streams: [{ resource: 'datapoints', name: 'points', ...stream }],
    formats: FORMATS,
    maxRows: options.maxRows ?? 2000,
  });
  const result = await runJob({
    config: loadConfig(file, { SIM_KEY: KEY }),
    logger: options.logger ?? silentLogger,
    clock: createFakeClock(T0),
  });
  expect(result.errors).toEqual([]);
  expect(result.state).toBe('complete');
  return { out, folder: join(out, 'points'), result };
}

/** The output is exact: both formats, the manifest's rows, and `verify` (sizes, hashes, unique keys). */
async function expectExact(exported: Exported, expected: Expected): Promise<void> {
  expect(expected.parquet.size, 'the case reads some points').toBeGreaterThan(0);
  await expectPoints(duck, exported.folder, expected, FORMATS);
  expect(exported.result.manifest.streams.points?.rows).toBe(expected.parquet.size);
  const report = await verifyOutput(exported.out);
  expect(report.problems).toEqual([]);
  expect(report.formats.parquet?.rows).toBe(expected.parquet.size);
  expect(report.formats.ndjson?.rows).toBe(expected.parquet.size);
}

/** How many points of `expected` (Parquet rows) are of each kind: the case must hold each. */
function kinds(expected: Expected): Record<string, number> {
  const count: Record<string, number> = {
    string: 0, numeric: 0, nan: 0, infinity: 0, negativeInfinity: 0, nullString: 0, bad: 0,
  };
  for (const row of expected.parquet.values()) {
    if (row.valueString !== null) count.string!++;
    if (typeof row.value === 'number') count.numeric!++;
    if (Number.isNaN(row.value)) count.nan!++;
    if (row.value === Infinity) count.infinity!++;
    if (row.value === -Infinity) count.negativeInfinity!++;
    if (row.value === null && row.valueString === null) count.nullString!++;
    if (typeof row.statusCode === 'number' && row.statusCode >= 0x80000000) count.bad!++;
  }
  return count;
}

describe.each([1, 3, 10])('n = %i partitions', (n) => {
  it('every series (numeric and string), the whole history, every point with its status: both formats exact', async () => {
    const exported = await exportPoints({ partitions: n, limit: 7, ...EVERY_POINT });
    const expected = expectedRaw(sim, seriesIndexes(sim), { start: MIN_POINT_TIME, end: T0 }, EVERY_POINT);
    for (const [kind, count] of Object.entries(kinds(expected))) expect(count, `points of kind ${kind}`).toBeGreaterThan(0);
    await expectExact(exported, expected);
    expect(exported.result.manifest.streams.points).toMatchObject({
      key: ['timeseriesId', 'timestamp'],
      pointWindow: { start: MIN_POINT_TIME, end: T0 },
    });
    expect(new Set(exported.result.manifest.files.map((file) => file.m)).size, 'partitions with shards').toBe(n);
  });

  it('a window (start as ISO 8601, end in epoch ms) and the platform\'s defaults (Good points, no status): both formats exact', async () => {
    const start = Date.UTC(2025, 8, 1);
    const end = Date.UTC(2025, 11, 15, 12, 30);
    const exported = await exportPoints({ partitions: n, start: new Date(start).toISOString(), end });
    const expected = expectedRaw(sim, seriesIndexes(sim), { start, end });
    const everything = expectedRaw(sim, seriesIndexes(sim), { start: MIN_POINT_TIME, end: T0 });
    expect(expected.parquet.size).toBeLessThan(everything.parquet.size);
    await expectExact(exported, expected);
    expect(exported.result.manifest.streams.points?.pointWindow).toEqual({ start, end });
  });
});

describe('relative times', () => {
  it('start and end as N[unit]-ago, resolved from the run\'s start: exactly the points of that window', async () => {
    const exported = await exportPoints({ partitions: 3, start: '2000d-ago', end: '52w-ago' });
    const window = { start: T0 - 2000 * 86_400_000, end: T0 - 52 * 7 * 86_400_000 };
    expect(exported.result.manifest.streams.points?.pointWindow).toEqual(window);
    await expectExact(exported, expectedRaw(sim, seriesIndexes(sim), window));
  });
});

describe('which series', () => {
  it('string series only (timeseries: { isString: true }), bad points included: exact, null valueString where a bad point has no value', async () => {
    const flags = { ignoreBadDataPoints: false, includeStatus: true };
    const exported = await exportPoints({ partitions: 3, timeseries: { isString: true }, ...flags });
    const strings = seriesIndexes(sim, (item) => item.isString);
    const expected = expectedRaw(sim, strings, { start: MIN_POINT_TIME, end: T0 }, flags);
    const counts = kinds(expected);
    expect(counts.numeric).toBe(0);
    expect(counts.string).toBeGreaterThan(0);
    expect(counts.nullString).toBeGreaterThan(0);
    await expectExact(exported, expected);
  });

  it('numeric series only, uncertain points kept (treatUncertainAsBad: false) with their status: exact', async () => {
    const flags = { treatUncertainAsBad: false, includeStatus: true };
    const exported = await exportPoints({ partitions: 3, timeseries: { isString: false }, ...flags });
    const indexes = seriesIndexes(sim, (item) => !item.isString);
    const expected = expectedRaw(sim, indexes, { start: MIN_POINT_TIME, end: T0 }, flags);
    const uncertain = [...expected.parquet.values()].filter((row) => (row.statusCode as number) >= 0x40000000);
    expect(uncertain.length).toBeGreaterThan(0);
    expect(uncertain.every((row) => (row.statusCode as number) < 0x80000000), 'no bad point').toBe(true);
    await expectExact(exported, expected);
  });

  /**
   * A few series of each kind: the longest, a string one, one across 1970, one with bad points, an
   * empty one, one without externalId.
   */
  function picked(): number[] {
    const all = seriesIndexes(sim);
    const count = (index: number) => sim.dataset.datapoints.countOf(index);
    const item = (index: number) => sim.dataset.timeseries.item(index);
    const first = (test: (index: number) => boolean) => {
      const found = all.find(test);
      if (found === undefined) throw new Error('seed 28 lacks a series the test needs');
      return found;
    };
    const series = sim.dataset.datapoints;
    return [
      ...new Set([
        all.reduce((longest, index) => (count(index) > count(longest) ? index : longest), 0),
        first((index) => item(index).isString && count(index) > 100),
        first((index) => count(index) > 0 && series.series(index).first < 0),
        first((index) => !item(index).isString && series.series(index).shape.badShare > 0.02),
        first((index) => count(index) === 0),
        first((index) => item(index).externalId === undefined && count(index) > 0),
        first((index) => index > 40 && count(index) > 0),
      ]),
    ];
  }

  it('explicit ids: exactly those series, every point, across 3 partitions', async () => {
    const indexes = picked();
    const ids = indexes.map((index) => sim.dataset.timeseries.idOf(index));
    const exported = await exportPoints({ partitions: 3, timeseries: { ids }, ...EVERY_POINT });
    const expected = expectedRaw(sim, indexes, { start: MIN_POINT_TIME, end: T0 }, EVERY_POINT);
    const timestamps = [...expected.parquet.values()].map((row) => row.timestamp as number);
    expect(Math.min(...timestamps), 'points before 1970 are read').toBeLessThan(0);
    const bad = [...expected.parquet.values()].filter((row) => (row.statusCode as number) >= 0x80000000);
    expect(bad.length, 'bad points are read').toBeGreaterThan(0);
    await expectExact(exported, expected);
    // Entry i of the list is read by partition (i mod n) + 1 (docs/datapoints.md).
    for (let m = 1; m <= 3; m++) {
      const rows = await duck.rows(`SELECT DISTINCT timeseriesId AS id FROM ${parquetAt(`${exported.folder}/part=${m}-of-3/*.parquet`)}`);
      const share = ids.filter((id, i) => i % 3 === m - 1 && sim.dataset.datapoints.countOf(indexes[i]!) > 0);
      expect(rows.map((row) => Number(row.id)).sort(), `partition ${m}`).toEqual(share.sort());
    }
  });

  it('start inclusive, end exclusive, both at the timestamps of points', async () => {
    const longest = picked()[0]!;
    const series = sim.dataset.datapoints.series(longest);
    const window = { start: series.timestampOf(1000), end: series.timestampOf(5000) };
    const exported = await exportPoints({ partitions: 3, ...window });
    const expected = expectedRaw(sim, seriesIndexes(sim), window);
    const id = sim.dataset.timeseries.idOf(longest);
    expect(expected.parquet.has(keyOf(id, window.start))).toBe(true);
    expect(expected.parquet.has(keyOf(id, window.end))).toBe(false);
    await expectExact(exported, expected);
  });

  it('explicit externalIds, with a window: exactly those series, across 10 partitions (some with none)', async () => {
    const indexes = picked().filter((index) => sim.dataset.timeseries.item(index).externalId !== undefined);
    const externalIds = indexes.map((index) => sim.dataset.timeseries.item(index).externalId);
    const window = { start: Date.UTC(2025, 6, 1), end: Date.UTC(2025, 11, 1) };
    const exported = await exportPoints({ partitions: 10, timeseries: { externalIds }, ...window });
    await expectExact(exported, expectedRaw(sim, indexes, window));
  });
});
