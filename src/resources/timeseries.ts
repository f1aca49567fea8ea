import { column, metadataFilter, refsFilter, type ResourceSpec, TIMES_AND_EXTRA, timeRange } from './resource.js';

/**
 * Time series: the metadata of series of datapoints, each on at most one asset (`assetId`). Their
 * GET list filters only by assets and `externalIdPrefix`; every other filter, the times included,
 * is sent by POST.
 */
export const timeseries = {
  name: 'timeseries',
  key: 'id',
  countable: true,
  schemaVersion: 1,
  defaultLimit: 100,
  filters: [
    { key: 'externalIdPrefix', kind: 'string', field: 'externalIdPrefix', maxLength: 255 },
    { key: 'assetIds', kind: 'ids', field: 'assetIds', maxItems: 100 },
    { key: 'rootAssetIds', kind: 'ids', field: 'rootAssetIds', maxItems: 100 },
    ...timeRange('lastUpdatedTime', 'body'),
    ...timeRange('createdTime', 'body'),
    metadataFilter({ maxTotalBytes: 10_000 }),
    { key: 'name', kind: 'string', field: 'name', maxLength: 255, via: 'body' },
    { key: 'unit', kind: 'string', field: 'unit', maxLength: 32, via: 'body' },
    { key: 'unitExternalId', kind: 'string', field: 'unitExternalId', maxLength: 64, via: 'body' },
    { key: 'isString', kind: 'boolean', field: 'isString', via: 'body' },
    { key: 'isStep', kind: 'boolean', field: 'isStep', via: 'body' },
    { key: 'assetExternalIds', kind: 'strings', field: 'assetExternalIds', maxItems: 100, maxLength: 255, via: 'body' },
    refsFilter('assetSubtreeIds', 100),
    refsFilter('dataSetIds', 100),
  ],
  columns: [
    column('id', 'int64', true),
    column('externalId', 'string'),
    column('name', 'string'),
    column('isString', 'boolean'),
    column('type', 'string'),
    column('isStep', 'boolean'),
    column('unit', 'string'),
    column('unitExternalId', 'string'),
    column('assetId', 'int64'),
    column('description', 'string'),
    column('securityCategories', 'int64-list'),
    column('dataSetId', 'int64'),
    column('metadata', 'string-map'),
    ...TIMES_AND_EXTRA,
  ],
} as const satisfies ResourceSpec<'timeseries'>;
