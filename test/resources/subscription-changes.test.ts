import { describe, expect, it } from 'vitest';
import { changeColumns, changeRows } from '../../src/resources/subscription-changes.js';

/** The change rows of a subscription's updates: what each column holds, and the order they are applied in. */
const NUMERIC = { id: 7, externalId: 'pump-1', isString: false };

describe('changeColumns', () => {
  it('has the series, the change and its order, the times, the values, and statuses only when asked', () => {
    const names = (includeStatus: boolean) => changeColumns(includeStatus).map((column) => column.name);
    expect(names(false)).toEqual([
      'timeseriesId',
      'externalId',
      'instanceSpace',
      'instanceExternalId',
      'change',
      'changeOrder',
      'timestamp',
      'deleteEnd',
      'value',
      'valueString',
    ]);
    expect(names(true).slice(-2)).toEqual(['statusCode', 'statusSymbol']);
    expect(changeColumns(false).filter((column) => column.required).map((column) => column.name)).toEqual([
      'timeseriesId',
      'change',
      'changeOrder',
      'timestamp',
    ]);
  });
});

describe('changeRows', () => {
  it('numbers an update\'s deleted ranges, then its points, from the order given', () => {
    const rows = changeRows(
      {
        timeSeries: NUMERIC,
        upserts: [{ timestamp: 30, value: 1.5 }],
        deletes: [{ inclusiveBegin: 10, exclusiveEnd: 20 }, { inclusiveBegin: 40 }],
      },
      5,
      false,
    );
    expect(rows).toEqual([
      { timeseriesId: 7, externalId: 'pump-1', instanceSpace: null, instanceExternalId: null, change: 'delete', changeOrder: 5, timestamp: 10, deleteEnd: 20, value: null, valueString: null },
      { timeseriesId: 7, externalId: 'pump-1', instanceSpace: null, instanceExternalId: null, change: 'delete', changeOrder: 6, timestamp: 40, deleteEnd: null, value: null, valueString: null },
      { timeseriesId: 7, externalId: 'pump-1', instanceSpace: null, instanceExternalId: null, change: 'upsert', changeOrder: 7, timestamp: 30, deleteEnd: null, value: 1.5, valueString: null },
    ]);
  });

  it.each([
    // [series, point, value, valueString, statusCode, statusSymbol]
    [NUMERIC, { timestamp: 1, value: 2 }, 2, null, 0, 'Good'],
    [NUMERIC, { timestamp: 1, value: 'NaN', status: { code: 2147483648, symbol: 'Bad' } }, Number.NaN, null, 2147483648, 'Bad'],
    [NUMERIC, { timestamp: 1, value: '-Infinity', status: { code: 2147483648 } }, -Infinity, null, 2147483648, null],
    [NUMERIC, { timestamp: 1, status: { code: 2156527616, symbol: 'BadSensorFailure' } }, null, null, 2156527616, 'BadSensorFailure'],
    [{ id: 8, isString: true, instanceId: { space: 'sp', externalId: 'x' } }, { timestamp: 1, value: 'on' }, null, 'on', 0, 'Good'],
  ])('reads %j %j into its value columns and status', (series, point, value, valueString, statusCode, statusSymbol) => {
    const [row] = changeRows({ timeSeries: series, upserts: [point], deletes: [] }, 0, true);
    expect(row).toMatchObject({ timestamp: 1, valueString, statusCode, deleteEnd: null, change: 'upsert' });
    expect(row?.value).toBe(value);
    expect(row?.statusSymbol ?? null).toBe(statusSymbol);
  });
});
