/**
 * The manifest's schema: each column kind's Parquet type as the manifest names it
 * (resources/column-kinds.ts), one table with an entry per kind, beside arrow-types.ts's table of
 * their Arrow types; no Arrow is loaded here.
 */
import type { Resource } from '../../config/job-schema.js';
import {
  type ColumnKind,
  type ColumnSpec,
  type ColumnType,
  resourceSpec,
  SEQUENCE_COLUMN_FIELDS,
} from '../../resources/index.js';

export { type ColumnKind, type ColumnSpec, EXTRA_COLUMN, SEQUENCE_COLUMN_FIELDS } from '../../resources/index.js';

/** The Parquet columns of a collection, as its file in resources/ lists them. */
export function columnsOf(resource: Resource): readonly ColumnSpec[] {
  return resourceSpec(resource).columns;
}

const TYPE_NAMES: Readonly<Record<ColumnKind, string>> = {
  'int64': 'INT64',
  'int32': 'INT32',
  'double': 'DOUBLE',
  'float': 'FLOAT',
  'boolean': 'BOOLEAN',
  'string': 'STRING',
  'timestamp': 'TIMESTAMP(MILLIS, UTC)',
  'date': 'DATE',
  'json': 'STRING (JSON)',
  'node-ref': 'STRUCT<space STRING, externalId STRING>',
  'int64-list': 'LIST<INT64>',
  'label-list': 'LIST<STRING>',
  'string-map': 'MAP<STRING, STRING>',
  // Read when asked: it names its fields' kinds from this table.
  get 'sequence-columns'() {
    return `LIST<STRUCT<${SEQUENCE_COLUMN_FIELDS.map((field) => `${field.name} ${typeName(field)}`).join(', ')}>>`;
  },
  'unknown-fields': 'STRING (JSON object of fields outside the schema)',
  'extra-json': 'STRING (JSON object of what no column holds)',
};

/** A column's type as the manifest names it: its kind's, or (`list`) `LIST<...>` of it. */
export function typeName(type: ColumnType): string {
  const scalar = TYPE_NAMES[type.kind];
  return type.list === true ? `LIST<${scalar}>` : scalar;
}

/** The columns of a resource as the manifest records them. */
export function schemaColumns(resource: Resource): { name: string; type: string }[] {
  return typedColumns(columnsOf(resource));
}

/** Columns (a collection's, a datapoints stream's, an instance view's) with their types, as the manifest has them. */
export function typedColumns(
  columns: readonly (ColumnType & { readonly name: string })[],
): { name: string; type: string }[] {
  return columns.map((column) => ({ name: column.name, type: typeName(column) }));
}
