import type { ColumnKind } from './column-kinds.js';
import type { MetadataLimits } from './metadata-limits.js';

/**
 * What bulk-extract knows of one collection of the platform: where it is listed, which filters a
 * job may set and how each is sent, the field that identifies an item, and the columns of its
 * Parquet files. One file per collection (assets.ts, events.ts, ...) describes it; the job file's
 * schema, the request parameters, the count filter, the Parquet writer and the simulator's
 * validation are all derived from it.
 */
export interface ResourceSpec<Name extends string = string> {
  /** The collection: listed by `GET /{name}` and `POST /{name}/list`. */
  readonly name: Name;
  /** The field that identifies an item: `id`, or `externalId` where items have no id (relationships). */
  readonly key: 'id' | 'externalId';
  /** Whether `POST /{name}/aggregate` counts it (relationships have no count). */
  readonly countable: boolean;
  /** The page size the platform uses when a request gives no `limit`. */
  readonly defaultLimit: number;
  /** The filters a job may set, in the order they are sent. */
  readonly filters: readonly FilterSpec[];
  /** The Parquet columns, in order (DESIGN.md's profile); the key first, `extra` last. */
  readonly columns: readonly ColumnSpec[];
  /**
   * The version of `columns` (1 at first, one more at every change of the Parquet schema): a
   * checkpoint records it, so a resume never writes shards of two schemas into one stream.
   */
  readonly schemaVersion: number;
}

/**
 * A filter a job may set. Each kind has one text form, a chain's parameter (what the checkpoint
 * records and `GET` sends): times and numbers as decimals, booleans as `true`/`false`, lists and
 * maps as JSON. In the `filter` object of `POST /list` and `/aggregate` each is JSON of its own type.
 */
export type FilterSpec =
  | TimeFilterSpec |
  NumberFilterSpec |
  StringFilterSpec |
  BooleanFilterSpec |
  IdListFilterSpec |
  StringListFilterSpec |
  RefListFilterSpec |
  MapFilterSpec |
  IsNullFilterSpec |
  LabelFilterSpec;

export type FilterKind = FilterSpec['kind'];

interface FilterCommon {
  /** The key in the job file's `filter`, and (unless `via` is 'body') the query parameter of `GET /{name}`. */
  readonly key: string;
  /** The field of the `filter` object of `/list` and `/aggregate` that takes it. */
  readonly field: string;
  /** 'body': only `POST /{name}/list` takes it, so a stream that sets it is listed by POST. */
  readonly via?: 'body' | undefined;
}

/** Epoch milliseconds, inclusive: one end of the field's `{min, max}` range. */
export interface TimeFilterSpec extends FilterCommon {
  readonly kind: 'time';
  readonly bound: 'min' | 'max';
}

/** A number, inclusive: one end of the field's `{min, max}` range (relationships' `confidence`, 0 to 1). */
export interface NumberFilterSpec extends FilterCommon {
  readonly kind: 'number';
  readonly bound: 'min' | 'max';
  readonly minimum: number;
  readonly maximum: number;
}

/** Equality with a string field (or, for `externalIdPrefix` and `directoryPrefix`, its start). */
export interface StringFilterSpec extends FilterCommon {
  readonly kind: 'string';
  /** The longest value the platform accepts (PLATFORM.md), on GET and in the `filter` object. */
  readonly maxLength: number;
}

/** Equality with a boolean field (`isString`, `uploaded`, `root`, ...). */
export interface BooleanFilterSpec extends FilterCommon {
  readonly kind: 'boolean';
}

/**
 * Items linked to any of these ids (`assetIds`, `parentIds`, ...): a JSON array of int64 on GET.
 * `refsInBody`: the `filter` object takes them as `{id}` objects (`rootAssetIds` of files).
 */
export interface IdListFilterSpec extends FilterCommon {
  readonly kind: 'ids';
  readonly maxItems: number;
  /** GET takes at most this many (fewer than `maxItems`): a stream with a longer list is listed by POST. */
  readonly maxItemsOnGet?: number;
  readonly refsInBody?: true;
}

