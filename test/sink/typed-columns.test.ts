import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DateDay,
  type DataType,
  Field,
  Float32,
  Float64,
  Int32,
  Int64,
  List,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table,
  tableToIPC,
  Utf8,
} from 'apache-arrow';
import * as wasm from 'parquet-wasm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BoolColumn, type CheckedColumn, Float64Column, Int64Column, Utf8Column } from '../../src/sink/parquet/columns.js';
import { Float32Column, Int32Column, ListColumn, StructColumn } from '../../src/sink/parquet/typed-columns.js';
import { type Duck, openDuck } from '../support/export-duckdb.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';

/**
 * The columns data-model instances add (INT32, DATE, FLOAT, a struct of {space, externalId}, lists
 * of each), written to Parquet by parquet-wasm as the export does and read back by DuckDB.
 */
let duck: Duck;

beforeAll(async () => {
  duck = await openDuck();
});

afterAll(() => duck.close());
afterEach(removeTempDirs);

const text = () => new Utf8Column(4);
const ref = () =>
  new StructColumn(4, [
    { name: 'space', required: true, column: text() },
    { name: 'externalId', required: true, column: text() },
  ]);
const refType = () => new Struct([new Field('space', new Utf8(), false), new Field('externalId', new Utf8(), false)]);

function columnsAndFields(): [CheckedColumn, Field][] {
  return [
    [new Int32Column(2), new Field('count32', new Int32(), true)],
    [new Int32Column(2), new Field('day', new DateDay(), true)],
    [new Float32Column(2), new Field('ratio', new Float32(), true)],
    [new Int64Column(2), new Field('big', new Int64(), true)],
    [ref(), new Field('parent', refType(), true)],
    [new ListColumn(2, ref()), new Field('assets', new List(new Field('item', refType(), true)), true)],
    [new ListColumn(2, text()), new Field('tags', new List(new Field('item', new Utf8(), true)), true)],
    [
      new ListColumn(2, new Float64Column(2)),
      new Field('readings', new List(new Field('item', new Float64(), true)), true),
    ],
  ];
}

const ROWS: Record<string, unknown>[] = [
  {
    count32: -2147483648,
    day: 19723, // 2024-01-01
    ratio: 0.1,
    big: 9007199254740993n,
    parent: { space: 'site_a', externalId: 'pump-1' },
    assets: [
      { space: 'site_a', externalId: 'a' },
      { space: 'site_b', externalId: 'b' },
    ],
    tags: ['east', 'ölpumpe 温度'],
    readings: [1.5, -2],
  },
  { count32: null, day: null, ratio: null, big: null, parent: null, assets: null, tags: null, readings: null },
  {
    count32: 2147483647,
    day: -1,
    ratio: 3,
    big: -9223372036854775808n,
    parent: undefined,
    assets: [],
    tags: [],
    readings: [],
  },
  {
    count32: 7,
    day: 0,
    ratio: -0.5,
    big: 42,
    parent: { space: 's', externalId: 'e' },
    assets: [{ space: 's', externalId: 'x' }],
    tags: ['t'],
    readings: [0],
  },
];

function written(): string {
  const pairs = columnsAndFields();
  for (const row of ROWS) for (const [column, field] of pairs) column.push(row[field.name]);
  const schema = new Schema(pairs.map(([, field]) => field));
  const children = pairs.map(([column, field]) => column.toData(field.type as DataType));
  const data = makeData({ type: new Struct(schema.fields), length: ROWS.length, nullCount: 0, children });
  const batch = new RecordBatch(schema, data);
  const table = wasm.Table.fromIPCStream(tableToIPC(new Table([batch]), 'stream'));
  const path = join(tempDir('typed-columns-'), 'typed.parquet');
  writeFileSync(path, wasm.writeParquet(table));
  return path;
}

