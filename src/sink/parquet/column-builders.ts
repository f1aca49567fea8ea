/**
 * The column that fills each column kind's Arrow data (resources/column-kinds.ts): one table, an
 * entry per kind, beside arrow-types.ts's table of their Arrow types. The column of a kind an
 * instance column may be checks a value whole before it takes it (CheckedColumn), so that it can
 * be a struct field or a list element.
 */
import { type ColumnKind, EXTRA_COLUMN, type InstanceColumnKind, SEQUENCE_COLUMN_FIELDS } from '../../resources/index.js';
import { BoolColumn, type CheckedColumn, type Column, Float64Column, Int64Column, Utf8Column } from './columns.js';
import { Int64ListColumn, LabelListColumn, StringMapColumn } from './nested-columns.js';
import { StructListColumn } from './struct-list-column.js';
import { Float32Column, Int32Column, ListColumn, StructColumn } from './typed-columns.js';

const text = (capacity: number) => new Utf8Column(capacity);
const int64 = (capacity: number) => new Int64Column(capacity);
const int32 = (capacity: number) => new Int32Column(capacity);

const BUILDERS = {
  'int64': int64,
  'int32': int32,
  'double': (capacity: number) => new Float64Column(capacity),
  'float': (capacity: number) => new Float32Column(capacity),
  'boolean': (capacity: number) => new BoolColumn(capacity),
  'string': text,
  'timestamp': int64,
  'date': int32,
  'json': text,
  'node-ref': (capacity: number) =>
    new StructColumn(capacity, [
      { name: 'space', required: true, column: new Utf8Column(capacity) },
      { name: 'externalId', required: true, column: new Utf8Column(capacity) },
    ]),
  'int64-list': (capacity: number) => new Int64ListColumn(capacity),
  'label-list': (capacity: number) => new LabelListColumn(capacity),
  'string-map': (capacity: number) => new StringMapColumn(capacity),
  'sequence-columns': (capacity: number): StructListColumn => {
    // A sequence has a few columns, usually fewer than ten.
    const elements = capacity * 4;
    const fields = SEQUENCE_COLUMN_FIELDS.filter((spec) => spec.name !== EXTRA_COLUMN).map((spec) => ({
      name: spec.name,
      required: spec.required,
      column: newColumn(spec.kind, elements),
    }));
    return new StructListColumn(capacity, fields, new Utf8Column(elements));
  },
  'unknown-fields': text,
  'extra-json': text,
} as const satisfies Readonly<Record<ColumnKind, (capacity: number) => Column>>;

/** The column of kind K: an instance column's kind's is a CheckedColumn. */
export type ColumnOf<K extends ColumnKind> = ReturnType<(typeof BUILDERS)[K]>;

/** A column of `kind` with room for `capacity` rows at first (it grows past them). */
export function newColumn<K extends ColumnKind>(kind: K, capacity: number): ColumnOf<K> {
  return BUILDERS[kind](capacity) as ColumnOf<K>;
}

/** An instance column's column: its kind's, or (`list`) a LIST of it with room for two elements a row at first. */
export function newInstanceColumn(
  type: { readonly kind: InstanceColumnKind; readonly list: boolean },
  capacity: number,
): CheckedColumn {
  return type.list ? new ListColumn(capacity, newColumn(type.kind, capacity * 2)) : newColumn(type.kind, capacity);
}
