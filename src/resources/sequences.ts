import { column, metadataFilter, refsFilter, type ResourceSpec, TIMES_AND_EXTRA, timeRange } from './resource.js';

/**
 * Sequences: the metadata of tables of rows, with their `columns` (a list of structs in Parquet).
 * Their GET list takes no filter at all: every filter is sent by POST. The platform's default page
 * is 25 items; bulk-extract always asks for the stream's `limit`.
 */
export const sequences = {
  name: 'sequences',
  key: 'id',
  countable: true,
  schemaVersion: 2,
  defaultLimit: 25,
  filters: [
    ...timeRange('lastUpdatedTime', 'body'),
    ...timeRange('createdTime', 'body'),
    { key: 'externalIdPrefix', kind: 'string', field: 'externalIdPrefix', maxLength: 255, via: 'body' },
    metadataFilter({}),
    { key: 'name', kind: 'string', field: 'name', maxLength: 255, via: 'body' },
    { key: 'assetIds', kind: 'ids', field: 'assetIds', maxItems: 100, via: 'body' },
    { key: 'rootAssetIds', kind: 'ids', field: 'rootAssetIds', maxItems: 100, via: 'body' },
    refsFilter('assetSubtreeIds', 100),
    refsFilter('dataSetIds', 100),
  ],
  columns: [
    column('id', 'int64', true),
    column('externalId', 'string'),
    column('name', 'string'),
    column('description', 'string'),
    column('assetId', 'int64'),
    column('columns', 'sequence-columns'),
    column('dataSetId', 'int64'),
    column('metadata', 'string-map'),
    ...TIMES_AND_EXTRA,
  ],
} as const satisfies ResourceSpec<'sequences'>;
