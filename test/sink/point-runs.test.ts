import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pointColumns, type PointsShape } from '../../src/resources/index.js';
import { blockRowsFor, PointRuns } from '../../src/sink/datapoints/point-runs.js';
import { PointTable } from '../../src/sink/datapoints/point-table.js';
import { RowBlock } from '../../src/sink/datapoints/row-block.js';
import { mergeRuns } from '../../src/sink/datapoints/run-merge.js';
import { type PointBatch, PointList, type PointValue } from '../../src/sink/index.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';
import {
  AGGREGATES,
  comparable,
  type PointRow,
  randomBatches,
  type RandomPoints,
  RAW_WITH_STATUS,
  sortedRows,
} from '../support/random-points.js';

/**
 * The sorted runs of a datapoints shard: rows held by a PointTable of `runRows`, written sorted to
 * a PointRuns each time it is full (as PointsParquetWriter does), read back block by block and
 * merged. The merged rows must be those of a plain sort of all the rows, value for value.
 */

afterEach(removeTempDirs);

const decoder = new TextDecoder();

/** Rows `from` to `to - 1` of `block`, as plain values. */
function rowsOf(table: PointTable, block: RowBlock, from: number, to: number): PointRow[] {
  const rows: PointRow[] = [];
  for (let i = from; i < to; i++) {
    const row: PointRow = {
      timeseriesId: table.series.id(block.series[i]!),
      externalId: table.series.externalId(block.series[i]!) ?? null,
      timestamp: block.times[i]!,
    };
    table.valueColumns.forEach((spec, c) => {
      const part = block.parts[c]!;
      if (part.present[i] === 0) row[spec.name] = null;
      else if (part.kind === 'number') row[spec.name] = part.values[i];
      else row[spec.name] = decoder.decode(part.bytes.subarray(RowBlock.textStart(part, i), part.ends[i]));
    });
    rows.push(row);
  }
  return rows;
}

/** The batches through runs of `runRows` rows, merged: the rows in the order merged, and how many runs. */
async function throughRuns(batches: readonly PointBatch[], shape: PointsShape, runRows: number) {
  const dir = tempDir('bulk-extract-runs-');
  const table = new PointTable(pointColumns(shape), shape, runRows);
  const runs = await PointRuns.create(join(dir, '000000.parquet.runs.inprogress'));
  const blockRows = blockRowsFor(runRows);
  const block = RowBlock.allocate(table.kinds, blockRows);
  const write = async () => {
    await runs.write(table, block, blockRows);
    table.reset();
  };
  try {
    for (const batch of batches) {
      for (const series of batch) {
        for (let k = 0; k < series.points.length;) {
          k += table.add(series, k);
          expect(table.rows, 'rows held').toBeLessThanOrEqual(runRows);
          if (table.full) await write();
        }
      }
    }
    if (table.rows > 0) await write();
    const rows: PointRow[] = [];
    let ranges = 0;
    await mergeRuns(runs.cursors(table.kinds), table.series, (merged, from, to) => {
      expect(to, 'an empty range').toBeGreaterThan(from);
      ranges++;
      rows.push(...rowsOf(table, merged, from, to));
      return Promise.resolve();
    });
    return { rows, runs: runs.count, ranges };
  } finally {
    await runs.remove();
    expect(readdirSync(dir), 'the runs file is removed').toEqual([]);
  }
}

function points(id: number, timestamps: readonly number[], isString = false) {
  const values: PointValue[] = timestamps.map((timestamp) => ({ timestamp, value: isString ? `v${timestamp}` : timestamp / 2 }));
  return { id, externalId: `ts-${id}`, isString, points: PointList.of(values) };
}

