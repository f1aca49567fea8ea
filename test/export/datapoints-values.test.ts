import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect, isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { runJob } from '../../src/export/run/run-job.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { allPoints } from '../support/datapoints.js';
import { expectedRaw, expectPoints, keyOf, type Row, seriesIndexes, writePointsJob } from '../support/datapoints-export.js';
import { type Duck, openDuck, parquetAt } from '../support/export-duckdb.js';
import { createFakeClock } from '../support/fake-clock.js';

/**
 * The values of bad points as DuckDB reads them from the Parquet export: `"NaN"`, `"Infinity"` and
 * `"-Infinity"` are those doubles (isnan, isinf and comparisons work on them), a bad string point
 * without a value is a null `valueString`, and every status code and symbol is the platform's,
 * point by point against the simulator's generator. NDJSON keeps the values as sent.
 *
 * Data: seed 28, 60 series, 60,000 points; the export reads the series that have points that are
 * not Good (numeric and string), every point with its status.
 */
const KEY = 'datapoints-values-key-1';
const T0 = Date.UTC(2026, 0, 1);
const FLAGS = { includeStatus: true, ignoreBadDataPoints: false };
const WINDOW = { start: Date.UTC(1900, 0, 1), end: T0 };

let sim: Simulator;
let duck: Duck;
let dir: string;
let folder: string;
let indexes: number[];

beforeAll(async () => {
  const clock = createFakeClock(T0);
  sim = await startSimulator({ seed: 28, timeseries: 60, datapoints: 60_000, apiKeys: [KEY], clock });
  duck = await openDuck();
  await duck.rows("SET TimeZone = 'UTC'");
  indexes = seriesIndexes(sim, (_, index) => sim.dataset.datapoints.series(index).shape.badShare > 0);
  dir = mkdtempSync(join(tmpdir(), 'bulk-extract-dp-values-'));
  const out = join(dir, 'out');
  const ids = indexes.map((index) => sim.dataset.timeseries.idOf(index));
  const file = writePointsJob(join(dir, 'job.yaml'), {
    baseUrl: sim.baseUrl,
    out,
    streams: [{ resource: 'datapoints', name: 'points', partitions: 2, timeseries: { ids }, ...FLAGS }],
    maxRows: 1000,
  });
  const config = loadConfig(file, { SIM_KEY: KEY });
  const result = await runJob({ config, logger: silentLogger, clock: createFakeClock(T0) });
  expect(result.errors).toEqual([]);
  expect(result.state).toBe('complete');
  folder = join(out, 'points');
});

