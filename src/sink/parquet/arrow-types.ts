/**
 * The Arrow type of each column kind (resources/column-kinds.ts): one table, an entry per kind, as
 * Arrow JS's visitors keep one operation for every type in one place. The columns that fill them
 * are column-builders.ts's table, the names the manifest gives them schemas.ts's.
 */
import {
  Bool,
  type DataType,
  DateDay,
  Field,
  Float32,
  Float64,
  Int32,
  Int64,
  List,
  makeData,
  Map_,
  RecordBatch,
  Schema,
  Struct,
  TimestampMillisecond,
  Utf8,
} from 'apache-arrow';
import { type ColumnKind, type ColumnType, SEQUENCE_COLUMN_FIELDS } from '../../resources/index.js';
import type { Column } from './columns.js';

/** A column as a schema has it: its name and type, and whether every row has a value. */
type SchemaColumn = ColumnType & { readonly name: string; readonly required: boolean };

const utf8 = () => new Utf8();

const ARROW_TYPES: Readonly<Record<ColumnKind, () => DataType>> = {
  'int64': () => new Int64(),
  'int32': () => new Int32(),
  'double': () => new Float64(),
  'float': () => new Float32(),
  'boolean': () => new Bool(),
  'string': utf8,
  // The UTC zone makes readers treat the values as instants, not local wall-clock times.
  'timestamp': () => new TimestampMillisecond('UTC'),
  'date': () => new DateDay(),
  'json': utf8,
  'node-ref': () => new Struct([new Field('space', new Utf8(), false), new Field('externalId', new Utf8(), false)]),
  'int64-list': () => new List(new Field('item', new Int64(), true)),
  'label-list': () => new List(new Field('item', new Utf8(), false)),
  'string-map': () => {
    const entries = new Struct<{ key: Utf8; value: Utf8 }>([
      new Field('key', new Utf8(), false),
      new Field('value', new Utf8(), true),
    ]);
    return new Map_(new Field('entries', entries, false), false);
  },
  // Every field of an element nullable but the required.
  'sequence-columns': () => new List(new Field('item', new Struct(SEQUENCE_COLUMN_FIELDS.map(arrowField)), false)),
  'unknown-fields': utf8,
  'extra-json': utf8,
};

/** The Arrow type of a column: its kind's, or (`list`) a LIST of it whose elements may be null. */
export function arrowType(type: ColumnType): DataType {
  const scalar = ARROW_TYPES[type.kind]();
  return type.list === true ? new List(new Field('item', scalar, true)) : scalar;
}

/** A column as an Arrow field: nullable unless required. */
export function arrowField(column: SchemaColumn): Field {
  return new Field(column.name, arrowType(column), !column.required);
}

/** The Arrow schema of these columns (a collection's, a datapoints stream's, an instance view's), in their order. */
export function columnsSchema(columns: readonly SchemaColumn[]): Schema {
  return new Schema(columns.map(arrowField));
}

/** `rows` rows of `columns`, one per field of `schema` in its order, as a RecordBatch that views them (no copy). */
export function columnsBatch(schema: Schema, columns: readonly Column[], rows: number): RecordBatch {
  const fields = schema.fields;
  const children = columns.map((column, i) => column.toData(fields[i]!.type as DataType));
  const data = makeData({ type: new Struct(fields), length: rows, nullCount: 0, children });
  return new RecordBatch(schema, data);
}
