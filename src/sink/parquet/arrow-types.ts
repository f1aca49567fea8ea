/** Each column kind of the profile: its Arrow type and the column that fills it. */
import {
  Bool,
  type DataType,
  Field,
  Float64,
  Int64,
  List,
  Map_,
  Schema,
  Struct,
  TimestampMillisecond,
  Utf8,
} from 'apache-arrow';
import { BoolColumn, type Column, Float64Column, Int64Column, Utf8Column } from './columns.js';
import { Int64ListColumn, LabelListColumn, StringMapColumn } from './nested-columns.js';
import { type ColumnKind, type ColumnSpec, EXTRA_COLUMN, SEQUENCE_COLUMN_FIELDS } from './schemas.js';
import { StructListColumn } from './struct-list-column.js';

/** The struct of one element of sequences' `columns`: every field nullable but the required. */
function sequenceColumnStruct(): Struct {
  return new Struct(SEQUENCE_COLUMN_FIELDS.map(specField));
}

/** A column as an Arrow field: nullable unless required. */
function specField(spec: ColumnSpec): Field {
  return new Field(spec.name, arrowType(spec.kind), !spec.required);
}

/** The Arrow schema of these columns, in their order. */
export function specSchema(columns: readonly ColumnSpec[]): Schema {
  return new Schema(columns.map(specField));
}

export function arrowType(kind: ColumnKind): DataType {
  switch (kind) {
    case 'int64':
      return new Int64();
    case 'string':
    case 'extra-json':
      return new Utf8();
    case 'boolean':
      return new Bool();
    case 'double':
      return new Float64();
    case 'timestamp':
      // The UTC zone makes readers treat the values as instants, not local wall-clock times.
      return new TimestampMillisecond('UTC');
    case 'int64-list':
      return new List(new Field('item', new Int64(), true));
    case 'label-list':
      return new List(new Field('item', new Utf8(), false));
    case 'string-map': {
      const entries = new Struct<{ key: Utf8; value: Utf8 }>([
        new Field('key', new Utf8(), false),
        new Field('value', new Utf8(), true),
      ]);
      return new Map_(new Field('entries', entries, false), false);
    }
    case 'sequence-columns':
      return new List(new Field('item', sequenceColumnStruct(), false));
  }
}

export function newColumn(kind: ColumnKind, capacity: number): Column {
  switch (kind) {
    case 'int64':
    case 'timestamp':
      return new Int64Column(capacity);
    case 'string':
    case 'extra-json':
      return new Utf8Column(capacity);
    case 'boolean':
      return new BoolColumn(capacity);
    case 'double':
      return new Float64Column(capacity);
    case 'int64-list':
      return new Int64ListColumn(capacity);
    case 'label-list':
      return new LabelListColumn(capacity);
    case 'string-map':
      return new StringMapColumn(capacity);
    case 'sequence-columns': {
      // A sequence has a few columns, usually fewer than ten.
      const elements = capacity * 4;
      const fields = SEQUENCE_COLUMN_FIELDS.filter((spec) => spec.name !== EXTRA_COLUMN).map((spec) => ({
        name: spec.name,
        required: spec.required,
        column: newColumn(spec.kind, elements),
      }));
      return new StructListColumn(capacity, fields, new Utf8Column(elements));
    }
  }
}
