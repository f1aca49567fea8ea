import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { verifyOutput } from '../../src/export/inspect/verify.js';
import { runJob } from '../../src/export/run/run-job.js';
import { silentLogger } from '../../src/log.js';
import { MIN_POINT_TIME } from '../../src/resources/index.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { expectedAggregateRows, expectPoints, FIVE, seriesIndexes, type Served, writePointsJob } from '../support/datapoints-export.js';
import { type Duck, openDuck, parquetAt } from '../support/export-duckdb.js';
import { createFakeClock } from '../support/fake-clock.js';

/**
 * Aggregated datapoints end to end (count, average, min, max, sum), through the real export in
 * this process:
 * - exact: every (series, bucket) once in both formats, equal to the aggregates recomputed from the
 *   simulator's generator (test/support/datapoints.ts), for n = 1, 3 and 10 partitions;
 * - checked independently: the aggregate export equals DuckDB's own aggregation (date_trunc,
 *   time_bucket) of a raw export of the same series over the same buckets, bad points filtered
 *   out by the status codes the raw export holds.
 *
 * Data: seed 28, 60 series (54 numeric), 60,000 points.
 */
const KEY = 'datapoints-agg-e2e-key';
const T0 = Date.UTC(2026, 0, 1);

let sim: Simulator;
let duck: Duck;
const dirs: string[] = [];

beforeAll(async () => {
  // The simulator starts at the runs' time: its live series' points reach it.
  const clock = createFakeClock(T0);
  sim = await startSimulator({ seed: 28, timeseries: 60, datapoints: 60_000, apiKeys: [KEY], clock });
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

/** Exports one datapoints stream (named `points`) in this process; resolves to its folder. */
async function exportPoints(stream: Record<string, unknown>): Promise<{ out: string; folder: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'bulk-extract-dp-agg-'));
  dirs.push(dir);
  const out = join(dir, 'out');
  const file = writePointsJob(join(dir, 'job.yaml'), {
    baseUrl: sim.baseUrl,
    out,
    streams: [{ resource: 'datapoints', name: 'points', ...stream }],
    maxRows: 1500,
  });
  const config = loadConfig(file, { SIM_KEY: KEY });
  const result = await runJob({ config, logger: silentLogger, clock: createFakeClock(T0) });
  expect(result.errors).toEqual([]);
  expect(result.state).toBe('complete');
  expect((await verifyOutput(out)).problems).toEqual([]);
  return { out, folder: join(out, 'points') };
}

const numeric = () => seriesIndexes(sim, (item) => !item.isString);

describe('aggregates, exact', () => {
  // Seed 28's numeric series span minutes to weeks each: the live ones up to T0, the others before.
  it.each([
    [1, '1m', undefined, undefined],
    // Off any boundary, inside a series' span at each end: the first bucket starts before `start`
    // (aligned down to a whole hour), the last runs past `end`, as the platform's do.
    [3, '1h', Date.UTC(2025, 10, 27, 2, 17, 3, 5), Date.UTC(2025, 11, 12, 3, 40)],
    [10, '1d', undefined, undefined],
  ])('n = %i, granularity %s: every bucket of every numeric series once, both formats, equal to the simulator\'s', async (n, granularity, start, end) => {
    const window = start === undefined || end === undefined ? {} : { start, end };
    const { folder } = await exportPoints({ partitions: n, aggregates: [...FIVE], granularity, ...window });
    const query = { start: start ?? MIN_POINT_TIME, end: end ?? T0, granularity };
    const expected = expectedAggregateRows(sim, numeric(), query, FIVE);
    expect(expected.parquet.size).toBeGreaterThan(100);
    if (start !== undefined && end !== undefined) {
      const times = [...expected.parquet.values()].map((row) => row.timestamp as number);
      expect(Math.min(...times), 'a bucket that starts before start').toBeLessThan(start);
      expect(Math.max(...times) + 3_600_000, 'a bucket that ends after end').toBeGreaterThan(end);
    }
    await expectPoints(duck, folder, expected);
  });

  const SUBSET = { start: Date.UTC(2025, 9, 1), end: Date.UTC(2025, 11, 1), granularity: '15m' };

  it('a subset given out of order (max, count), at 15m: both formats exact', async () => {
    const aggregates: Served[] = ['max', 'count'];
    const { folder } = await exportPoints({ partitions: 3, aggregates, ...SUBSET });
    const expected = expectedAggregateRows(sim, numeric(), SUBSET, aggregates);
    expect(expected.parquet.size).toBeGreaterThan(100);
    await expectPoints(duck, folder, expected);
  });

  // docs/datapoints.md, Output: "then one column per aggregate in the order the job file lists them".
  it('a subset given out of order (max, count): its columns typed (max DOUBLE, count BIGINT), in the job file\'s order', async () => {
    const { folder } = await exportPoints({ partitions: 1, aggregates: ['max', 'count'], ...SUBSET });
    const columns = await duck.rows(`DESCRIBE SELECT * FROM ${parquetAt(`${folder}/**/*.parquet`)}`);
    expect(columns.map((column) => [column.column_name, column.column_type])).toEqual([
      ['timeseriesId', 'BIGINT'],
      ['externalId', 'VARCHAR'],
      ['granularity', 'VARCHAR'],
      ['timestamp', 'TIMESTAMP WITH TIME ZONE'],
      ['max', 'DOUBLE'],
      ['count', 'BIGINT'],
      ['extra', 'VARCHAR'],
    ]);
  });
});

