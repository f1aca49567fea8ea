import { column, COMMON_TAIL, EXTERNAL_ID_PREFIX, LAST_UPDATED, metadataFilter, type ResourceSpec } from './resource.js';

/** Events: things that happened over a time span, linked to assets (`assetIds`). */
export const events = {
  name: 'events',
  filters: [
    { key: 'type', kind: 'string', field: 'type', maxLength: 64 },
    { key: 'subtype', kind: 'string', field: 'subtype', maxLength: 64 },
    { key: 'source', kind: 'string', field: 'source', maxLength: 128 },
    ...LAST_UPDATED,
    { key: 'minStartTime', kind: 'time', field: 'startTime', bound: 'min' },
    { key: 'maxStartTime', kind: 'time', field: 'startTime', bound: 'max' },
    EXTERNAL_ID_PREFIX,
    metadataFilter(128_000),
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
    ...COMMON_TAIL,
  ],
} as const satisfies ResourceSpec<'events'>;
