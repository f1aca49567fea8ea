import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect, isDeepStrictEqual } from 'node:util';
import { expect } from 'vitest';
import { stringify } from 'yaml';
import type { Format } from '../../src/config/job-schema.js';
import type { Datapoint, GeneratedTimeseries, Simulator } from '../../src/simulator/index.js';
import { expectedAggregates, expectedRawPoints, type PointFlags } from './datapoints.js';
import { type Duck, parquetAt } from './export-duckdb.js';

/**
 * Helpers of the end-to-end tests of datapoints streams: a job file, what its output must hold
 * (recomputed from the simulator's generator with test/support/datapoints.ts, the long way, never
 * with the exporter's code), the output read back (Parquet by DuckDB, NDJSON parsed), and the
 * comparison of the two by key, point by point.
 */

/** A row of either format, its values as plain JS: numbers (ids, times, counts), strings, null. */
export type Row = Record<string, unknown>;

/** What an output must hold, by key (`<series id>@<timestamp>`), in each format. */
export interface Expected {
  parquet: Map<string, Row>;
  ndjson: Map<string, Row>;
}

export const keyOf = (id: unknown, timestamp: unknown): string => `${String(id)}@${String(timestamp)}`;

/** The doubles a bad numeric point's value text stands for (PLATFORM.md). */
const SPECIAL: Readonly<Record<string, number>> = { 'NaN': NaN, 'Infinity': Infinity, '-Infinity': -Infinity };

/** The indexes of the simulator's time series that `wanted` picks (every one by default). */
export function seriesIndexes(
  sim: Simulator,
  wanted: (item: GeneratedTimeseries, index: number) => boolean = () => true,
): number[] {
  const found: number[] = [];
  for (let index = 0; index < sim.dataset.timeseries.count; index++) {
    if (wanted(sim.dataset.timeseries.item(index), index)) found.push(index);
  }
  return found;
}

/**
 * The series' identity as an NDJSON line begins: `id`, then `externalId` when it has one; with
 * `nodes` (a stream of data-model series) its node's `instanceSpace` and `instanceExternalId`.
 */
function lineHead(item: GeneratedTimeseries, nodes = false): Row {
  const head: Row = item.externalId === undefined ? { id: item.id } : { id: item.id, externalId: item.externalId };
  return nodes ? { ...head, ...nodeColumns(item) } : head;
}

/** The columns of a data-model series' node key, null for a series that is no node. */
function nodeColumns(item: GeneratedTimeseries): Row {
  return { instanceSpace: item.instanceId?.space ?? null, instanceExternalId: item.instanceId?.externalId ?? null };
}

/**
 * The raw points of the series at `indexes` in [start, end) with `flags`, as both formats must
 * hold them: NDJSON, each point as the platform's JSON carries it (so `"NaN"` a string, the Good
 * status absent); Parquet, a row of columns (a bad value's text as its double, a missing value
 * null; with `includeStatus`, the Good status as 0 / `Good`). `nodes`: a stream of data-model
 * series, whose rows carry the node's key.
 */
export function expectedRaw(
  sim: Simulator,
  indexes: readonly number[],
  window: { start: number; end: number },
  flags: PointFlags = {},
  nodes = false,
): Expected {
  const expected: Expected = { parquet: new Map(), ndjson: new Map() };
  for (const index of indexes) {
    const item = sim.dataset.timeseries.item(index);
    for (const point of expectedRawPoints(sim.dataset.datapoints.series(index), window.start, window.end, flags)) {
      // As the wire carries it (a -0 is written 0).
      const sent = JSON.parse(JSON.stringify(point)) as Datapoint;
      const key = keyOf(item.id, sent.timestamp);
      expected.ndjson.set(key, { ...lineHead(item, nodes), ...sent });
      const value = sent.value;
      const row: Row = {
        timeseriesId: item.id,
        externalId: item.externalId ?? null,
        ...(nodes ? nodeColumns(item) : {}),
        timestamp: sent.timestamp,
        value: item.isString || value === undefined ? null : typeof value === 'number' ? value : (SPECIAL[value] ?? value),
        valueString: item.isString && typeof value === 'string' ? value : null,
      };
      if (flags.includeStatus === true) {
        row.statusCode = sent.status?.code ?? 0;
        row.statusSymbol = sent.status?.symbol ?? 'Good';
      }
      row.extra = null;
      expected.parquet.set(key, row);
    }
  }
  return expected;
}

