import {
  column,
  EXTERNAL_ID_PREFIX,
  LABEL_FILTER,
  metadataFilter,
  refsFilter,
  type ResourceSpec,
  TIMES_AND_EXTRA,
  timeRange,
} from './resource.js';

/**
 * Files: documents and their metadata (not their content), linked to assets (`assetIds`). A stream
 * filtering by `assetIds` is listed by POST.
 */
export const files = {
  name: 'files',
  key: 'id',
  countable: true,
  schemaVersion: 2,
  defaultLimit: 100,
  filters: [
    { key: 'name', kind: 'string', field: 'name', maxLength: 256 },
    { key: 'mimeType', kind: 'string', field: 'mimeType', maxLength: 256 },
    { key: 'source', kind: 'string', field: 'source', maxLength: 128 },
    // GET documents its assetIds only as an "array" (not a JSON array, as elsewhere) and the
    // platform's SDKs list files by POST: sent in the body, it has one documented form.
    { key: 'assetIds', kind: 'ids', field: 'assetIds', maxItems: 100, via: 'body' },
    { key: 'assetExternalIds', kind: 'strings', field: 'assetExternalIds', maxItems: 100, maxLength: 255 },
    { key: 'rootAssetIds', kind: 'ids', field: 'rootAssetIds', maxItems: 100, refsInBody: true },
    ...timeRange('lastUpdatedTime'),
    ...timeRange('createdTime'),
    ...timeRange('uploadedTime'),
    ...timeRange('sourceCreatedTime'),
    ...timeRange('sourceModifiedTime'),
    EXTERNAL_ID_PREFIX,
    { key: 'uploaded', kind: 'boolean', field: 'uploaded' },
    { key: 'directoryPrefix', kind: 'string', field: 'directoryPrefix', maxLength: 512, via: 'body' },
    metadataFilter({ maxValueBytes: 10_240, maxTotalBytes: 10_240 }),
    refsFilter('assetSubtreeIds', 100),
    refsFilter('dataSetIds', 100),
    LABEL_FILTER,
  ],
  columns: [
    column('id', 'int64', true),
    column('externalId', 'string'),
    column('name', 'string'),
    column('directory', 'string'),
    column('mimeType', 'string'),
    column('uploaded', 'boolean'),
    column('uploadedTime', 'timestamp'),
    column('sourceCreatedTime', 'timestamp'),
    column('sourceModifiedTime', 'timestamp'),
    column('assetIds', 'int64-list'),
    column('securityCategories', 'int64-list'),
    column('source', 'string'),
    column('dataSetId', 'int64'),
    column('labels', 'label-list'),
    column('metadata', 'string-map'),
    ...TIMES_AND_EXTRA,
  ],
} as const satisfies ResourceSpec<'files'>;
