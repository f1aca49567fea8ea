import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type Data,
  Dictionary,
  Field,
  Int32,
  Int64,
  List,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table,
  tableToIPC,
  TimestampMicrosecond,
  TimestampMillisecond,
  TimestampSecond,
  Uint8,
  Utf8,
} from 'apache-arrow';
import * as wasm from 'parquet-wasm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, DeltaLogError } from '../../src/errors.js';
import {
  deltaColumns,
  deltaDataSchema,
  deltaSchema,
  deltaSchemaString,
  toDeltaBatch,
  toDeltaTable,
} from '../../src/sink/delta/schema.js';
import { type InstanceColumn, type InstanceColumnKind, pointColumns, RESOURCES } from '../../src/resources/index.js';
import { columnsSchema } from '../../src/sink/parquet/arrow-types.js';
import { arrowSchema, RowGroupBuilder } from '../../src/sink/collections/row-group.js';
import { type Duck, openDuck } from '../support/export-duckdb.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';

/**
 * The Delta schema of every Arrow schema the sinks write (collections with metadata columns,
 * datapoints raw and aggregated, an instance view with every column kind), what is refused, the
 * data files' schema with timestamps in microseconds, and schemaString read back, Spark's golden
 * tables included.
 */

let duck: Duck;
beforeAll(async () => {
  duck = await openDuck();
});
afterAll(() => duck.close());
afterEach(removeTempDirs);

const field = (name: string, type: unknown, nullable = true) => ({ name, type, nullable, metadata: {} });
const MAP = { type: 'map', keyType: 'string', valueType: 'string', valueContainsNull: true };
const columnsOf = (schema: Schema) =>
  deltaColumns(deltaSchemaString(schema)).map((c) => `${c.name} ${c.type}${c.nullable ? '' : ' not null'}`);

describe('collections (the sink\'s own arrowSchema, with a metadata column)', () => {
  it('maps every collection, every timestamp to timestamp, lists to arrays, metadata to a map', () => {
    for (const resource of RESOURCES) {
      const schema = arrowSchema(resource, ['site']);
      const delta = deltaSchema(schema);
      expect(delta.fields.map((f) => f.name)).toEqual(schema.fields.map((f) => f.name));
      expect(delta.fields.find((f) => f.name === 'createdTime')?.type).toBe('timestamp');
      expect(delta.fields.find((f) => f.name === 'metadata_site')).toEqual(field('metadata_site', 'string'));
      expect(delta.fields.at(-1)).toEqual(field('extra', 'string'));
    }
    expect(columnsOf(arrowSchema('events', ['site']))).toEqual([
      'id long not null', 'externalId string', 'type string', 'subtype string', 'description string',
      'startTime timestamp', 'endTime timestamp', 'assetIds array<long>', 'source string', 'dataSetId long',
      'metadata map<string,string>', 'createdTime timestamp', 'lastUpdatedTime timestamp', 'metadata_site string',
      'extra string',
    ]);
    expect(columnsOf(arrowSchema('timeseries'))).toContain('isString boolean');
    expect(columnsOf(arrowSchema('relationships'))).toContain('confidence double');
    expect(columnsOf(arrowSchema('assets'))).toContain('labels array<string>');
  });

  it('writes sequences\' columns as an array of structs, exactly as the protocol spells it', () => {
    const columns = deltaSchema(arrowSchema('sequences')).fields.find((f) => f.name === 'columns');
    expect(columns).toEqual(field('columns', {
      type: 'array',
      elementType: {
        type: 'struct',
        fields: [
          field('id', 'long'), field('externalId', 'string'), field('name', 'string'), field('description', 'string'),
          field('valueType', 'string', false), field('metadata', MAP), field('createdTime', 'timestamp'),
          field('lastUpdatedTime', 'timestamp'), field('extra', 'string'),
        ],
      },
      containsNull: false,
    }));
    expect(deltaSchema(arrowSchema('assets')).fields.find((f) => f.name === 'labels')?.type)
      .toEqual({ type: 'array', elementType: 'string', containsNull: false });
    expect(deltaSchema(arrowSchema('events')).fields.find((f) => f.name === 'assetIds')?.type)
      .toEqual({ type: 'array', elementType: 'long', containsNull: true });
  });
});

