import { z } from 'zod';
import { FORMATS, MODES, STREAM_RESOURCES } from '../../config/job-schema.js';
import { MAX_SPLIT_BOUNDARIES } from '../../config/instances-schema.js';
import { INSTANCE_COLUMN_KINDS } from '../../resources/index.js';

/** The shape of `_checkpoint.json` (checkpoint.ts reads, writes and updates it). */

/**
 * 2 added mode, window, run and watermark (a version 1 checkpoint reads as a full export without a
 * window); 3 added mode snapshot, which older versions cannot resume; 4 added datapoints streams;
 * 5 added instances streams; 6 added the digest of the file's content (DIGEST_VERSION); 7 added
 * streams that follow a datapoint subscription.
 */
export const CHECKPOINT_VERSION = 7;

/** The first version that carries a digest: from it on, a checkpoint without one was changed by hand. */
export const DIGEST_VERSION = 6;

/** A column of an instances stream, as instanceColumns made it from the view when the stream began. */
const instanceColumnSchema = z.strictObject({
  name: z.string().min(1),
  kind: z.enum(INSTANCE_COLUMN_KINDS),
  list: z.boolean(),
  required: z.boolean(),
  from: z.union([
    z.strictObject({ field: z.string() }),
    z.strictObject({ property: z.string(), type: z.string() }),
    z.strictObject({ extra: z.literal(true) }),
  ]),
});

const nodeIdSchema = z.strictObject({ space: z.string().min(1), externalId: z.string().min(1) });

/** A series named as a datapoints query names it: by id, externalId or instanceId. */
const seriesRefSchema = z.union([
  z.strictObject({ id: z.number().int() }),
  z.strictObject({ externalId: z.string() }),
  z.strictObject({ instanceId: nodeIdSchema }),
]);

/**
 * A series of a datapoints partition not done yet: named by id, externalId or instanceId, with its
 * last committed point.
 */
const seriesProgressSchema = z
  .strictObject({
    id: z.number().int().min(1).optional(),
    externalId: z.string().min(1).optional(),
    instanceId: nodeIdSchema.optional(),
    /** Timestamp of the last point (or aggregate bucket) committed; null: none yet. */
    after: z.number().int().nullable(),
    /** A window of a long series read in pieces: its own start (inclusive) and end (exclusive). */
    start: z.number().int().optional(),
    end: z.number().int().optional(),
  })
  .refine(
    (series) => [series.id, series.externalId, series.instanceId].filter((name) => name !== undefined).length === 1,
    'a series has one of an id, an externalId or an instanceId',
  );

/**
 * A datapoints partition: where its listing of series stands, and the series taken from it and not
 * done yet. A resume reads each of them again from just after its last committed point.
 */
const pointsPartSchema = z.strictObject({
  /** Cursor of the series listing's next page; null: its first page (or none, once `listed`). */
  listing: z.string().min(1).nullable(),
  /** Every page of the listing was taken (explicit series: from the start). */
  listed: z.boolean(),
  series: z.array(seriesProgressSchema),
  /**
   * Series taken from the listing so far, a view's nodes too (the read limit of a listing of the
   * timeseries collection counts them across runs); absent: 0.
   */
  listedSeries: z.number().int().min(0).default(0),
  /** Series asked for that the platform did not know (deleted since they were listed, or never there). */
  unknown: z.array(seriesRefSchema).default([]),
});

const partSchema = z.strictObject({
  /** Cursor of the first page not yet committed; null: start at the first page. */
  cursor: z.string().min(1).nullable(),
  /** Sequence number of the next shard. */
  nextSeq: z.number().int().min(0),
  /** Rows committed so far. */
  rows: z.number().int().min(0),
  done: z.boolean(),
  updatedAt: z.string(),
  /** Datapoints streams only. */
  points: pointsPartSchema.optional(),
  /**
   * A list chain's: the fingerprint of the last page committed (the page before `cursor`,
   * PageItems.fingerprint), so that a resumed chain whose first page repeats it is refused as a
   * page sent twice (E_REPEATED_PAGE), as within one run.
   */
  lastPage: z.string().regex(/^[0-9a-f]{40}$/).optional(),
});

/** The `lastUpdatedTime` range a stream's current run reads: [from, until), epoch milliseconds. */
const windowSchema = z.strictObject({
  /** null: from the beginning. Datapoints: point times, which may lie before 1970. */
  from: z.number().int().nullable(),
  until: z.number().int(),
});

/** The most partitions a stream has: an instances stream's queries (MAX_SPLIT_BOUNDARIES + 2). */
const MAX_QUERIES = MAX_SPLIT_BOUNDARIES + 2;

const streamSchema = z.strictObject({
  resource: z.enum(STREAM_RESOURCES),
  mode: z.enum(MODES).default('full'),
  /** Params from the job's config (filters, limit): what a resume must not change. */
  params: z.array(z.tuple([z.string(), z.string()])),
  /** null only in checkpoints of version 1, which pinned no window. */
  window: windowSchema.nullable().default(null),
  /** incremental and snapshot: the current run's folder under the stream's (`run=<run>`). */
  run: z.string().regex(/^\d{8}T\d{6}\.\d{3}Z$/).nullable().default(null),
  /** incremental: `until` of the last run that completed; the next run starts there. */
  watermark: z.number().int().min(0).nullable().default(null),
  /** Collections, datapoints and subscriptions: at most 10 (the job file's); instances: one per query of the split. */
  partitions: z.number().int().min(1).max(MAX_QUERIES),
  formats: z.array(z.enum(FORMATS)).min(1),
  /** Metadata keys written as `metadata_<key>` Parquet columns; a resume must not change them. */
  metadataColumns: z.array(z.string()).optional(),
  /** The Parquet column each of `metadataColumns` became, in their order; a resume must not name them otherwise. */
  metadataColumnNames: z.array(z.string()).optional(),
  /**
   * A collection's stream: the version of its collection's Parquet schema it writes (ResourceSpec);
   * absent in checkpoints written before it was recorded, which wrote version 1.
   */
  schemaVersion: z.number().int().min(1).optional(),
  /** Keyed by m, "1".."n": exactly one entry for each partition. */
  parts: z.record(z.string(), partSchema),
  /** An instances stream: its view's columns, fixed when the stream began (a resume keeps its schema). */
  instances: z.strictObject({ columns: z.array(instanceColumnSchema).min(1) }).optional(),
  /** 'delta': the stream's folder is a Delta table, committed as each run completes; absent: plain files. */
  table: z.literal('delta').optional(),
});

export const checkpointSchema = z.strictObject({
  version: z
    .union([
      z.literal(1),
      z.literal(2),
      z.literal(3),
      z.literal(4),
      z.literal(5),
      z.literal(6),
      z.literal(CHECKPOINT_VERSION),
    ])
    .transform(() => CHECKPOINT_VERSION),
  baseUrl: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  streams: z.record(z.string(), streamSchema),
});

export type PartState = z.output<typeof partSchema>;
export type PointsPartState = z.output<typeof pointsPartSchema>;
export type SeriesProgress = z.output<typeof seriesProgressSchema>;
export type StreamState = z.output<typeof streamSchema>;
export type Checkpoint = z.output<typeof checkpointSchema>;
export type UpdatedWindow = z.output<typeof windowSchema>;