/** Items whose field equals any of these strings (`assetExternalIds`, `sourceTypes`, ...). */
export interface StringListFilterSpec extends FilterCommon {
  readonly kind: 'strings';
  readonly maxItems: number;
  /** GET takes at most this many (fewer than `maxItems`): a stream with a longer list is listed by POST. */
  readonly maxItemsOnGet?: number;
  readonly maxLength: number;
  /** The only values the platform knows, when it has a fixed set (relationships' types). */
  readonly values?: readonly string[];
}

/**
 * Items in any of these, each named by `{id}` or `{externalId}` (`dataSetIds`, `assetSubtreeIds`);
 * only the `filter` object takes the mixed form, so it is always sent by POST.
 */
export interface RefListFilterSpec extends FilterCommon {
  readonly kind: 'refs';
  readonly via: 'body';
  readonly maxItems: number;
}

/** Every pair given must be in the item's map (the platform's `metadata` filter). */
export interface MapFilterSpec extends FilterCommon {
  readonly kind: 'map';
  readonly via: 'body';
  /** The collection's bounds on values and total size (keys and pairs are bounded alike for all). */
  readonly limits: MetadataLimits;
}

/**
 * Whether the field is absent (`true`: events with no end) or present (`false`): the `{isNull}` form
 * of a range field's object in the body, which takes a range or it, not both. Its key is the field.
 */
export interface IsNullFilterSpec extends FilterCommon {
  readonly kind: 'isNull';
  readonly via: 'body';
}

/**
 * The platform's label filter: `{containsAny: [{externalId}]}` (an item with at least one of the
 * labels) or `{containsAll: [...]}` (an item with every one); body only.
 */
export interface LabelFilterSpec extends FilterCommon {
  readonly kind: 'labels';
  readonly via: 'body';
  readonly maxItems: number;
}

/** The label filter's two forms. */
export const LABEL_MATCHES = ['containsAny', 'containsAll'] as const;

/** A label filter's value, as the body takes it. */
export type LabelFilterValue = Readonly<Partial<Record<LabelMatch, readonly { externalId: string }[]>>>;
export type LabelMatch = (typeof LABEL_MATCHES)[number];

/**
 * `labels` (assets, files, relationships). The bounds are the platform's API reference's (1 to 100
 * labels, externalIds of at most 255 characters); PLATFORM.md gives the form, not the bounds.
 */
export const LABEL_FILTER = {
  key: 'labels',
  kind: 'labels',
  field: 'labels',
  via: 'body',
  maxItems: 100,
} as const satisfies LabelFilterSpec;

/** Items whose `externalId` starts with the given text (at most 255 characters). */
export const EXTERNAL_ID_PREFIX = {
  key: 'externalIdPrefix',
  kind: 'string',
  field: 'externalIdPrefix',
  maxLength: 255,
} as const satisfies StringFilterSpec;

/** The `metadata` filter: items whose metadata holds every given pair; sent in `POST /list`'s body. */
export const metadataFilter = (limits: MetadataLimits) =>
  ({ key: 'metadata', kind: 'map', field: 'metadata', via: 'body', limits }) as const satisfies MapFilterSpec;

/** `{id}|{externalId}` lists, body only: `dataSetIds` and `assetSubtreeIds`. */
export const refsFilter = <K extends string>(key: K, maxItems: number) =>
  ({ key, kind: 'refs', field: key, via: 'body', maxItems }) as const satisfies RefListFilterSpec;

/** Both ends of a time range: `min<Field>`/`max<Field>` keys over the field's `{min, max}` object. */
export const timeRange = <F extends string>(field: F, via?: 'body') => {
  const suffix = `${field[0]!.toUpperCase()}${field.slice(1)}` as Capitalize<F>;
  return [
    { key: `min${suffix}`, kind: 'time', field, bound: 'min', via },
    { key: `max${suffix}`, kind: 'time', field, bound: 'max', via },
  ] as const satisfies readonly TimeFilterSpec[];
};

