import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { OutputConfig, Resource } from '../../src/config/job-schema.js';
import { BadItemError } from '../../src/errors.js';
import { ParquetShardWriter } from '../../src/sink/parquet/parquet-writer.js';
import { expectedDuckColumns, parquetAt, parquetItems } from '../support/export-duckdb.js';
import { sql, tempDir } from '../support/export-harness.js';
import { parquetSuite } from '../support/parquet-deps.js';

/**
 * The column kinds the other collections brought: BOOLEAN, DOUBLE and sequences' LIST<STRUCT>,
 * each written by the real writer and read back by DuckDB, value for value, nulls included.
 */
type Item = Record<string, unknown>;

const OPTIONS: OutputConfig['parquet'] = { compression: 'zstd', rowGroupRows: 1000 };
const T = Date.UTC(2024, 4, 1);

const suite = parquetSuite();
const { parquet } = suite;

async function roundTrip(resource: Resource, items: readonly Item[], pageSize = 7) {
  const path = join(tempDir('bulk-extract-kinds-'), '000000.parquet');
  const writer = await ParquetShardWriter.create(path, resource, OPTIONS, parquet);
  for (let i = 0; i < items.length; i += pageSize) await writer.append(items.slice(i, i + pageSize));
  await writer.commit();
  return { path, back: await parquetItems(suite.duck, resource, path) };
}

async function describeFile(path: string) {
  const rows = await suite.duck.rows(`DESCRIBE SELECT * FROM ${parquetAt(path)}`);
  return rows.map((row) => ({ name: String(row.column_name), type: String(row.column_type) }));
}

function timeseries(i: number): Item {
  const item: Item = {
    id: 7_000_000_000_000 + i,
    externalId: `TS-${i}`,
    isString: i % 3 === 0,
    type: i % 3 === 0 ? 'string' : 'numeric',
    isStep: i % 2 === 0,
    createdTime: T + i,
    lastUpdatedTime: T + 2 * i,
  };
  if (i % 4 !== 0) item.unit = '°C';
  if (i % 5 === 0) item.securityCategories = [];
  if (i % 7 === 0) item.instanceId = { space: 'sp', externalId: `TS-${i}` };
  return item;
}

function sequence(i: number): Item {
  const columns = Array.from({ length: i % 4 }, (_, c) => {
    const column: Item = { id: 90_000 + 8 * i + c, valueType: ['STRING', 'DOUBLE', 'LONG'][c % 3], createdTime: T + c, lastUpdatedTime: T + c + 1 };
    if (c !== 1) column.externalId = `col-${i}-${c}`;
    if (c === 2) column.metadata = { unit: 'bar', ключ: '値' };
    if (c === 0) column.metadata = {};
    if (i % 5 === 1 && c === 0) column.somethingNew = { nested: [1, 2] };
    return column;
  });
  return { id: 9_000_000_000_000 + i, name: `seq ${i}`, columns, createdTime: T, lastUpdatedTime: T + i };
}

function relationship(i: number): Item {
  const item: Item = {
    externalId: `REL-${i}`,
    sourceExternalId: `AS-${i}`,
    sourceType: 'asset',
    targetExternalId: `TS-${i}`,
    targetType: 'timeSeries',
    createdTime: T,
    lastUpdatedTime: T + i,
  };
  if (i % 4 !== 3) item.confidence = [0, 1, 0.5, 0.123456789][i % 4];
  if (i % 3 === 0) item.labels = [{ externalId: 'pump' }];
  return item;
}

function asset(i: number): Item {
  const item: Item = { id: 3_000_000_000_000 + i, name: `pump ${i}`, rootId: 3_000_000_000_000, createdTime: T, lastUpdatedTime: T + i };
  if (i > 0) Object.assign(item, { parentId: 3_000_000_000_000, parentExternalId: 'AS-0' });
  if (i % 3 === 1) item.labels = [{ externalId: 'pump' }, { externalId: 'critical' }];
  if (i % 3 === 2) item.labels = [];
  if (i % 5 === 0) item.geoLocation = { type: 'Feature', geometry: { type: 'Point', coordinates: [5.3, 60.4] } };
  return item;
}

