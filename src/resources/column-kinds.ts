/**
 * What a Parquet column holds: one list of kinds for every stream. A collection's columns (its
 * file in this folder), a datapoints stream's (datapoints.ts) and an instances stream's
 * (instances.ts, where a column may also be a list of its kind) are each of one of them. sink/ keeps
 * one table per operation on a kind, each with an entry for every kind: its Arrow type
 * (sink/parquet/arrow-types.ts), the column that fills it (sink/parquet/column-builders.ts) and
 * its type as the manifest names it (sink/parquet/schemas.ts). A new kind is a line here and one
 * in each table; the type checker names a table that lacks it.
 */
export const COLUMN_KINDS = [
  'int64', // ids, counts, durations
  'int32',
  'double',
  'float', // 32 bits
  'boolean',
  'string',
  'timestamp', // epoch milliseconds: TIMESTAMP(MILLIS, UTC)
  'date', // days since 1970-01-01
  'json', // any JSON value, as its text
  'node-ref', // a direct relation: STRUCT<space, externalId>
  'int64-list', // id lists
  'label-list', // labels, the platform's `[{externalId}]`, as the list of their externalIds
  'string-map', // metadata: MAP<STRING, STRING>
  'sequence-columns', // sequences' `columns`: LIST<STRUCT<...>> of SEQUENCE_COLUMN_FIELDS
  // `extra` of a collection's item, a point or a sequence column: every field the schema does not
  // know, as one JSON object string, so no field is dropped.
  'unknown-fields',
  // `extra` of an instance: what no column holds (fields and properties without a column, properties
  // of other views, values a column cannot hold), as one JSON object string.
  'extra-json',
] as const;
export type ColumnKind = (typeof COLUMN_KINDS)[number];

/** A column's type as the tables of sink/ read it: its kind, and (an instance column's) whether it is a list of it. */
export interface ColumnType {
  readonly kind: ColumnKind;
  readonly list?: boolean;
}

/**
 * The kinds an instances stream's column may be, each nullable unless `required`, and `list` makes
 * it a list of its kind; a checkpoint records them (InstanceColumn).
 */
export const INSTANCE_COLUMN_KINDS = [
  'string',
  'int32',
  'int64',
  'float',
  'double',
  'boolean',
  'timestamp',
  'date',
  'json',
  'node-ref',
  'extra-json',
] as const satisfies readonly ColumnKind[];
export type InstanceColumnKind = (typeof INSTANCE_COLUMN_KINDS)[number];
