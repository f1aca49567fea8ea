import { column, LABEL_FILTER, type ResourceSpec, refsFilter, TIMES_AND_EXTRA, timeRange } from './resource.js';

/** The types of resource a relationship links. */
export const RELATIONSHIP_TYPES = ['asset', 'timeSeries', 'file', 'event', 'sequence'] as const;

const types = <K extends string>(key: K) =>
  ({ key, kind: 'strings', field: key, maxItems: 1000, maxLength: 32, values: RELATIONSHIP_TYPES, via: 'body' }) as const;
const externalIds = <K extends string>(key: K) =>
  ({ key, kind: 'strings', field: key, maxItems: 1000, maxLength: 255, via: 'body' }) as const;

/**
 * Relationships: directed links between two resources, named by their `externalId`s. They have no
 * `id`: their key is `externalId`. Their GET list takes no filter (every filter is sent by POST)
 * and the platform does not count them (no progress total).
 */
export const relationships = {
  name: 'relationships',
  key: 'externalId',
  countable: false,
  schemaVersion: 2,
  defaultLimit: 100,
  filters: [
    ...timeRange('lastUpdatedTime', 'body'),
    ...timeRange('createdTime', 'body'),
    externalIds('sourceExternalIds'),
    types('sourceTypes'),
    externalIds('targetExternalIds'),
    types('targetTypes'),
    ...timeRange('startTime', 'body'),
    ...timeRange('endTime', 'body'),
    ...timeRange('activeAtTime', 'body'),
    { key: 'minConfidence', kind: 'number', field: 'confidence', bound: 'min', minimum: 0, maximum: 1, via: 'body' },
    { key: 'maxConfidence', kind: 'number', field: 'confidence', bound: 'max', minimum: 0, maximum: 1, via: 'body' },
    refsFilter('dataSetIds', 1000),
    LABEL_FILTER,
  ],
  columns: [
    column('externalId', 'string', true),
    column('sourceExternalId', 'string'),
    column('sourceType', 'string'),
    column('targetExternalId', 'string'),
    column('targetType', 'string'),
    column('startTime', 'timestamp'),
    column('endTime', 'timestamp'),
    column('confidence', 'double'),
    column('dataSetId', 'int64'),
    column('labels', 'label-list'),
    ...TIMES_AND_EXTRA,
  ],
} as const satisfies ResourceSpec<'relationships'>;