afterAll(async () => {
  duck.close();
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

const parquet = () => parquetAt(`${folder}/**/*.parquet`);

interface Special {
  value: number | string | undefined;
  code: number;
  symbol: string;
  isString: boolean;
}

/** Every point of the series read that is not a plain Good value, from the generator, by key. */
function specialPoints(): Map<string, Special> {
  const found = new Map<string, Special>();
  for (const index of indexes) {
    const { id, isString } = sim.dataset.timeseries.item(index);
    for (const point of allPoints(sim.dataset.datapoints.series(index))) {
      const plain = point.value !== undefined && (isString || typeof point.value === 'number');
      if (point.status === undefined && plain) continue;
      const { code = 0, symbol = 'Good' } = point.status ?? {};
      found.set(keyOf(id, point.timestamp), { value: point.value, code, symbol, isString });
    }
  }
  return found;
}

const DOUBLES: Readonly<Record<string, number>> = { 'NaN': NaN, 'Infinity': Infinity, '-Infinity': -Infinity };

/** A special point as the row of the query below must read: its double (or null), text, code, symbol, and kind. */
function rowOf(point: Special): Row {
  const numeric = !point.isString && point.value !== undefined;
  return {
    value: numeric ? (DOUBLES[point.value as string] ?? point.value) : null,
    valueString: point.isString ? (point.value ?? null) : null,
    code: point.code,
    symbol: point.symbol,
    nan: numeric ? point.value === 'NaN' : null,
    plus: numeric ? point.value === 'Infinity' : null,
    minus: numeric ? point.value === '-Infinity' : null,
  };
}

describe('bad points, value for value', () => {
  it('the series read hold every kind: NaN, Infinity, -Infinity, string points without a value, uncertain and bad codes', () => {
    const values = [...specialPoints().values()];
    const numeric = values.filter((point) => !point.isString);
    expect(numeric.filter((point) => point.value === 'NaN').length).toBeGreaterThan(5);
    expect(numeric.filter((point) => point.value === 'Infinity').length).toBeGreaterThan(5);
    expect(numeric.filter((point) => point.value === '-Infinity').length).toBeGreaterThan(5);
    expect(values.filter((point) => point.isString && point.value === undefined).length).toBeGreaterThan(0);
    expect(values.filter((point) => point.code >= 0x80000000).length).toBeGreaterThan(5);
    expect(values.filter((point) => point.code >= 0x40000000 && point.code < 0x80000000).length).toBeGreaterThan(5);
  });

  it('the Parquet columns are typed for it: value DOUBLE, valueString VARCHAR, statusCode BIGINT, statusSymbol VARCHAR', async () => {
    const columns = await duck.rows(`DESCRIBE SELECT * FROM ${parquet()}`);
    expect(columns.map((column) => [column.column_name, column.column_type])).toEqual([
      ['timeseriesId', 'BIGINT'],
      ['externalId', 'VARCHAR'],
      ['timestamp', 'TIMESTAMP WITH TIME ZONE'],
      ['value', 'DOUBLE'],
      ['valueString', 'VARCHAR'],
      ['statusCode', 'BIGINT'],
      ['statusSymbol', 'VARCHAR'],
      ['extra', 'VARCHAR'],
    ]);
  });

  it('DuckDB finds exactly the generator\'s special points, each with its double (isnan, isinf), null, code and symbol', async () => {
    const rows = await duck.rows(`
      SELECT timeseriesId, epoch_ms("timestamp") AS t, value, valueString, statusCode, statusSymbol,
        isnan(value) AS nan, isinf(value) AND value > 0 AS plus, isinf(value) AND value < 0 AS minus
      FROM ${parquet()}
      WHERE statusCode <> 0 OR statusSymbol <> 'Good' OR isnan(value) OR isinf(value) OR (value IS NULL AND valueString IS NULL)`);
    const wanted = specialPoints();
    const problems: string[] = [];
    const seen = new Set<string>();
    for (const row of rows) {
      const key = keyOf(row.timeseriesId, row.t);
      seen.add(key);
      const point = wanted.get(key);
      const { timeseriesId: _id, t: _t, statusCode, statusSymbol, ...rest } = row;
      const got: Row = { ...rest, code: Number(statusCode), symbol: statusSymbol };
      if (point === undefined) problems.push(`${key} is not special: ${inspect(got)}`);
      else if (!isDeepStrictEqual(got, rowOf(point))) problems.push(`${key}: got ${inspect(got)}, expected ${inspect(rowOf(point))}`);
    }
    for (const key of wanted.keys()) if (!seen.has(key)) problems.push(`${key} missing`);
    expect(problems.slice(0, 10), `${problems.length} problems`).toEqual([]);
    expect(rows.length).toBe(wanted.size);
  });

  it('counts by kind agree: SQL over the doubles and symbols equals the generator\'s tally', async () => {
    const got = await duck.one(`
      SELECT count(*) FILTER (WHERE isnan(value)) AS nan,
        count(*) FILTER (WHERE value = 'Infinity'::DOUBLE) AS plus,
        count(*) FILTER (WHERE value = '-Infinity'::DOUBLE) AS minus,
        count(*) FILTER (WHERE value IS NULL AND valueString IS NULL) AS empty,
        count(*) FILTER (WHERE statusCode >= 2147483648) AS bad,
        count(*) FILTER (WHERE statusCode >= 1073741824 AND statusCode < 2147483648) AS uncertain,
        count(*) FILTER (WHERE isfinite(value)) AS finite,
        to_json(histogram(statusSymbol))::VARCHAR AS symbols
      FROM ${parquet()}`);
    const tally = { nan: 0, plus: 0, minus: 0, empty: 0, bad: 0, uncertain: 0, finite: 0 };
    const symbols: Record<string, number> = {};
    for (const index of indexes) {
      const isString = sim.dataset.timeseries.item(index).isString;
      for (const point of allPoints(sim.dataset.datapoints.series(index))) {
        const code = point.status?.code ?? 0;
        const symbol = point.status?.symbol ?? 'Good';
        symbols[symbol] = (symbols[symbol] ?? 0) + 1;
        if (code >= 0x80000000) tally.bad++;
        else if (code >= 0x40000000) tally.uncertain++;
        if (point.value === undefined) tally.empty++;
        else if (!isString && point.value === 'NaN') tally.nan++;
        else if (!isString && point.value === 'Infinity') tally.plus++;
        else if (!isString && point.value === '-Infinity') tally.minus++;
        else if (!isString) tally.finite++;
      }
    }
    const { symbols: symbolText, ...counts } = got;
    expect(Object.fromEntries(Object.entries(counts).map(([name, value]) => [name, Number(value)]))).toEqual(tally);
    expect(JSON.parse(String(symbolText))).toEqual(symbols);
  });

  it('every point of both formats equals the simulator\'s (NDJSON keeps "NaN" and the others as sent strings)', async () => {
    const expected = expectedRaw(sim, indexes, WINDOW, FLAGS);
    const nanLines = [...expected.ndjson.values()].filter((line) => line.value === 'NaN');
    expect(nanLines.length).toBeGreaterThan(0);
    await expectPoints(duck, folder, expected);
  });
});
