import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dmsDateDays, dmsTimestampMs } from '../../src/resources/dms-time.js';
import { columnValue, instanceRow } from '../../src/resources/instance-values.js';
import type { InstanceColumnKind } from '../../src/resources/column-kinds.js';
import { instanceColumns, type ViewDefinition } from '../../src/resources/instances.js';

const DAY_MS = 86_400_000;

describe('dmsTimestampMs', () => {
  it.each<[string, number]>([
    ['2024-01-01T00:00:00.000+00:00', Date.UTC(2024, 0, 1)],
    ['2024-01-01T00:00:00Z', Date.UTC(2024, 0, 1)],
    ['2024-01-01T01:30:00+01:30', Date.UTC(2024, 0, 1)],
    ['2023-12-31T19:00:00.000-05:00', Date.UTC(2024, 0, 1)],
    ['2025-02-21T21:53:24.685009+00:00', Date.UTC(2025, 1, 21, 21, 53, 24, 685)],
    ['2024-06-30T23:59:59.9999999+00:00', Date.UTC(2024, 5, 30, 23, 59, 59, 999)],
    ['2024-06-30T12:00:00.5Z', Date.UTC(2024, 5, 30, 12, 0, 0, 500)],
    ['2024-02-29T00:00:00Z', Date.UTC(2024, 1, 29)],
    ['2000-02-29T00:00:00Z', Date.UTC(2000, 1, 29)],
    ['1969-12-31T23:59:59.5Z', -500],
    ['1900-01-01T00:00:00+00:00', Date.UTC(1900, 0, 1)],
    ['0001-01-01T00:00:00Z', -62_135_596_800_000],
    ['0099-03-01T00:00:00Z', Date.parse('0099-03-01T00:00:00Z')],
    ['9999-12-31T23:59:59.999+00:00', 253_402_300_799_999],
  ])('%s is %d', (text, ms) => {
    expect(dmsTimestampMs(text)).toBe(ms);
  });

  it.each([
    '2024-01-01',
    '2024-01-01T00:00:00',
    '2024-01-01T00:00Z',
    '2024-01-01 00:00:00Z',
    '2024-01-01t00:00:00z',
    '2024-01-01T00:00:00+0100',
    '2024-01-01T00:00:00+24:00',
    '2024-01-01T00:00:00+01:60',
    '2024-01-01T00:00:00.Z',
    '2024-01-01T00:00:00.1234567890Z',
    '2024-02-30T00:00:00Z',
    '2023-02-29T00:00:00Z',
    '2100-02-29T00:00:00Z',
    '2024-13-01T00:00:00Z',
    '2024-00-10T00:00:00Z',
    '2024-01-00T00:00:00Z',
    '2024-01-01T24:00:00Z',
    '2024-01-01T00:60:00Z',
    '2024-01-01T00:00:60Z',
    '0000-01-01T00:00:00Z',
    '+2024-01-01T00:00:00Z',
    ' 2024-01-01T00:00:00Z',
    '1704067200000',
    '',
  ])('refuses %j', (text) => {
    expect(dmsTimestampMs(text)).toBeUndefined();
  });

  it('agrees with Date.parse on every instant from 1000 to 9999, with any zone and fraction', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('1000-01-02T00:00:00Z'), max: new Date('9999-12-30T23:59:59Z'), noInvalidDate: true }),
        fc.integer({ min: -23 * 60 - 59, max: 23 * 60 + 59 }),
        fc.stringMatching(/^\d{0,6}$/),
        (date, offset, more) => {
          const local = new Date(date.getTime() + offset * 60_000).toISOString().slice(0, 23);
          const zone = `${offset < 0 ? '-' : '+'}${String(Math.trunc(Math.abs(offset) / 60)).padStart(2, '0')}:${String(Math.abs(offset) % 60).padStart(2, '0')}`;
          expect(dmsTimestampMs(`${local}${more}${zone}`)).toBe(date.getTime());
        },
      ),
    );
  });
});

describe('dmsDateDays', () => {
  it.each<[string, number]>([
    ['1970-01-01', 0],
    ['1970-01-02', 1],
    ['1969-12-31', -1],
    ['2024-01-01', 19_723],
    ['2000-02-29', 11_016],
    ['0001-01-01', -719_162],
    ['9999-12-31', 2_932_896],
  ])('%s is day %d', (text, days) => {
    expect(dmsDateDays(text)).toBe(days);
  });

  it.each(['2100-02-29', '2024-13-01', '2024-04-31', '2024-01-00', '0000-12-31', '24-01-01', '2024-1-1', '2024-01-01T00:00:00Z', '20240101'])(
    'refuses %j',
    (text) => {
      expect(dmsDateDays(text)).toBeUndefined();
    },
  );

  it('counts the days Date counts, from 0001 to 9999', () => {
    fc.assert(
      fc.property(fc.integer({ min: -719_162, max: 2_932_896 }), (days) => {
        expect(dmsDateDays(new Date(days * DAY_MS).toISOString().slice(0, 10))).toBe(days);
      }),
    );
  });
});

