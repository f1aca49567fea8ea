import type { Resource } from '../../config/job-schema.js';
import { type ColumnKind, type ColumnSpec, resourceSpec } from '../../resources/index.js';

export { type ColumnKind, type ColumnSpec, EXTRA_COLUMN } from '../../resources/index.js';

/** The Parquet columns of a collection, as its file in resources/ lists them. */
export function columnsOf(resource: Resource): readonly ColumnSpec[] {
  return resourceSpec(resource).columns;
}

const TYPE_NAMES: Record<ColumnKind, string> = {
  'int64': 'INT64',
  'string': 'STRING',
  'timestamp': 'TIMESTAMP(MILLIS, UTC)',
  'int64-list': 'LIST<INT64>',
  'string-map': 'MAP<STRING, STRING>',
  'extra-json': 'STRING (JSON object of fields outside the schema)',
};

/** The columns of a resource as the manifest records them. */
export function schemaColumns(resource: Resource): { name: string; type: string }[] {
  return columnsOf(resource).map((column) => ({ name: column.name, type: TYPE_NAMES[column.kind] }));
}
