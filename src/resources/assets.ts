import { column, COMMON_TAIL, EXTERNAL_ID_PREFIX, LAST_UPDATED, metadataFilter, type ResourceSpec } from './resource.js';

/** Assets: trees of equipment and places (`rootId`, `parentId`). */
export const assets = {
  name: 'assets',
  filters: [
    { key: 'source', kind: 'string', field: 'source', maxLength: 128 },
    ...LAST_UPDATED,
    EXTERNAL_ID_PREFIX,
    metadataFilter(10_240),
  ],
  columns: [
    column('id', 'int64', true),
    column('externalId', 'string'),
    column('name', 'string'),
    column('parentId', 'int64'),
    column('rootId', 'int64'),
    column('description', 'string'),
    ...COMMON_TAIL,
  ],
} as const satisfies ResourceSpec<'assets'>;
