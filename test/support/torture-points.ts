import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Format } from '../../src/config/job-schema.js';
import type { Datapoint, SeriesPoints, Simulator } from '../../src/simulator/index.js';
import { expectedAggregates, expectedRawPoints } from './datapoints.js';
import { openDuck, parquetAt } from './export-duckdb.js';
import { hasShards, ndjsonRows } from './ndjson-rows.js';
import { expectRowsByKey, expectRowsWithin, type RowsCheck } from './rows-by-key.js';
import { readCheckpoint, readManifest } from './resume-harness.js';

/**
 * The crash torture's datapoints streams, checked point by point by key (series id, timestamp)
 * against the points recomputed from the simulator's generator (support/datapoints.ts), never with
 * the exporter's code: no point lost, none repeated, every value equal, NaN, ±Infinity and null
 * included, in NDJSON (the point as the platform sent it) and in Parquet (read back with DuckDB).
 */

/** The five aggregates the simulator serves. */
export type ServedAggregate = 'count' | 'average' | 'min' | 'max' | 'sum';

/** A `resource: datapoints` stream of the torture's job: the keys of docs/datapoints.md it sets. */
export interface PointsStreamSpec {
  resource: 'datapoints';
  name: string;
  partitions: number;
  /** Series per page of the series listing (default 1000). */
  limit?: number;
  /** Epoch ms; default 1900-01-01, the job's default. */
  start?: number;
  /** Epoch ms, exclusive; default the run's start, which lies after every generated point. */
  end?: number;
  includeStatus?: boolean;
  ignoreBadDataPoints?: boolean;
  aggregates?: ServedAggregate[];
  granularity?: string;
}

type Row = Record<string, unknown>;

/** The job's default start: the platform's first timestamp. */
const DEFAULT_START = Date.UTC(1900, 0, 1);
/** Before any run of these tests started: the end of a window the job leaves open lies after it. */
const GENERATED_BEFORE = Date.UTC(2025, 0, 1);
const NON_FINITE: ReadonlyMap<string, number> = new Map([
  ['NaN', Number.NaN],
  ['Infinity', Infinity],
  ['-Infinity', -Infinity],
]);

/** Every datapoints stream of the output equals its points in the simulator, row for row by key. */
export async function expectEveryPoint(
  sim: Simulator,
  out: string,
  stream: PointsStreamSpec,
  formats: readonly Format[],
): Promise<void> {
  // A window the job leaves open ends at the first run's start: the simulator's live series have
  // gained points since, after it.
  const window = readManifest(out).streams[stream.name]?.pointWindow;
  const expected = expectedRows(sim, stream, stream.end ?? window?.end ?? Date.now());
  expect(expected.ndjson.size, `${stream.name}: the source has points to check`).toBeGreaterThan(0);
  expectStreamState(out, stream, expected.ndjson.size);
  await expectPointRows(out, stream, formats, expected, expectRowsByKey);
}

/**
 * A datapoints stream not complete yet (a run stopped it) holds no wrong row: each committed
 * point once and equal to the simulator's; points still to come may be missing.
 */
export async function expectNoWrongPoint(
  sim: Simulator,
  out: string,
  stream: PointsStreamSpec,
  formats: readonly Format[],
): Promise<void> {
  if (!existsSync(join(out, stream.name))) return;
  await expectPointRows(out, stream, formats, expectedRows(sim, stream, stream.end ?? Date.now()), expectRowsWithin);
}