describe('datapoints (a schema built as PointBatches builds it: pointColumns and the sink\'s columnsSchema)', () => {
  const schemaOf = (shape: Parameters<typeof pointColumns>[0]) => columnsSchema(pointColumns(shape));

  it('maps raw points with status', () => {
    expect(columnsOf(schemaOf({ includeStatus: true }))).toEqual([
      'timeseriesId long not null', 'externalId string', 'timestamp timestamp not null', 'value double',
      'valueString string', 'statusCode long', 'statusSymbol string', 'extra string',
    ]);
  });

  it('maps aggregates: values double, counts long, the granularity a required string', () => {
    expect(columnsOf(schemaOf({ aggregates: ['average', 'count'], granularity: '1h', includeStatus: false }))).toEqual([
      'timeseriesId long not null', 'externalId string', 'granularity string not null',
      'timestamp timestamp not null', 'average double', 'count long', 'extra string',
    ]);
  });
});

describe('instances (the sink\'s own columnsSchema of a view\'s columns)', () => {
  const column = (name: string, kind: InstanceColumnKind, list = false, required = false): InstanceColumn => ({
    name, kind, list, required, from: { property: name, type: kind },
  });

  it('maps every column kind, and lists of them', () => {
    const kinds: InstanceColumnKind[] = [
      'string', 'int32', 'int64', 'float', 'double', 'boolean', 'timestamp', 'date', 'json', 'node-ref',
    ];
    const columns: InstanceColumn[] = [
      column('externalId', 'string', false, true),
      ...kinds.map((kind) => column(`p_${kind.replace('-', '_')}`, kind)),
      column('tags', 'string', true),
      column('when', 'timestamp', true),
      column('assets', 'node-ref', true),
      { name: 'extra', kind: 'extra-json', list: false, required: false, from: { extra: true } },
    ];
    const schema = columnsSchema(columns);
    expect(columnsOf(schema)).toEqual([
      'externalId string not null', 'p_string string', 'p_int32 integer', 'p_int64 long', 'p_float float',
      'p_double double', 'p_boolean boolean', 'p_timestamp timestamp', 'p_date date', 'p_json string',
      'p_node_ref struct<space:string,externalId:string>', 'tags array<string>', 'when array<timestamp>',
      'assets array<struct<space:string,externalId:string>>', 'extra string',
    ]);
    expect(deltaSchema(schema).fields.find((f) => f.name === 'p_node_ref')).toEqual(field('p_node_ref', {
      type: 'struct', fields: [field('space', 'string', false), field('externalId', 'string', false)],
    }));
  });
});

