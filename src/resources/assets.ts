import { column, EXTERNAL_ID_PREFIX, metadataFilter, refsFilter, type ResourceSpec, TIMES_AND_EXTRA, timeRange } from './resource.js';

/** Assets: trees of equipment and places (`rootId`, `parentId`). */
export const assets = {
  name: 'assets',
  key: 'id',
  countable: true,
  schemaVersion: 2,
  defaultLimit: 100,
  filters: [
    { key: 'source', kind: 'string', field: 'source', maxLength: 128 },
    ...timeRange('lastUpdatedTime'),
    EXTERNAL_ID_PREFIX,
    metadataFilter({ maxValueBytes: 10_240, maxTotalBytes: 10_240 }),
    { key: 'name', kind: 'string', field: 'name', maxLength: 140 },
    { key: 'parentIds', kind: 'ids', field: 'parentIds', maxItems: 100 },
    { key: 'parentExternalIds', kind: 'strings', field: 'parentExternalIds', maxItems: 100, maxLength: 255 },
    { key: 'rootIds', kind: 'ids', field: 'rootIds', maxItems: 100, refsInBody: true },
    { key: 'root', kind: 'boolean', field: 'root' },
    ...timeRange('createdTime'),
    refsFilter('assetSubtreeIds', 100),
    refsFilter('dataSetIds', 1000),
  ],
  columns: [
    column('id', 'int64', true),
    column('externalId', 'string'),
    column('name', 'string'),
    column('parentId', 'int64'),
    column('parentExternalId', 'string'),
    column('rootId', 'int64'),
    column('description', 'string'),
    column('source', 'string'),
    column('dataSetId', 'int64'),
    column('labels', 'label-list'),
    column('metadata', 'string-map'),
    ...TIMES_AND_EXTRA,
  ],
} as const satisfies ResourceSpec<'assets'>;