/** The aggregates the simulator serves, in the order of their columns. */
export const FIVE = ['count', 'average', 'min', 'max', 'sum'] as const;
export type Served = (typeof FIVE)[number];
/** The order the simulator's answers carry them in, whatever the order asked (docs/simulator.md). */
const SENT_ORDER: readonly Served[] = ['average', 'max', 'min', 'count', 'sum'];

/** The aggregates of the series at `indexes` over [start, end) by `granularity`, as both formats must hold them. */
export function expectedAggregateRows(
  sim: Simulator,
  indexes: readonly number[],
  query: { start: number; end: number; granularity: string },
  aggregates: readonly Served[],
  nodes = false,
): Expected {
  const expected: Expected = { parquet: new Map(), ndjson: new Map() };
  for (const index of indexes) {
    const item = sim.dataset.timeseries.item(index);
    for (const bucket of expectedAggregates(sim.dataset.datapoints.series(index), query)) {
      const asked = SENT_ORDER.filter((name) => aggregates.includes(name));
      const values = Object.fromEntries(asked.map((name) => [name, bucket[name]]));
      const key = keyOf(item.id, bucket.timestamp);
      const line = { ...lineHead(item, nodes), timestamp: bucket.timestamp, ...values };
      expected.ndjson.set(key, JSON.parse(JSON.stringify(line)) as Row);
      expected.parquet.set(key, {
        timeseriesId: item.id,
        externalId: item.externalId ?? null,
        ...(nodes ? nodeColumns(item) : {}),
        granularity: query.granularity,
        timestamp: bucket.timestamp,
        ...values,
        extra: null,
      });
    }
  }
  return expected;
}

function plain(value: unknown): unknown {
  return typeof value === 'bigint' ? Number(value) : value;
}

/** Every Parquet row under `folder`, times as epoch ms, BIGINTs as numbers (all below 2^53 here). */
export async function parquetRows(duck: Duck, folder: string): Promise<Row[]> {
  const from = parquetAt(`${folder}/**/*.parquet`);
  const rows = await duck.rows(`SELECT * REPLACE (epoch_ms("timestamp") AS "timestamp") FROM ${from}`);
  return rows.map((row) => Object.fromEntries(Object.entries(row).map(([name, value]) => [name, plain(value)])));
}

/** Rows of a Parquet shard under `folder` that do not come after the row before them by series, then time. */
export async function unsortedRows(duck: Duck, folder: string): Promise<number> {
  const { n } = await duck.one(`
    SELECT count(*) AS n FROM (
      SELECT timeseriesId AS id, "timestamp" AS t,
        lag(timeseriesId) OVER w AS pid, lag("timestamp") OVER w AS pt
      FROM read_parquet('${folder}/**/*.parquet', hive_partitioning = false, filename = true, file_row_number = true)
      WINDOW w AS (PARTITION BY filename ORDER BY file_row_number)
    ) WHERE pid IS NOT NULL AND (id < pid OR (id = pid AND t <= pt))`);
  return Number(n);
}

/** Every shard file under `folder` (relative paths) that ends with `suffix`. */
export function shardsUnder(folder: string, suffix: string): string[] {
  if (!existsSync(folder)) return [];
  return (readdirSync(folder, { recursive: true }) as string[]).filter((path) => path.endsWith(suffix)).sort();
}

/** Every NDJSON line under `folder`, as text. */
export function ndjsonLines(folder: string): string[] {
  return shardsUnder(folder, '.ndjson').flatMap((path) =>
    readFileSync(join(folder, path), 'utf8').split('\n').filter((line) => line !== ''),
  );
}

/** Every NDJSON line under `folder`, parsed. */
export function ndjsonRows(folder: string): Row[] {
  return ndjsonLines(folder).map((line) => JSON.parse(line) as Row);
}