describe('what Delta has no type for', () => {
  const refusal = (schema: Schema) => {
    try {
      deltaSchema(schema);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error('not refused');
  };

  it('is refused, naming the column (nested ones by their path) and the Arrow type', () => {
    expect(refusal(new Schema([new Field('id', new Int64()), new Field('flags', new Uint8())])))
      .toBe("column 'flags' is Arrow Uint8, unsigned (Delta integers are signed): it cannot be written to a Delta table");
    expect(refusal(new Schema([new Field('kind', new Dictionary(new Utf8(), new Int32()))])))
      .toMatch(/^column 'kind' is Arrow Dictionary<Int32, Utf8>, which Delta has no type for/);
    expect(refusal(new Schema([new Field('t', new TimestampMillisecond())])))
      .toMatch(/^column 't' is Arrow Timestamp<MILLISECOND>, without a time zone \(Delta timestamp_ntz needs/);
    expect(refusal(new Schema([new Field('t', new TimestampSecond('UTC'))])))
      .toMatch(/^column 't' is Arrow Timestamp<SECOND, UTC>, not in milliseconds or microseconds/);
    const nested = new Struct([new Field('n', new List(new Field('item', new Uint8())))]);
    expect(refusal(new Schema([new Field('s', nested)]))).toMatch(/^column 's\.n\.item' is Arrow Uint8/);
  });

  it('refuses names Delta refuses: equal but for case, or holding a space or ,;{}()=', () => {
    expect(refusal(new Schema([new Field('metadata_Site', new Utf8()), new Field('metadata_site', new Utf8())])))
      .toBe("columns 'metadata_Site' and 'metadata_site': Delta compares column names without case");
    expect(refusal(new Schema([new Field('a b', new Utf8())]))).toMatch(/^column 'a b': Delta refuses a name/);
  });
});

const DAY = 86_400_000;
/** Milliseconds with a null, a time before 1970 and one with a fraction of a second. */
const MILLIS = [1_700_000_000_123, null, -1, -DAY * 365 * 70 + 7, 0];

function timestampBatch(): RecordBatch {
  const valid = MILLIS.map((ms) => ms !== null);
  const nullBitmap = new Uint8Array([valid.reduce((bits, ok, i) => bits | (ok ? 1 << i : 0), 0)]);
  const time = makeData({
    type: new TimestampMillisecond('UTC'), length: MILLIS.length, nullCount: 1, nullBitmap,
    data: BigInt64Array.from(MILLIS, (ms) => BigInt(ms ?? 0)),
  });
  const ids = BigInt64Array.from(MILLIS, (_, i) => BigInt(i));
  const id = makeData({ type: new Int64(), length: MILLIS.length, data: ids });
  const schema = new Schema([
    new Field('id', new Int64(), false),
    new Field('time', new TimestampMillisecond('UTC'), true),
  ]);
  const data = makeData({ type: new Struct(schema.fields), length: MILLIS.length, nullCount: 0, children: [id, time] });
  return new RecordBatch(schema, data);
}

/** A timestamp column's raw values, null where invalid: apache-arrow's getters give them back in milliseconds. */
function raw(data: Data): (bigint | null)[] {
  const values = data.values as BigInt64Array;
  return Array.from({ length: data.length }, (_, i) => (data.getValid(i) ? values[i]! : null));
}

describe('the data files\' schema and batches', () => {
  it('has every millisecond timestamp in microseconds, nested ones too, and the rest unchanged', () => {
    const schema = arrowSchema('sequences');
    const data = deltaDataSchema(schema);
    expect(data.fields.map((f) => f.name)).toEqual(schema.fields.map((f) => f.name));
    expect(String(data.fields.find((f) => f.name === 'createdTime')?.type)).toBe('Timestamp<MICROSECOND, UTC>');
    expect(String(data.fields.find((f) => f.name === 'columns')?.type)).toContain('createdTime:Timestamp<MICROSECOND, UTC>');
    expect(data.fields.find((f) => f.name === 'id')).toBe(schema.fields.find((f) => f.name === 'id'));
    // The Delta schema of both is the same: timestamp is microseconds whatever the shard held.
    expect(deltaSchemaString(data)).toBe(deltaSchemaString(schema));
  });

  it('multiplies by 1000, keeping nulls and times before 1970; a slice too', () => {
    const original = timestampBatch();
    const batch = toDeltaBatch(original);
    // The id column is not copied.
    expect(batch.getChild('id')!.data[0]!.values).toBe(original.getChild('id')!.data[0]!.values);
    expect(batch.schema.fields[1]!.type).toBeInstanceOf(TimestampMicrosecond);
    const time = batch.getChild('time')!;
    expect(time.nullCount).toBe(1);
    expect(raw(time.data[0] as Data)).toEqual(MILLIS.map((ms) => (ms === null ? null : BigInt(ms) * 1000n)));
    const slice = toDeltaBatch(timestampBatch().slice(1, 4)).getChild('time')!;
    expect(raw(slice.data[0] as Data)).toEqual([null, -1000n, BigInt(MILLIS[3]!) * 1000n]);
  });

  it('converts the timestamps inside sequences\' columns (a list of structs) as the sink fills them', () => {
    const builder = new RowGroupBuilder('sequences', 4);
    builder.add([
      { id: 1, createdTime: -5, columns: [{ externalId: 'a', valueType: 'DOUBLE', createdTime: 1_000 }] },
      { id: 2, columns: [{ externalId: 'b', valueType: 'STRING' }, { externalId: 'c', valueType: 'LONG', createdTime: -2 }] },
    ]);
    const batch = toDeltaBatch(builder.batch());
    expect(String(batch.getChild('columns')!.type)).toContain('createdTime:Timestamp<MICROSECOND, UTC>');
    expect(raw(batch.getChild('createdTime')!.data[0] as Data)).toEqual([-5000n, null]);
    const elements = batch.getChild('columns')!.data[0]!.children[0] as Data;
    const nested = elements.children[elements.type.children.findIndex((f: Field) => f.name === 'createdTime')]!;
    expect(raw(nested)).toEqual([1_000_000n, null, -2000n]);
  });

  it('is read by DuckDB as TIMESTAMP WITH TIME ZONE, each microsecond count the milliseconds times 1000', async () => {
    const table = toDeltaTable(new Table([timestampBatch()]));
    const path = join(tempDir('delta-schema-'), 'part.parquet');
    writeFileSync(path, wasm.writeParquet(wasm.Table.fromIPCStream(tableToIPC(table, 'stream'))));
    const types = await duck.rows(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${path}'))`);
    expect(types.map((row) => [row.column_name, row.column_type])).toEqual([['id', 'BIGINT'], ['time', 'TIMESTAMP WITH TIME ZONE']]);
    const meta = await duck.one(
      `SELECT logical_type FROM parquet_schema('${path}') WHERE name = 'time'`,
    );
    expect(String(meta.logical_type)).toMatch(/isAdjustedToUTC=1.*MICROS/);
    const rows = await duck.rows(`SELECT epoch_us(time) AS us, epoch_ms(time) AS ms FROM read_parquet('${path}') ORDER BY id`);
    expect(rows.map((row) => [row.us, row.ms])).toEqual(
      MILLIS.map((ms) => (ms === null ? [null, null] : [BigInt(ms) * 1000n, BigInt(ms)])),
    );
  });
});

const GOLDEN = fileURLToPath(new URL('../fixtures/delta-golden/', import.meta.url));

/** Every schemaString of the metaData lines of a golden table's JSON commits. */
function goldenSchemaStrings(table: string): string[] {
  const log = join(GOLDEN, table, '_delta_log');
  return readdirSync(log).filter((name) => name.endsWith('.json')).flatMap((name) =>
    readFileSync(join(log, name), 'utf8').split('\n').filter((line) => line.includes('"metaData"'))
      .map((line) => (JSON.parse(line) as { metaData: { schemaString?: string } }).metaData.schemaString)
      .filter((schema): schema is string => schema !== undefined));
}

describe('schemaString read back', () => {
  it('reads every golden table\'s schemaString Spark wrote', () => {
    const tables = readdirSync(GOLDEN, { withFileTypes: true }).filter((entry) => entry.isDirectory());
    let read = 0;
    for (const table of tables) {
      for (const schema of goldenSchemaStrings(table.name)) {
        expect(deltaColumns(schema).length).toBeGreaterThan(0);
        read++;
      }
    }
    expect(read).toBe(9);
    expect(deltaColumns(goldenSchemaStrings('snapshot-data2-deleted')[0]!)).toEqual([
      { name: 'col1', type: 'integer', nullable: true }, { name: 'col2', type: 'string', nullable: true },
    ]);
    expect(deltaColumns(goldenSchemaStrings('data-reader-partition-values')[0]!).map((c) => `${c.name} ${c.type}`)).toEqual([
      'as_int integer', 'as_long long', 'as_byte byte', 'as_short short', 'as_boolean boolean', 'as_float float',
      'as_double double', 'as_string string', 'as_string_lit_null string', 'as_date date', 'as_timestamp timestamp',
      'as_big_decimal decimal(1,0)', 'as_list_of_records array<struct<val:integer>>',
      'as_nested_struct struct<aa:string,ab:string,ac:struct<aca:integer,acb:long>>', 'value string',
    ]);
  });

  it('reads back what deltaSchemaString wrote', () => {
    const schema = arrowSchema('sequences');
    expect(JSON.parse(deltaSchemaString(schema))).toEqual(deltaSchema(schema));
    expect(deltaColumns(deltaSchemaString(schema)).map((c) => c.name)).toEqual(schema.fields.map((f) => f.name));
  });

  it('refuses what is not a struct type, naming what is wrong', () => {
    expect(() => deltaColumns('{')).toThrow(DeltaLogError);
    expect(() => deltaColumns('{"type":"array"}')).toThrow('schemaString is not a struct type');
    expect(() => deltaColumns('{"type":"struct","fields":[{"name":"a","type":"long"}]}'))
      .toThrow('schemaString.fields[0] is not a field with a name, a type and nullable');
    expect(() => deltaColumns('{"type":"struct","fields":[{"name":"a","type":{"type":"array","elementType":"long"},"nullable":true}]}'))
      .toThrow('schemaString.a: an array without containsNull');
  });
});