describe('typed columns through Parquet', () => {
  it('DuckDB reads each type and value as written', async () => {
    const path = written();
    const types = await duck.rows(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${path}'))`);
    expect(Object.fromEntries(types.map((row) => [row.column_name, row.column_type]))).toEqual({
      count32: 'INTEGER',
      day: 'DATE',
      ratio: 'FLOAT',
      big: 'BIGINT',
      parent: 'STRUCT(space VARCHAR, externalId VARCHAR)',
      assets: 'STRUCT(space VARCHAR, externalId VARCHAR)[]',
      tags: 'VARCHAR[]',
      readings: 'DOUBLE[]',
    });
    const rows = await duck.rows(
      `SELECT count32, CAST(day AS VARCHAR) AS day, ratio, CAST(big AS VARCHAR) AS big, to_json(parent)::VARCHAR AS parent,
        to_json(assets)::VARCHAR AS assets, to_json(tags)::VARCHAR AS tags, to_json(readings)::VARCHAR AS readings
       FROM read_parquet('${path}')`,
    );
    expect(rows).toEqual([
      {
        count32: -2147483648,
        day: '2024-01-01',
        ratio: Math.fround(0.1),
        big: '9007199254740993',
        parent: '{"space":"site_a","externalId":"pump-1"}',
        assets: '[{"space":"site_a","externalId":"a"},{"space":"site_b","externalId":"b"}]',
        tags: '["east","ölpumpe 温度"]',
        readings: '[1.5,-2.0]',
      },
      { count32: null, day: null, ratio: null, big: null, parent: null, assets: null, tags: null, readings: null },
      { count32: 2147483647, day: '1969-12-31', ratio: 3, big: '-9223372036854775808', parent: null, assets: '[]', tags: '[]', readings: '[]' },
      {
        count32: 7,
        day: '1970-01-01',
        ratio: -0.5,
        big: '42',
        parent: '{"space":"s","externalId":"e"}',
        assets: '[{"space":"s","externalId":"x"}]',
        tags: '["t"]',
        readings: '[0.0]',
      },
    ]);
  });
});

describe('accepts: a value is checked whole before any of it is written', () => {
  it('refuses what a column cannot hold, and push() then throws without writing', () => {
    const int32 = new Int32Column(1);
    for (const value of [2147483648, -2147483649, 1.5, '1', true, 10n]) expect(int32.accepts(value)).toBe(false);
    expect(int32.accepts(null)).toBe(true);
    const parent = ref();
    expect(parent.accepts({ space: 's' })).toBe(false); // a required field missing
    expect(parent.accepts({ space: 's', externalId: 'e', extra: 1 })).toBe(false); // a field it has no column for
    expect(parent.accepts({ space: 's', externalId: 7 })).toBe(false);
    expect(parent.accepts(['s', 'e'])).toBe(false);
    const list = new ListColumn(1, ref());
    expect(list.accepts([{ space: 's', externalId: 'a' }, { space: 's' }])).toBe(false);
    expect(() => list.push([{ space: 's', externalId: 'a' }, { space: 's' }])).toThrow(/expected a list/);
    expect(list.length).toBe(0);
    list.push([{ space: 's', externalId: 'a' }]);
    expect(list.length).toBe(1);
    expect(new Float32Column(1).accepts('NaN')).toBe(false);
    expect(() => new Int64Column(1).push(2n ** 63n)).toThrow(/64-bit integer/);
  });

  it('the flat columns of columns.ts say what their push() takes: INT64, STRING, BOOLEAN, DOUBLE', () => {
    const cases: [CheckedColumn, unknown[], unknown[]][] = [
      [new Int64Column(1), [null, undefined, 0, -(2 ** 53) + 1, 2n ** 63n - 1n, -(2n ** 63n)], [2 ** 53, 1.5, '1', 2n ** 63n, true]],
      [new Utf8Column(1), [null, '', 'x'], [1, true, ['x'], {}]],
      [new BoolColumn(1), [null, true, false], [0, 'true']],
      [new Float64Column(1), [null, 1, 1.5, NaN, Infinity], ['1', 1n, false]],
    ];
    for (const [column, taken, refused] of cases) {
      for (const value of taken) {
        expect(column.accepts(value), `${column.constructor.name} takes ${String(value)}`).toBe(true);
        expect(() => column.push(value)).not.toThrow();
      }
      for (const value of refused) {
        expect(column.accepts(value), `${column.constructor.name} refuses ${String(value)}`).toBe(false);
        expect(() => column.push(value)).toThrow();
      }
    }
  });
});