describe('Parquet column kinds of the other collections, read back by DuckDB', () => {
  it.each([
    ['timeseries', timeseries],
    ['sequences', sequence],
    ['relationships', relationship],
    ['assets', asset],
  ] as const)('%s: the schema is the profile\'s, and every value comes back as the platform sent it', async (resource, make) => {
    const items = Array.from({ length: 60 }, (_, i) => make(i));
    const { path, back } = await roundTrip(resource, items);
    expect(await describeFile(path)).toEqual(expectedDuckColumns(resource));
    expect(back).toEqual(items);
  });

  it('sequences: an empty columns list stays empty and an absent one stays NULL', async () => {
    const { path } = await roundTrip('sequences', [
      { id: 1, columns: [] },
      { id: 2 },
      { id: 3, columns: [{ valueType: 'LONG' }] },
    ]);
    const rows = await suite.duck.rows(`SELECT id, len(columns) AS n FROM ${parquetAt(path)} ORDER BY id`);
    expect(rows.map((row) => [Number(row.id), row.n === null ? null : Number(row.n)])).toEqual([
      [1, 0],
      [2, null],
      [3, 1],
    ]);
    const unnested = await suite.duck.rows(`SELECT unnest(columns).valueType AS t FROM ${parquetAt(path)}`);
    expect(unnested.map((row) => row.t)).toEqual(['LONG']);
  });

  it('labels: LIST<VARCHAR> of their externalIds, which SQL filters on; empty stays empty, absent NULL', async () => {
    const { path } = await roundTrip('assets', Array.from({ length: 6 }, (_, i) => asset(i)));
    const rows = await suite.duck.rows(`SELECT id, labels, list_contains(labels, 'critical') AS critical FROM ${parquetAt(path)} ORDER BY id`);
    const labels = (row: (typeof rows)[number]) =>
      (row.labels === null ? null : (row.labels as { items: unknown[] }).items);
    expect(rows.map((row) => [row.critical, labels(row)])).toEqual([
      [null, null],
      [true, ['pump', 'critical']],
      [false, []],
      [null, null],
      [true, ['pump', 'critical']],
      [false, []],
    ]);
    const extra = await suite.duck.rows(`SELECT extra FROM ${parquetAt(path)} WHERE extra IS NOT NULL`);
    expect(extra.map((row) => Object.keys(JSON.parse(String(row.extra)) as object))).toEqual([['geoLocation'], ['geoLocation']]);
  });

  it('sequences: a column\'s id is a field of the struct', async () => {
    const { path } = await roundTrip('sequences', [sequence(2)]);
    const ids = await suite.duck.rows(`SELECT unnest(columns).id AS id FROM ${parquetAt(path)}`);
    expect(ids.map((row) => Number(row.id))).toEqual([90_016, 90_017]);
  });

  it('relationships: the key externalId is the first column and required', async () => {
    const { path } = await roundTrip('relationships', [relationship(1)]);
    const schema = await suite.duck.rows(`SELECT name, repetition_type FROM parquet_schema(${sql(path)}) WHERE name = 'externalId'`);
    expect(schema).toEqual([{ name: 'externalId', repetition_type: 'REQUIRED' }]);
  });

  it.each([
    ['timeseries', { ...timeseries(1), isStep: 'yes' }, /timeseries item id=7000000000001: field 'isStep' expected true or false, got string "yes"/],
    ['relationships', { ...relationship(2), confidence: '0.5' }, /relationships item externalId=REL-2: field 'confidence' expected a number/],
    ['sequences', { ...sequence(3), columns: [{ valueType: 'LONG' }, { name: 'x' }] }, /sequences item id=9000000000003: field 'columns' element 1 has no 'valueType'/],
    ['sequences', { ...sequence(3), columns: [{ valueType: 'LONG', createdTime: 'today' }] }, /field 'columns' element 0, 'createdTime': expected an integer, got string "today"/],
    ['sequences', { ...sequence(3), columns: [7] }, /field 'columns' element 0 is number 7, not an object/],
    ['assets', { ...asset(1), labels: [{ externalId: 'pump', color: 'red' }] }, /assets item id=3000000000001: field 'labels' expected a list of \{externalId: string\} objects, got element 0/],
    ['assets', { ...asset(1), labels: 'pump' }, /field 'labels' expected a list of \{externalId: string\} objects, got string "pump"/],
    ['relationships', { ...relationship(4), externalId: undefined }, /A relationships item has no 'externalId'/],
  ] as const)('%s: a wrong value is an E_BAD_ITEM naming the item by its key and the field: %j', async (resource, item, message) => {
    const path = join(tempDir('bulk-extract-kinds-'), '000000.parquet');
    const writer = await ParquetShardWriter.create(path, resource, OPTIONS, parquet);
    const error = await writer.append([item]).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(BadItemError);
    expect((error as Error).message).toMatch(message);
    await writer.abort();
  });
});