/** Two rows of plain values: the same names, each value the same (Object.is: NaN equals NaN, 0 is not -0). */
function sameRow(a: Row, b: Row): boolean {
  const names = Object.keys(a);
  if (names.length !== Object.keys(b).length) return false;
  for (const name of names) {
    if (!(name in b)) return false;
    const [x, y] = [a[name], b[name]];
    if (!Object.is(x, y) && !(typeof x === 'object' && x !== null && isDeepStrictEqual(x, y))) return false;
  }
  return true;
}

/**
 * `got` holds each row of `expected` exactly once, equal value for value (NaN equals NaN here),
 * and nothing else. Reports the first problems by key rather than diffing thousands of rows.
 */
export function expectRows(
  label: string,
  got: readonly Row[],
  expected: ReadonlyMap<string, Row>,
  key: (row: Row) => string,
): void {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const row of got) {
    const at = key(row);
    const wanted = expected.get(at);
    if (seen.has(at)) problems.push(`${at} exported twice`);
    else if (wanted === undefined) problems.push(`${at} not expected: ${inspect(row)}`);
    else if (!sameRow(row, wanted)) problems.push(`${at}: got ${inspect(row)}, expected ${inspect(wanted)}`);
    seen.add(at);
  }
  let missing = 0;
  for (const at of expected.keys()) {
    if (!seen.has(at) && ++missing <= 5) problems.push(`${at} missing: ${inspect(expected.get(at))}`);
  }
  const summary = `${label}: ${problems.length} problems (${missing} missing) among ${got.length} rows`;
  expect(problems.slice(0, 12), summary).toEqual([]);
  expect(got.length, `${label} rows`).toBe(expected.size);
}

/** Both formats under `folder` hold exactly `expected`; the Parquet shards sorted by series, then time. */
export async function expectPoints(
  duck: Duck,
  folder: string,
  expected: Expected,
  formats: readonly Format[] = ['parquet', 'ndjson'],
): Promise<void> {
  if (formats.includes('ndjson')) {
    const lines = ndjsonLines(folder);
    const rows = lines.map((line) => JSON.parse(line) as Row);
    expectRows('ndjson', rows, expected.ndjson, (row) => keyOf(row.id, row.timestamp));
    // Byte for byte: the series' id and externalId, then the point as the platform's JSON has it.
    const sent = (k: number) => JSON.stringify(expected.ndjson.get(keyOf(rows[k]?.id, rows[k]?.timestamp)));
    const unlike = lines.filter((line, k) => line !== sent(k));
    expect(unlike.slice(0, 3), `NDJSON lines not as the platform sent their point (${unlike.length})`).toEqual([]);
  }
  if (formats.includes('parquet')) {
    const rows = await parquetRows(duck, folder);
    expectRows('parquet', rows, expected.parquet, (row) => keyOf(row.timeseriesId, row.timestamp));
    expect(await unsortedRows(duck, folder), 'Parquet rows out of order (series, then time) within a shard').toBe(0);
  }
}

/** The API key of `sim` reaches the job only as `${SIM_KEY}`. */
export interface PointsJobSpec {
  baseUrl: string;
  out: string;
  streams: Record<string, unknown>[];
  formats?: Format[];
  /** output.shard.maxRows; default 2000, so that several shards commit. */
  maxRows?: number;
}

/** Writes a job of datapoints streams to `file` (fast retries, row groups of 1000). */
export function writePointsJob(file: string, spec: PointsJobSpec): string {
  const job = {
    source: {
      baseUrl: spec.baseUrl,
      auth: { type: 'api-key', apiKey: '${SIM_KEY}' },
      retry: { baseDelayMs: 1, maxDelayMs: 5 },
    },
    streams: spec.streams,
    output: {
      dir: spec.out,
      formats: spec.formats ?? ['parquet', 'ndjson'],
      shard: { maxRows: spec.maxRows ?? 2000 },
      parquet: { rowGroupRows: 1000 },
    },
  };
  writeFileSync(file, stringify(job));
  return file;
}
