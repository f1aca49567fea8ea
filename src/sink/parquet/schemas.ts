import type { Resource } from '../../config/job-schema.js';
import { type ColumnKind, type ColumnSpec, resourceSpec, SEQUENCE_COLUMN_FIELDS } from '../../resources/index.js';

export { type ColumnKind, type ColumnSpec, EXTRA_COLUMN, SEQUENCE_COLUMN_FIELDS } from '../../resources/index.js';

/** The Parquet columns of a collection, as its file in resources/ lists them. */
export function columnsOf(resource: Resource): readonly ColumnSpec[] {
  return resourceSpec(resource).columns;
}

/** A column kind as the manifest names its Parquet type. */
function typeName(kind: ColumnKind): string {
  switch (kind) {
    case 'int64':
      return 'INT64';
    case 'string':
      return 'STRING';
    case 'boolean':
      return 'BOOLEAN';
    case 'double':
      return 'DOUBLE';
    case 'timestamp':
      return 'TIMESTAMP(MILLIS, UTC)';
    case 'int64-list':
      return 'LIST<INT64>';
    case 'label-list':
      return 'LIST<STRING>';
    case 'string-map':
      return 'MAP<STRING, STRING>';
    case 'sequence-columns':
      return `LIST<STRUCT<${SEQUENCE_COLUMN_FIELDS.map((field) => `${field.name} ${typeName(field.kind)}`).join(', ')}>>`;
    case 'extra-json':
      return 'STRING (JSON object of fields outside the schema)';
  }
}

/** The columns of a resource as the manifest records them. */
export function schemaColumns(resource: Resource): { name: string; type: string }[] {
  return typedColumns(columnsOf(resource));
}

/** Columns with their types as the manifest records them. */
export function typedColumns(columns: readonly ColumnSpec[]): { name: string; type: string }[] {
  return columns.map((column) => ({ name: column.name, type: typeName(column.kind) }));
}
