import { column, EXTRA_COLUMN, LAST_UPDATED, type ResourceSpec } from './resource.js';

/** Assets: trees of equipment and places (`rootId`, `parentId`). */
export const assets = {
  name: 'assets',
  filters: [...LAST_UPDATED],
  columns: [
    column('id', 'int64', true),
    column('externalId', 'string'),
    column('name', 'string'),
    column('parentId', 'int64'),
    column('rootId', 'int64'),
    column('description', 'string'),
    column('source', 'string'),
    column('dataSetId', 'int64'),
    column('metadata', 'string-map'),
    column('createdTime', 'timestamp'),
    column('lastUpdatedTime', 'timestamp'),
    column(EXTRA_COLUMN, 'extra-json'),
  ],
} as const satisfies ResourceSpec<'assets'>;
