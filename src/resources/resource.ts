/**
 * What bulk-extract knows of one collection of the platform: where it is listed, which filters a
 * job may set and how each is sent, and the columns of its Parquet files. One file per collection
 * (assets.ts, events.ts) describes it; the job file's schema, the request parameters, the count
 * filter, the Parquet writer and the simulator's validation are all derived from it.
 */
export interface ResourceSpec<Name extends string = string> {
  /** The collection: listed by `GET /{name}`, `POST /{name}/list`, counted by `POST /{name}/aggregate`. */
  readonly name: Name;
  /** The filters a job may set, in the order they are sent as query parameters. */
  readonly filters: readonly FilterSpec[];
  /** The Parquet columns, in order (DESIGN.md's profile); the last is `extra`. */
  readonly columns: readonly ColumnSpec[];
}

/**
 * A filter a job may set: an end of a time range, a string the items' field must equal, or
 * key-value pairs the items' metadata must hold.
 */
export type FilterSpec = TimeFilterSpec | StringFilterSpec | MapFilterSpec;

interface FilterCommon {
  /** The key in the job file's `filter`, and (unless `via` is 'body') the query parameter of `GET /{name}`. */
  readonly key: string;
  /** The field of the `filter` object of `/list` and `/aggregate` that takes it. */
  readonly field: string;
  /** 'body': only `POST /{name}/list` takes it, so a stream that sets it is listed by POST. */
  readonly via?: 'body';
}

/** Epoch milliseconds, inclusive: one end of the field's `{min, max}` range. */
export interface TimeFilterSpec extends FilterCommon {
  readonly kind: 'time';
  readonly bound: 'min' | 'max';
  readonly maxLength?: undefined;
}

/** Equality with a string field (or, for `externalIdPrefix`, the start of `externalId`). */
export interface StringFilterSpec extends FilterCommon {
  readonly kind: 'string';
  /** The longest value the platform accepts (PLATFORM.md), on GET and in the `filter` object. */
  readonly maxLength: number;
  readonly bound?: undefined;
}

/** Every pair given must be in the item's map (the platform's `metadata` filter). */
export interface MapFilterSpec extends FilterCommon {
  readonly kind: 'map';
  readonly via: 'body';
  /** The longest value the platform accepts. */
  readonly maxValueLength: number;
  readonly bound?: undefined;
  readonly maxLength?: undefined;
}

/** Items whose `externalId` starts with the given text (at most 255 characters); GET and POST take it. */
export const EXTERNAL_ID_PREFIX = {
  key: 'externalIdPrefix',
  kind: 'string',
  field: 'externalIdPrefix',
  maxLength: 255,
} as const satisfies StringFilterSpec;

/** The `metadata` filter: items whose metadata holds every given pair; sent in `POST /list`'s body. */
export const metadataFilter = (maxValueLength: number) =>
  ({ key: 'metadata', kind: 'map', field: 'metadata', via: 'body', maxValueLength }) as const satisfies MapFilterSpec;

/**
 * Column kinds of the Parquet profile: ids INT64, times TIMESTAMP(MILLIS, UTC), metadata
 * MAP<STRING,STRING>, assetIds LIST<INT64>, and `extra`: every field the schema does not know, as
 * one JSON object string, so no field is dropped.
 */
export type ColumnKind = 'int64' | 'string' | 'timestamp' | 'int64-list' | 'string-map' | 'extra-json';

export interface ColumnSpec {
  readonly name: string;
  readonly kind: ColumnKind;
  /** Required columns must be present in every item. */
  readonly required: boolean;
}

export const EXTRA_COLUMN = 'extra';

/** A column of a spec. */
export const column = (name: string, kind: ColumnKind, required = false): ColumnSpec => ({ name, kind, required });

/** The columns every collection ends with, in this order: provenance, metadata, times, and `extra`. */
export const COMMON_TAIL = [
  column('source', 'string'),
  column('dataSetId', 'int64'),
  column('metadata', 'string-map'),
  column('createdTime', 'timestamp'),
  column('lastUpdatedTime', 'timestamp'),
  column(EXTRA_COLUMN, 'extra-json'),
] as const;

/** The `minLastUpdatedTime`/`maxLastUpdatedTime` pair every collection has: a run's window is sent through it. */
export const LAST_UPDATED = [
  { key: 'minLastUpdatedTime', kind: 'time', field: 'lastUpdatedTime', bound: 'min' },
  { key: 'maxLastUpdatedTime', kind: 'time', field: 'lastUpdatedTime', bound: 'max' },
] as const satisfies readonly FilterSpec[];
