import { describe, expect, it } from 'vitest';
import { pointColumns, type PointsShape } from '../../src/resources/index.js';
import { PointTable } from '../../src/sink/datapoints/point-table.js';
import { PointList, type PointValue } from '../../src/sink/index.js';

const RAW: PointsShape = { includeStatus: true };

function table(shape: PointsShape, batches: { id: number; isString?: boolean; points: PointValue[] }[]): PointTable {
  const points = new PointTable(pointColumns(shape), shape);
  for (const { id, isString = false, points: values } of batches) {
    points.add({ id, externalId: `ts-${id}`, isString, points: PointList.of(values) });
  }
  return points;
}

/** The rows in file order, each as its columns' values. */
function rows(points: PointTable): Record<string, unknown>[] {
  const names = points.valueColumns.map((column) => column.name);
  return [...points.order()].map((row) => ({
    id: points.seriesId(row),
    timestamp: points.timestamp(row),
    ...Object.fromEntries(names.map((name, c) => [name, points.value(c, row)])),
  }));
}

describe('PointTable: the rows of a datapoints shard', () => {
  it('are ordered by series id, then time, whatever order the answers came in', () => {
    const points = table(RAW, [
      { id: 30, points: [{ timestamp: 5, value: 1 }, { timestamp: 6, value: 2 }] },
      { id: 10, points: [{ timestamp: 9, value: 3 }] },
      { id: 30, points: [{ timestamp: 7, value: 4 }] },
      { id: 10, points: [{ timestamp: 11, value: 5 }] },
    ]);
    expect(rows(points).map(({ id, timestamp }) => [id, timestamp])).toEqual([
      [10, 9],
      [10, 11],
      [30, 5],
      [30, 6],
      [30, 7],
    ]);
  });

  it('sorts a series by time when windows of it arrived interleaved (a long series read in parallel)', () => {
    const points = table(RAW, [
      { id: 1, points: [{ timestamp: 500, value: 1 }, { timestamp: 501, value: 1 }] },
      { id: 1, points: [{ timestamp: 100, value: 1 }] },
      { id: 1, points: [{ timestamp: 900, value: 1 }] },
      { id: 1, points: [{ timestamp: 101, value: 1 }] },
    ]);
    expect(rows(points).map(({ timestamp }) => timestamp)).toEqual([100, 101, 500, 501, 900]);
  });

  it('keeps bad values as doubles, string values, the Good status the platform leaves out, and other fields in extra', () => {
    const points = table(RAW, [
      {
        id: 1,
        points: [
          { timestamp: 1, value: 'NaN', status: { code: 2147483648, symbol: 'Bad' } },
          { timestamp: 2, value: 'Infinity', status: { code: 2147483648, symbol: 'Bad' } },
          { timestamp: 3, value: '-Infinity', status: { code: 1073741824, symbol: 'Uncertain' } },
          { timestamp: 4, value: -0 },
          { timestamp: 5, value: 1.5, quality: 'x' },
        ],
      },
      { id: 2, isString: true, points: [{ timestamp: 1, value: 'on' }, { timestamp: 2, status: { code: 2147483648, symbol: 'Bad' } }] },
    ]);
    const got = rows(points);
    expect(got.map((row) => row.value)).toEqual([NaN, Infinity, -Infinity, -0, 1.5, null, null]);
    expect(Object.is(got[3]!.value, -0)).toBe(true);
    expect(got.map((row) => row.valueString)).toEqual([null, null, null, null, null, 'on', null]);
    expect(got.map((row) => row.statusCode)).toEqual([2147483648, 2147483648, 1073741824, 0, 0, 0, 2147483648]);
    expect(got.map((row) => row.statusSymbol)).toEqual(['Bad', 'Bad', 'Uncertain', 'Good', 'Good', 'Good', 'Bad']);
    expect(got.map((row) => row.extra)).toEqual([null, null, null, null, '{"quality":"x"}', null, null]);
  });

  it('holds aggregates in their columns: counts and values, absent ones null', () => {
    const shape: PointsShape = { aggregates: ['count', 'average'], granularity: '1h', includeStatus: false };
    const buckets = [{ timestamp: 0, count: 3, average: 2.5 }, { timestamp: 3_600_000, count: 1 }];
    const points = table(shape, [{ id: 1, points: buckets }]);
    expect(rows(points)).toEqual([
      { id: 1, timestamp: 0, count: 3, average: 2.5, extra: null },
      { id: 1, timestamp: 3_600_000, count: 1, average: null, extra: null },
    ]);
  });
});