/** Buckets of DuckDB's own making and the exported aggregates, side by side. */
interface Side {
  id: number;
  t: number;
  count: number | null;
  average: number | null;
  min: number | null;
  max: number | null;
  sum: number | null;
  scale: number | null;
  aCount: number | null;
  aAverage: number | null;
  aMin: number | null;
  aMax: number | null;
  aSum: number | null;
}

/** Mismatches of a side-by-side row: counts, min and max exact; sums and averages up to rounding. */
function mismatch(row: Side): string | undefined {
  const at = `series ${row.id} bucket ${new Date(row.t).toISOString()}`;
  if (row.count === null || row.aCount === null) {
    return `${at}: only ${row.count === null ? 'the aggregate export' : 'DuckDB'} has it`;
  }
  if (row.count !== row.aCount || row.min !== row.aMin || row.max !== row.aMax) return `${at}: ${JSON.stringify(row)}`;
  // Summed in another order: within a few ulps of the sum of magnitudes.
  const tolerance = 1e-12 * (row.scale ?? 0);
  if (Math.abs((row.sum ?? 0) - (row.aSum ?? 0)) > tolerance) return `${at}: sum ${row.sum} vs ${row.aSum}`;
  if (Math.abs((row.average ?? 0) - (row.aAverage ?? 0)) > tolerance / row.count) {
    return `${at}: average ${row.average} vs ${row.aAverage}`;
  }
  return undefined;
}

describe('aggregates, checked by DuckDB against a raw export of the same series and buckets', () => {
  // Whole buckets: start and end on bucket boundaries, so the raw window holds exactly their points.
  const start = Date.UTC(2025, 6, 1);
  const end = Date.UTC(2025, 11, 31);

  it.each([
    ['1h', "date_trunc('hour', \"timestamp\")", {}],
    ['1d', "date_trunc('day', \"timestamp\")", {}],
    ['3h', `time_bucket(INTERVAL '3 hours', "timestamp", to_timestamp(${start / 1000}))`, { treatUncertainAsBad: false }],
  ])('%s: count, average, min, max and sum per bucket equal DuckDB\'s %s of the raw points', async (granularity, bucket, flags) => {
    const uncertainCounts = 'treatUncertainAsBad' in flags;
    const common = { partitions: 3, timeseries: { isString: false }, start, end, ...flags };
    const [aggregated, raw] = await Promise.all([
      exportPoints({ ...common, aggregates: [...FIVE], granularity }),
      // Every point with its status: the Good ones (and uncertain ones, when they count) are chosen here.
      exportPoints({ ...common, includeStatus: true, ignoreBadDataPoints: false, formats: ['parquet'] }),
    ]);
    await duck.rows("SET TimeZone = 'UTC'");
    const counted = uncertainCounts ? 'statusCode < 2147483648' : 'statusCode < 1073741824';
    const rows = await duck.rows(`
      WITH mine AS (
        SELECT timeseriesId AS id, epoch_ms(${bucket}) AS t, count(value) AS count, avg(value) AS average,
          min(value) AS min, max(value) AS max, sum(value) AS sum, sum(abs(value)) AS scale
        FROM ${parquetAt(`${raw.folder}/**/*.parquet`)} WHERE ${counted} GROUP BY ALL
      ), theirs AS (
        SELECT timeseriesId AS id, epoch_ms("timestamp") AS t, count AS aCount, average AS aAverage, min AS aMin, max AS aMax, sum AS aSum
        FROM ${parquetAt(`${aggregated.folder}/**/*.parquet`)}
      )
      SELECT * FROM mine FULL OUTER JOIN theirs USING (id, t) ORDER BY id, t`);
    const sides = rows.map(
      (row) => Object.fromEntries(Object.entries(row).map(([name, value]) => [name, typeof value === 'bigint' ? Number(value) : value])) as unknown as Side,
    );
    expect(sides.length).toBeGreaterThan(100);
    const problems = sides.map(mismatch).filter((problem) => problem !== undefined);
    expect(problems.slice(0, 10), `${problems.length} of ${sides.length} buckets differ`).toEqual([]);
    const rawStatuses = await duck.one(`SELECT count(*) FILTER (WHERE NOT (${counted})) AS left_out, count(*) AS n FROM ${parquetAt(`${raw.folder}/**/*.parquet`)}`);
    expect(Number(rawStatuses.left_out), 'the raw export holds points the aggregates leave out').toBeGreaterThan(0);
    // Every bucket holds at least one point: no empty bucket is exported.
    expect(sides.every((side) => (side.aCount ?? 0) > 0)).toBe(true);
  });
});
