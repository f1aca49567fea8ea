import type { Resource } from '../../config/job-schema.js';

/**
 * Column kinds of the Parquet profile (DESIGN.md): ids INT64, times TIMESTAMP(MILLIS, UTC),
 * metadata MAP<STRING,STRING>, assetIds LIST<INT64>, and `extra`: every field the schema does not
 * know, as one JSON object string, so no field is dropped.
 */
export type ColumnKind = 'int64' | 'string' | 'timestamp' | 'int64-list' | 'string-map' | 'extra-json';

export interface ColumnSpec {
  name: string;
  kind: ColumnKind;
  /** Required columns must be present in every item. */
  required: boolean;
}

const c = (name: string, kind: ColumnKind, required = false): ColumnSpec => ({ name, kind, required });

export const EXTRA_COLUMN = 'extra';

export const SCHEMAS: Record<Resource, readonly ColumnSpec[]> = {
  events: [
    c('id', 'int64', true),
    c('externalId', 'string'),
    c('type', 'string'),
    c('subtype', 'string'),
    c('description', 'string'),
    c('startTime', 'timestamp'),
    c('endTime', 'timestamp'),
    c('assetIds', 'int64-list'),
    c('source', 'string'),
    c('dataSetId', 'int64'),
    c('metadata', 'string-map'),
    c('createdTime', 'timestamp'),
    c('lastUpdatedTime', 'timestamp'),
    c(EXTRA_COLUMN, 'extra-json'),
  ],
  assets: [
    c('id', 'int64', true),
    c('externalId', 'string'),
    c('name', 'string'),
    c('parentId', 'int64'),
    c('rootId', 'int64'),
    c('description', 'string'),
    c('source', 'string'),
    c('dataSetId', 'int64'),
    c('metadata', 'string-map'),
    c('createdTime', 'timestamp'),
    c('lastUpdatedTime', 'timestamp'),
    c(EXTRA_COLUMN, 'extra-json'),
  ],
};

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
  return SCHEMAS[resource].map((column) => ({ name: column.name, type: TYPE_NAMES[column.kind] }));
}