async function expectPointRows(
  out: string,
  stream: PointsStreamSpec,
  formats: readonly Format[],
  expected: { ndjson: Map<string, Row>; parquet: Map<string, Row> },
  check: RowsCheck,
): Promise<void> {
  const dir = join(out, stream.name);
  if (formats.includes('ndjson')) {
    check(`${stream.name} as NDJSON`, ndjsonRows(dir, true), expected.ndjson, (row) => `${String(row.id)}@${String(row.timestamp)}`);
  }
  if (formats.includes('parquet') && hasShards(dir, '.parquet')) {
    const duck = await openDuck();
    try {
      const rows = await duck.rows(
        `SELECT * EXCLUDE (timestamp), epoch_ms(timestamp) AS timestamp FROM ${parquetAt(`${dir}/*/*.parquet`)}`,
      );
      check(`${stream.name} as Parquet`, rows, expected.parquet, (row) => `${String(row.timeseriesId)}@${String(row.timestamp)}`);
    } finally {
      duck.close();
    }
  }
}

/** The checkpoint and manifest say the stream is done, with every point counted once. */
function expectStreamState(out: string, stream: PointsStreamSpec, points: number): void {
  const state = readCheckpoint(out).streams[stream.name];
  expect(state?.resource, `checkpoint has datapoints stream ${stream.name}`).toBe('datapoints');
  const parts = Object.entries(state?.parts ?? {});
  expect(parts).toHaveLength(stream.partitions);
  for (const [m, part] of parts) {
    expect(part.done, `${stream.name} part ${m} done`).toBe(true);
    expect(part.points, `${stream.name} part ${m}: every series read, none unknown`).toEqual({
      listing: null,
      listed: true,
      series: [],
      listedSeries: expect.any(Number),
      unknown: [],
    });
  }
  expect(parts.reduce((sum, [, part]) => sum + part.rows, 0), `${stream.name} rows in the checkpoint`).toBe(points);
  const manifest = readManifest(out).streams[stream.name] as Row | undefined;
  expect(manifest?.rows, `${stream.name} rows in the manifest`).toBe(points);
  expect(manifest?.done).toBe(true);
  const window = manifest?.pointWindow as { start: number; end: number } | undefined;
  expect(window?.start, `${stream.name} window start`).toBe(stream.start ?? DEFAULT_START);
  if (stream.end !== undefined) expect(window?.end).toBe(stream.end);
  else expect(window?.end, `${stream.name} window end: the run's start`).toBeGreaterThan(GENERATED_BEFORE);
}

/** Each point (or bucket) of the stream's series, keyed `id@timestamp`: as NDJSON lines and as Parquet rows. */
function expectedRows(
  sim: Simulator,
  stream: PointsStreamSpec,
  end: number,
): { ndjson: Map<string, Row>; parquet: Map<string, Row> } {
  const ndjson = new Map<string, Row>();
  const parquet = new Map<string, Row>();
  const start = stream.start ?? DEFAULT_START;
  const { timeseries, datapoints } = sim.dataset;
  for (let index = 0; index < timeseries.count; index++) {
    const { id, externalId, isString } = timeseries.item(index, false);
    // An aggregates stream selects numeric series only (docs/datapoints.md).
    if (stream.aggregates !== undefined && isString) continue;
    const series = { id, ...(externalId === undefined ? {} : { externalId }) };
    const columns = { timeseriesId: id, externalId: externalId ?? null };
    for (const point of pointsOf(datapoints.series(index), stream, start, end)) {
      const key = `${id}@${String(point.timestamp)}`;
      ndjson.set(key, { ...series, ...point });
      parquet.set(key, { ...columns, ...parquetValues(stream, isString, point), extra: null });
    }
  }
  return { ndjson, parquet };
}

/** The series' raw points or buckets in [start, end), as the platform sends them. */
function pointsOf(series: SeriesPoints, stream: PointsStreamSpec, start: number, end: number): Row[] {
  const { aggregates, granularity } = stream;
  if (aggregates === undefined) {
    const flags = {
      ...(stream.includeStatus === undefined ? {} : { includeStatus: stream.includeStatus }),
      ...(stream.ignoreBadDataPoints === undefined ? {} : { ignoreBadDataPoints: stream.ignoreBadDataPoints }),
    };
    return expectedRawPoints(series, start, end, flags) as unknown as Row[];
  }
  return expectedAggregates(series, { start, end, granularity: granularity ?? '' }).map((bucket) => {
    const row: Row = { timestamp: bucket.timestamp };
    for (const name of aggregates) row[name] = bucket[name];
    return row;
  });
}

/** A point's Parquet columns other than the series': values as doubles or text, the status, or the aggregates. */
function parquetValues(stream: PointsStreamSpec, isString: boolean, point: Row): Row {
  if (stream.aggregates !== undefined) return { ...point, granularity: stream.granularity };
  const { timestamp, value, status } = point as unknown as Datapoint;
  const row: Row = {
    timestamp,
    value: isString ? null : doubleOf(value),
    valueString: isString ? (value ?? null) : null,
  };
  if (stream.includeStatus === true) {
    row.statusCode = status?.code ?? 0;
    row.statusSymbol = status?.symbol ?? 'Good';
  }
  return row;
}

/** A numeric point's value as JSON carries it, as the double it means: "NaN" and "±Infinity" included. */
function doubleOf(value: number | string | undefined): number | null {
  if (value === undefined) return null;
  if (typeof value === 'number') return value;
  const double = NON_FINITE.get(value);
  if (double === undefined) throw new Error(`a numeric point with the value ${JSON.stringify(value)}`);
  return double;
}