export interface ColumnSpec {
  readonly name: string;
  readonly kind: ColumnKind;
  /** Required columns must be present in every item. */
  readonly required: boolean;
  /** A stream's `metadataColumns`: the column holds `metadata[metadataKey]` (a string), not a field. */
  readonly metadataKey?: string;
}

export const EXTRA_COLUMN = 'extra';

/** The folder of a stream's window or snapshot: `run=<id>` (export/state/layout.ts). */
export const RUN_FOLDER_KEY = 'run';
/** The folder of a stream's partition: `part=<m>-of-<n>` (export/state/layout.ts). */
export const PART_FOLDER_KEY = 'part';

/**
 * The keys of the output's `key=value` folders. Readers that partition by folder (DuckDB's
 * default read of a glob, Spark, Athena, Hive) add each as a column holding the folder's value,
 * which replaces a column of the same name in the files (compared without case): so no column of
 * a shard is named like one of them (an instance property so named is renamed: instances.ts).
 */
export const FOLDER_KEYS: readonly string[] = [RUN_FOLDER_KEY, PART_FOLDER_KEY];

/** A column of a spec. */
export const column = (name: string, kind: ColumnKind, required = false): ColumnSpec => ({ name, kind, required });

/**
 * The fields of a sequence column (an element of `sequences.columns`), in the order of the Parquet
 * struct; `extra` holds the fields it does not know, as JSON.
 */
export const SEQUENCE_COLUMN_FIELDS = [
  column('id', 'int64'),
  column('externalId', 'string'),
  column('name', 'string'),
  column('description', 'string'),
  column('valueType', 'string', true),
  column('metadata', 'string-map'),
  column('createdTime', 'timestamp'),
  column('lastUpdatedTime', 'timestamp'),
  column(EXTRA_COLUMN, 'unknown-fields'),
] as const;

/**
 * A letter, digit or `_` with the combining marks that follow it (the vowel signs of `तापमान`), or
 * any other character (space, `.`, quotes, brackets, `,`, `;`, `=`, symbols, control and format
 * characters) with the marks that follow it.
 */
const COLUMN_NAME_PIECE = /([\p{L}\p{N}_]\p{M}*)|[^\p{L}\p{N}_]\p{M}*/gu;

/**
 * The column a stream's `metadataColumns` key becomes: `metadata_<key>`, the key in Unicode NFC with
 * its letters, digits and `_` kept (`metadata_ключ`, `metadata_温度`) and each other character as `_`:
 * spaces, dots (nested fields to Spark), quotes, brackets, commas, `=` and control characters break
 * readers or their SQL.
 */
export function metadataColumnName(key: string): string {
  return `metadata_${key.normalize('NFC').replace(COLUMN_NAME_PIECE, (_piece, kept: string | undefined) => kept ?? '_')}`;
}

/**
 * The Parquet columns of a stream: its collection's, with a STRING column per `metadataColumns` key
 * just before `extra` (the full `metadata` map stays).
 */
export function streamColumns(
  columns: readonly ColumnSpec[],
  metadataColumns: readonly string[] = [],
): readonly ColumnSpec[] {
  if (metadataColumns.length === 0) return columns;
  const extra = columns.length - 1;
  const added = metadataColumns.map(
    (key): ColumnSpec => ({ name: metadataColumnName(key), kind: 'string', required: false, metadataKey: key }),
  );
  return [...columns.slice(0, extra), ...added, ...columns.slice(extra)];
}

/** The columns every collection ends with, in this order: its times and `extra`. */
export const TIMES_AND_EXTRA = [
  column('createdTime', 'timestamp'),
  column('lastUpdatedTime', 'timestamp'),
  column(EXTRA_COLUMN, 'unknown-fields'),
] as const;