describe('columnValue: what each kind of column holds, and what goes to extra instead (undefined)', () => {
  const ref = { space: 'site_a', externalId: 'pump 1' };
  it.each<[InstanceColumnKind, boolean, unknown, unknown]>([
    ['string', false, 'text', 'text'],
    ['string', false, 5, undefined],
    ['int32', false, -2_147_483_648, -2_147_483_648],
    ['int32', false, 2_147_483_648, undefined],
    ['int32', false, 1.5, undefined],
    ['int64', false, 9_007_199_254_740_991, 9_007_199_254_740_991],
    ['int64', false, 2 ** 60, undefined],
    ['int64', false, '12', undefined],
    ['float', false, 1.25, 1.25],
    ['float', false, 1e39, undefined],
    ['double', false, 1e300, 1e300],
    ['double', false, '1.5', undefined],
    ['boolean', false, false, false],
    ['boolean', false, 0, undefined],
    ['timestamp', false, '2024-01-01T00:00:00.000+00:00', Date.UTC(2024, 0, 1)],
    ['timestamp', false, 1_704_067_200_000, 1_704_067_200_000],
    ['timestamp', false, '2024-02-30T00:00:00Z', undefined],
    ['timestamp', false, 1.5, undefined],
    ['date', false, '2024-01-01', 19_723],
    ['date', false, '2024-01-01T00:00:00Z', undefined],
    ['json', false, { a: [1, 'x', null] }, '{"a":[1,"x",null]}'],
    ['json', false, 'text', '"text"'],
    ['node-ref', false, ref, ref],
    ['node-ref', false, { ...ref, more: 1 }, undefined],
    ['node-ref', false, { space: 'site_a' }, undefined],
    ['node-ref', false, 'site_a:pump 1', undefined],
    ['extra-json', false, { a: 1 }, '{"a":1}'],
    ['string', false, null, null],
    ['int64', false, undefined, null],
    ['string', true, ['a', 'b'], ['a', 'b']],
    ['string', true, [], []],
    ['string', true, 'a', undefined],
    ['string', true, ['a', null], undefined],
    ['node-ref', true, [ref, ref], [ref, ref]],
    ['timestamp', true, ['2024-01-01T00:00:00Z', '1970-01-01T00:00:00.001Z'], [Date.UTC(2024, 0, 1), 1]],
    ['json', true, [{}, [1]], ['{}', '[1]']],
    ['int32', true, [1, 2 ** 40], undefined],
    ['date', true, null, null],
  ])('%s (list: %s) of %j is %j', (kind, list, value, expected) => {
    expect(columnValue({ kind, list }, value)).toEqual(expected);
  });
});

describe('instanceRow', () => {
  const view: ViewDefinition = {
    space: 'cdf_cdm',
    externalId: 'Pump',
    version: 'v1',
    properties: Object.fromEntries(
      (
        [['name', 'text'], ['type', 'enum'], ['weight', 'float64'], ['installed', 'date'], ['parent', 'direct']] as const
      ).map(([name, type]) => [name, { container: { space: 'cdf_cdm', externalId: 'Pump' }, containerPropertyIdentifier: name, type: { type } }]),
    ),
  };
  const { columns } = instanceColumns(view, 'node');
  const row = (item: Record<string, unknown>) => {
    const values = instanceRow(item, columns, view);
    return Object.fromEntries(columns.map((column, i) => [column.name, values[i]]));
  };
  const node = {
    instanceType: 'node',
    space: 'site_a',
    externalId: 'pump-1',
    version: 3,
    createdTime: 1_700_000_000_000,
    lastUpdatedTime: 1_700_000_100_000,
  };

  it('fills each column from the instance and leaves no extra when every value found its column', () => {
    const item = { ...node, properties: { cdf_cdm: { 'Pump/v1': { name: 'P-1', type: 'centrifugal', weight: 12.5, parent: null } } } };
    expect(row(item)).toEqual({
      ...node,
      type: null,
      deletedTime: null,
      name: 'P-1',
      property_type: 'centrifugal',
      weight: 12.5,
      installed: null,
      parent: null,
      extra: null,
    });
  });

  it('keeps in extra, in the shape of the instance, what the view does not know and what a column cannot hold', () => {
    const item = {
      ...node,
      type: { space: 'types', externalId: 'pump' },
      deletedTime: 'yesterday',
      newField: { a: 1 },
      properties: {
        cdf_cdm: {
          'Pump/v1': { name: 7, weight: 1, installed: '2024-02-30', addedLater: [1, 2] },
          'Other/v2': { x: true },
        },
        site_a: { 'Local/1': {} },
      },
    };
    const values = row(item);
    expect(values).toMatchObject({ type: { space: 'types', externalId: 'pump' }, deletedTime: null, name: null, weight: 1, installed: null });
    expect(JSON.parse(values.extra as string)).toEqual({
      deletedTime: 'yesterday',
      newField: { a: 1 },
      properties: {
        cdf_cdm: { 'Pump/v1': { name: 7, installed: '2024-02-30', addedLater: [1, 2] }, 'Other/v2': { x: true } },
      },
    });
    expect(item.properties.cdf_cdm['Pump/v1'].name).toBe(7);
  });

  it("reads a property named as an object's method only from the instance", () => {
    const text = view.properties.name!;
    const methods: ViewDefinition = { ...view, properties: { toString: text, constructor: text } };
    const all = instanceColumns(methods, 'node').columns;
    const values = instanceRow({ ...node, properties: { cdf_cdm: { 'Pump/v1': { constructor: 'c' } } } }, all, methods);
    expect(values.slice(-3)).toEqual([null, 'c', null]);
  });

  it('keeps properties that are not a mapping whole', () => {
    expect(JSON.parse(row({ ...node, properties: 'odd' }).extra as string)).toEqual({ properties: 'odd' });
  });
});