describe('sorted runs merged: the rows of a plain sort, value for value', () => {
  const cases: [string, RandomPoints, PointsShape, number][] = [
    ['raw with status, 200 series and one in 6 windows, runs of 7 rows (blocks of 1)', { seed: 1, series: 200, points: 6000, kind: 'raw', windows: 6 }, RAW_WITH_STATUS, 7],
    ['raw with status, another seed, runs of 100 rows (blocks of 4)', { seed: 2, series: 300, points: 8000, kind: 'raw', windows: 3 }, RAW_WITH_STATUS, 100],
    ['string series only (unicode, empty strings, no value): runs cut by their text too', { seed: 3, series: 40, points: 5000, kind: 'raw', strings: 1 }, RAW_WITH_STATUS, 64],
    ['raw without status', { seed: 4, series: 50, points: 3000, kind: 'raw', windows: 4 }, { includeStatus: false }, 13],
    ['aggregates (count int64, average double, extra), one series in 5 windows', { seed: 5, series: 120, points: 5000, kind: 'aggregates', windows: 5 }, AGGREGATES, 7],
    ['one run only (runRows above the rows)', { seed: 6, series: 30, points: 2000, kind: 'raw', windows: 2 }, RAW_WITH_STATUS, 5000],
  ];

  it.each(cases)('%s', async (_, options, shape, runRows) => {
    const batches = randomBatches(options);
    const expected = sortedRows(batches, shape);
    const merged = await throughRuns(batches, shape, runRows);
    expect(merged.runs, 'runs written').toBeGreaterThanOrEqual(Math.ceil(expected.length / runRows));
    expect(merged.rows.length).toBe(expected.length);
    expect(comparable(merged.rows)).toEqual(comparable(expected));
    // What the data must hold for the case to mean something.
    const values = expected.map((row) => (shape.aggregates === undefined ? row.value : row.average));
    if (shape.aggregates === undefined && options.strings !== 1) {
      expect(values.some((value) => Number.isNaN(value)), 'NaN').toBe(true);
      expect(values.includes(Infinity) && values.includes(-Infinity), '±Infinity').toBe(true);
      expect(values.some((value) => Object.is(value, -0)), '-0').toBe(true);
    }
    expect(values.includes(null), 'missing values').toBe(true);
    expect(expected.some((row) => row.extra !== null), 'extra').toBe(true);
  });

  it('runs of exactly runRows, runRows + 1 and one row', async () => {
    const ids = [30, 10, 20];
    const series = (rows: number) => [ids.map((id) => points(id, Array.from({ length: rows }, (_, k) => 100 + k)))];
    const expect7 = async (batches: PointBatch[], runs: number) => {
      const merged = await throughRuns(batches, RAW_WITH_STATUS, 7);
      expect(merged.runs).toBe(runs);
      expect(comparable(merged.rows)).toEqual(comparable(sortedRows(batches, RAW_WITH_STATUS)));
      return merged;
    };
    // 7 rows: one full run; 8: a full run and one of 1 row; 1: a run of 1 row.
    await expect7([[points(5, [1, 2, 3, 4, 5, 6, 7])]], 1);
    await expect7([[points(5, [1, 2, 3, 4, 5, 6, 7, 8])]], 2);
    await expect7([[points(5, [-1])]], 1);
    // 3 series of 7 points: 3 runs, each series in several of them.
    const three = await expect7(series(7), 3);
    const ids7 = (id: number) => Array.from({ length: 7 }, () => id);
    expect(three.rows.map((row) => row.timeseriesId)).toEqual([...ids7(10), ...ids7(20), ...ids7(30)]);
  });

  it('a table of string points is full once it holds 16 bytes of text a row of runRows, before runRows rows', () => {
    const table = new PointTable(pointColumns(RAW_WITH_STATUS), RAW_WITH_STATUS, 10);
    const long = (timestamp: number) => ({ timestamp, value: `${'é'.repeat(24)}${timestamp}` });
    const values = PointList.of([1, 2, 3, 4, 5, 6].map(long));
    const strings = { id: 1, externalId: undefined, isString: true, points: values };
    // 50 bytes a value: 4 of them pass 160 bytes ("Good" is one entry for all rows).
    expect(table.add(strings)).toBe(4);
    expect(table.full).toBe(true);
    table.reset();
    expect(table.add(strings, 4)).toBe(2);
    expect(table.full).toBe(false);
  });

  it('a table takes no more than runRows rows, nor more once full', () => {
    const table = new PointTable(pointColumns(RAW_WITH_STATUS), RAW_WITH_STATUS, 7);
    const ten = points(1, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(table.add(ten)).toBe(7);
    expect(table.full).toBe(true);
    expect(table.add(ten, 7)).toBe(0);
    table.reset();
    expect(table.full).toBe(false);
    expect(table.add(ten, 7)).toBe(3);
    expect([...table.order()].map((row) => table.timestamp(row))).toEqual([8, 9, 10]);
  });
});

describe('a point twice is a bug: refused, never written', () => {
  it('within one run: order() throws naming the series and the time', () => {
    const table = new PointTable(pointColumns(RAW_WITH_STATUS), RAW_WITH_STATUS, 100);
    table.add(points(7, [1, 2, 3]));
    table.add(points(7, [3, 4]));
    expect(() => table.order()).toThrow(/Series 7 has two points at 3 in one shard: .* a bug/);
  });

  it('in two runs: the merge throws naming the series and the time', async () => {
    const batches = [[points(7, [1, 2, 3, 4]), points(9, [1, 2])], [points(7, [10, 4])]];
    await expect(throughRuns(batches, RAW_WITH_STATUS, 3)).rejects.toThrow(/Series 7 has two points at 4 in one shard/);
  });
});
