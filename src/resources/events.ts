import {
  column,
  EXTERNAL_ID_PREFIX,
  metadataFilter,
  refsFilter,
  type ResourceSpec,
  TIMES_AND_EXTRA,
  timeRange,
} from './resource.js';

/**
 * Events: things that happened over a time span, linked to assets (`assetIds`). `endTime` alone is
 * the `{isNull}` filter (events with no end, or with one); its range is `minEndTime`/`maxEndTime`.
 */
export const events = {
  name: 'events',
  key: 'id',
  countable: true,
  schemaVersion: 1,
  defaultLimit: 100,
  filters: [
    { key: 'type', kind: 'string', field: 'type', maxLength: 64 },
    { key: 'subtype', kind: 'string', field: 'subtype', maxLength: 64 },
    { key: 'source', kind: 'string', field: 'source', maxLength: 128 },
    ...timeRange('lastUpdatedTime'),
    ...timeRange('startTime'),
    EXTERNAL_ID_PREFIX,
    metadataFilter({ maxValueBytes: 128_000, maxTotalBytes: 200_000 }),
    ...timeRange('endTime'),
    { key: 'endTime', kind: 'isNull', field: 'endTime', via: 'body' },
    ...timeRange('activeAtTime'),
    ...timeRange('createdTime'),
    // GET takes 100; the body of POST /events/list takes 5000.
    { key: 'assetIds', kind: 'ids', field: 'assetIds', maxItems: 5000, maxItemsOnGet: 100 },
    { key: 'assetExternalIds', kind: 'strings', field: 'assetExternalIds', maxItems: 5000, maxItemsOnGet: 100, maxLength: 255 },
    refsFilter('assetSubtreeIds', 100),
    refsFilter('dataSetIds', 100),
  ],
  columns: [
    column('id', 'int64', true),
    column('externalId', 'string'),
    column('type', 'string'),
    column('subtype', 'string'),
    column('description', 'string'),
    column('startTime', 'timestamp'),
    column('endTime', 'timestamp'),
    column('assetIds', 'int64-list'),
    column('source', 'string'),
    column('dataSetId', 'int64'),
    column('metadata', 'string-map'),
    ...TIMES_AND_EXTRA,
  ],
} as const satisfies ResourceSpec<'events'>;
