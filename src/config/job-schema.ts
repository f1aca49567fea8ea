import { z } from 'zod';
import { isAzureUrl } from '../util/output-url.js';
import { metricsSchema } from './metrics-schema.js';
import { byteSize } from './byte-size.js';
import { duration } from './duration.js';
import {
  type FilterSpec,
  metadataColumnName,
  type Resource,
  RESOURCE_SPECS,
  RESOURCES,
  type ResourceSpec,
  resourceSpec,
} from '../resources/index.js';
import { type FilterValue, filterSchema } from './filter-schema.js';
import { sourceSchema } from './source-schema.js';
import { datapointsKeys, datapointsProblems } from './datapoints-schema.js';
import { instancesKeys, instancesProblems } from './instances-schema.js';
import { type ApplyRules, applyAll, keepNeedsSnapshot, type KeyProblem, type KeyRule, under } from './key-rules.js';

export { type Resource, RESOURCES } from '../resources/index.js';
export type { FilterValue };
export const FORMATS = ['parquet', 'ndjson'] as const;
export type Format = (typeof FORMATS)[number];

export const MODES = ['full', 'incremental', 'snapshot'] as const;
/** How a stream's shards are published: plain files, or the data files of a Delta Lake table. */
export const TABLES = ['files', 'delta'] as const;
export type TableKind = (typeof TABLES)[number];
export type Mode = (typeof MODES)[number];

/** A stream's name: its folder in the output, so nothing that could lead elsewhere. */
export const STREAM_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

const common = {
  /** Names the output folder and the checkpoint entry; defaults to the resource. */
  name: z.string().regex(STREAM_NAME, 'lowercase letters, digits, _ and -, starting with a letter or digit').optional(),
  /** Parallel cursor chains (`partition=m/n`); 1 sends no partition parameter. */
  partitions: z.number().int().min(1).max(10).default(10),
  /** Items per page, 1..1000. */
  limit: z.number().int().min(1).max(1000).default(1000),
  /** Overrides output.formats for this stream. */
  formats: z.array(z.enum(FORMATS)).min(1).optional(),
  /** Overrides output.table for this stream. */
  table: z.enum(TABLES).optional(),
  /**
   * full: the whole collection, as it was when the first run started (resumed runs read the same
   * snapshot); later runs have nothing to do. incremental: each run reads what changed since the
   * last successful run, into a run folder of its own. snapshot: each run after a completed one
   * reads the whole collection again (datapoints: the window from start to end resolved at its
   * start), into a run folder of its own.
   */
  mode: z.enum(MODES).default('full'),
  /** snapshot: completed snapshots to keep; older ones are deleted once a newer one is sealed. Default: all. */
  keep: z.number().int().min(1).optional(),
  /**
   * incremental: a run reads items updated before its start minus this lag, so that updates still
   * being written when it starts are left to the next run. Default 5 minutes.
   */
  safetyLag: duration.pipe(z.number().max(7 * 86_400_000, 'at most 7 days')).default(300_000),
  /** Metadata keys also written as STRING columns `metadata_<key>` in Parquet (the map stays whole). */
  metadataColumns: z
    .array(z.string().min(1, 'a metadata key must not be empty'))
    .min(1, 'give at least one key, or leave metadataColumns out')
    .max(100, 'at most 100 keys')
    .optional(),
};

/** A stream of the collection `spec`. */
function streamOf<N extends string, F extends readonly FilterSpec[]>(spec: { readonly name: N; readonly filters: F }) {
  // Every filter is optional, so {} is a filter; TypeScript cannot see that through the generic.
  const filter = filterSchema(spec.filters).default({} as never);
  return z.strictObject({ resource: z.literal(spec.name), filter, ...common });
}

type StreamSchemas<T extends readonly ResourceSpec[]> = {
  [I in keyof T]: T[I] extends { name: infer N extends string; filters: infer F extends readonly FilterSpec[] }
    ? ReturnType<typeof streamOf<N, F>>
    : never;
};

/**
 * Datapoints are read behind a selection of time series: `incremental` moves the window of point
 * times, and its lag defaults to an hour (docs/datapoints.md says why); `snapshot` reads the window
 * again in each run, its relative ends resolved at that run's start.
 */
const { metadataColumns: _metadataColumns, ...datapointsCommon } = common;
const datapointsStream = z.strictObject({
  ...datapointsCommon,
  ...datapointsKeys,
  safetyLag: duration.pipe(z.number().max(7 * 86_400_000, 'at most 7 days')).default(3_600_000),
});

/**
 * Data-model instances: the nodes or edges of one view. No `partitions` (the API has none; `split`
 * makes several queries), no metadata, no `safetyLag` (incremental runs follow the sync cursor).
 */
const instancesStream = z.strictObject({
  name: common.name,
  limit: common.limit,
  formats: common.formats,
  table: common.table,
  mode: common.mode,
  keep: common.keep,
  ...instancesKeys,
});

/** One stream of a job: which collection (`resource`), the datapoints or instances, and how it is read. */
export const streamSchema = z.discriminatedUnion('resource', [
  ...(RESOURCE_SPECS.map((spec: ResourceSpec) => streamOf(spec)) as unknown as StreamSchemas<typeof RESOURCE_SPECS>),
  datapointsStream,
  instancesStream,
]);

/**
 * A datapoints stream that follows a subscription is incremental when its mode is left out: its
 * runs read the changes since the run before, and no other mode is accepted beside `subscription`.
 */
function subscriptionMode(stream: unknown): unknown {
  if (typeof stream !== 'object' || stream === null || Array.isArray(stream)) return stream;
  const given = stream as Record<string, unknown>;
  const follows = given.resource === 'datapoints' && given.subscription !== undefined && given.mode === undefined;
  return follows ? { ...given, mode: 'incremental' } : stream;
}

/** Settings of an `s3://` output.dir; credentials come from the environment (the AWS SDK's chain). */
const s3Schema = z.strictObject({
  /** An S3-compatible endpoint (MinIO, Ceph, ...); default: AWS for the region. */
  endpoint: z.url({ protocol: /^https?$/ }).optional(),
  /** Default AWS_REGION, else us-east-1. */
  region: z.string().min(1).optional(),
  /** Path-style URLs (endpoint/bucket/key); default: true with an endpoint (most S3-compatible servers need it). */
  forcePathStyle: z.boolean().optional(),
  /** Multipart part size in MiB (S3: at least 5). Default 8. */
  partSizeMiB: z.number().int().min(5).max(5120).default(8),
  /** Local folder where shards are written before their upload; default under the OS temp folder. */
  staging: z.string().min(1).optional(),
});

/**
 * Settings of an Azure output.dir (abfss://, az://, https://<account>.blob.<cloud>/). No
 * credential: it comes from the environment (AZURE_STORAGE_CONNECTION_STRING, AZURE_STORAGE_KEY,
 * AZURE_STORAGE_SAS_TOKEN, else DefaultAzureCredential), so a key such as `accountKey` here is
 * refused as unknown, its value never repeated.
 */
const azureSchema = z.strictObject({
  /** The storage account of an az:// dir (the other forms name it). */
  account: z.string().regex(/^[a-z0-9]{3,24}$/, '3 to 24 lowercase letters and digits').optional(),
  /**
   * The Blob service endpoint instead of the one the URL names: Azurite
   * (http://127.0.0.1:10000/devstoreaccount1), a sovereign cloud, a private endpoint.
   */
  endpoint: z.url({ protocol: /^https?$/ }).optional(),
  /** Block size in MiB for shards past 32 MiB (staged blocks). Default 8. */
  blockSizeMiB: z.number().int().min(1).max(4000).default(8),
  /**
   * How a request that may pass (503 ServerBusy, 500 OperationTimedOut, other 5xx, a broken
   * connection) is sent again: full-jitter exponential backoff, as source.retry.
   */
  retry: z
    .strictObject({
      /** Attempts in all, the first included. */
      maxAttempts: z.number().int().min(1).max(20).default(6),
      /** Attempt k waits up to baseDelayMs * 2^(k-1) ms. */
      baseDelayMs: z.number().int().min(0).max(60_000).default(500),
      /** The longest wait, in ms. */
      maxDelayMs: z.number().int().min(0).max(600_000).default(30_000),
    })
    .prefault({}),
  /** Local folder where shards are written before their upload; default under the OS temp folder. */
  staging: z.string().min(1).optional(),
});

const outputKeys = z.strictObject({
  /** Output folder, relative to the working directory; or `s3://bucket/prefix`; or an Azure URL. */
  dir: z.string().min(1).default('./out'),
  /** Given only with an s3:// dir, which gets its defaults when the job file leaves them out. */
  s3: s3Schema.optional(),
  /** Given only with an Azure dir, which gets its defaults when the job file leaves them out. */
  azure: azureSchema.optional(),
  formats: z.array(z.enum(FORMATS)).min(1).default(['parquet']),
  /**
   * files: each stream a folder of Parquet or NDJSON shards with our manifest. delta: each stream a
   * Delta Lake table (Parquet only), committed when a run, window or snapshot completes.
   */
  table: z.enum(TABLES).default('files'),
  parquet: z
    .strictObject({
      compression: z.enum(['zstd', 'snappy', 'none']).default('zstd'),
      /** Rows per row group. */
      rowGroupRows: z.number().int().min(1000).max(10_000_000).default(100_000),
    })
    .prefault({}),
  ndjson: z.strictObject({ compression: z.enum(['none', 'gzip']).default('none') }).prefault({}),
  /** A shard is closed at the first page boundary past either limit. */
  shard: z
    .strictObject({
      maxRows: z.number().int().min(1).default(1_000_000),
      maxBytes: byteSize(1024).default(256 * 1024 * 1024),
    })
    .prefault({}),
});

/** Where and how the output is written, with every default resolved: an s3:// dir always has its `s3` settings. */
export const outputSchema = outputKeys.transform((output) => {
  if (output.s3 === undefined && output.dir.startsWith('s3://')) return { ...output, s3: s3Schema.parse({}) };
  if (output.azure === undefined && isAzureUrl(output.dir)) return { ...output, azure: azureSchema.parse({}) };
  return output;
});

/** The keys of a job file, each checked on its own; jobSchema adds what they must agree on (jobProblems). */
export const jobKeys = z.strictObject({
  source: sourceSchema,
  /** What to export; `run` needs at least one. */
  streams: z.array(z.preprocess(subscriptionMode, streamSchema)).default([]),
  output: outputSchema.prefault({}),
  /** Checkpoint file; default `<output.dir>/_checkpoint.json`. */
  checkpoint: z.string().min(1).optional(),
  /** Prometheus metrics of each run: a textfile, a Pushgateway, a `/metrics` port. */
  metrics: metricsSchema.optional(),
});

export const jobSchema = jobKeys.superRefine((job, ctx) => {
  for (const { path, message } of jobProblems(job)) ctx.addIssue({ code: 'custom', path, message });
});

/** What jobProblems reads of a job: its keys as parsed (the source aside). */
export type JobKeys = Omit<z.output<typeof jobKeys>, 'source'>;

/** The rules over the keys of the whole job. */
const JOB_RULES: readonly KeyRule<JobKeys>[] = [
  (job) =>
    !job.output.dir.startsWith('s3://') && job.output.s3 !== undefined
      ? {
          path: ['output', 's3'],
          message: 'S3 settings, but output.dir is not an s3:// URL; remove them or set output.dir: s3://bucket/prefix',
        }
      : undefined,
  (job) =>
    job.output.dir.startsWith('s3://') && job.checkpoint !== undefined
      ? {
          path: ['checkpoint'],
          message: 'with an s3:// output.dir the checkpoint is kept next to the output (<prefix>/_checkpoint.json); remove this key',
        }
      : undefined,
  (job) =>
    !isAzureUrl(job.output.dir) && job.output.azure !== undefined
      ? {
          path: ['output', 'azure'],
          message: 'Azure settings, but output.dir is not an Azure URL; remove them or set output.dir: abfss://<container>@<account>.dfs.core.windows.net/<path> (or az://<container>/<path>)',
        }
      : undefined,
  (job) =>
    isAzureUrl(job.output.dir) && job.checkpoint !== undefined
      ? {
          path: ['checkpoint'],
          message: 'with an Azure output.dir the checkpoint is kept next to the output (<path>/_checkpoint.json); remove this key',
        }
      : undefined,
];

/** A stream of the job, with the job: rules over a stream's keys and the output's. */
interface StreamInJob {
  job: JobKeys;
  stream: StreamConfig;
  index: number;
}

const nameOf = (stream: StreamConfig): string => stream.name ?? stream.resource;

const STREAM_IN_JOB_RULES: readonly KeyRule<StreamInJob>[] = [
  ({ job, stream, index }) => {
    // The earlier streams in order, up to the first of the same name only: a stream that did not
    // parse, past it, does not keep this rule from being told (whatParsedProblems).
    for (let earlier = 0; earlier < index; earlier++) {
      if (nameOf(job.streams[earlier]!) !== nameOf(stream)) continue;
      return {
        path: ['streams', index, 'name'],
        message: `stream name '${nameOf(stream)}' is used twice; give each stream of the same resource its own name`,
      };
    }
    return undefined;
  },
  ({ job, stream, index }) => {
    const table = stream.table ?? job.output.table;
    const formats = stream.formats ?? job.output.formats;
    if (table !== 'delta' || formats.every((format) => format === 'parquet')) return undefined;
    return {
      path: stream.formats === undefined ? ['output', 'formats'] : ['streams', index, 'formats'],
      message: `stream '${nameOf(stream)}' is a Delta table (table: delta), whose data files are Parquet only; ` +
        `set formats: [parquet]${stream.formats === undefined ? ' (or give the stream table: files)' : ''}`,
    };
  },
  ({ job, stream, index }) => {
    const table = stream.table ?? job.output.table;
    if (table !== 'delta' || stream.resource !== 'datapoints' || stream.subscription === undefined) return undefined;
    return {
      path: stream.table === undefined ? ['output', 'table'] : ['streams', index, 'table'],
      message: `stream '${nameOf(stream)}' follows a subscription: its change rows are written as plain files, not a Delta table; ` +
        `${stream.table === undefined ? 'give the stream table: files' : 'set table: files'}`,
    };
  },
];

/**
 * What the keys of a job must agree on beyond their own types, as problems at their paths: the
 * output's keys, the streams' names, each stream with the output, and each stream's own keys.
 */
export function jobProblems(job: JobKeys, apply: ApplyRules = applyAll): KeyProblem[] {
  return [
    ...apply(job, JOB_RULES),
    ...job.streams.flatMap((stream, index) => [
      ...apply({ job, stream, index }, STREAM_IN_JOB_RULES),
      ...under(['streams', index], streamProblems(stream, apply)),
    ]),
  ];
}

/** The rules over the keys of a collection's stream (not datapoints, not instances). */
const COLLECTION_RULES: readonly KeyRule<CollectionStreamConfig>[] = [
  keepNeedsSnapshot,
  (stream) =>
    metadataColumnProblems(stream.resource, stream.metadataColumns ?? []).map((message) => ({ path: ['metadataColumns'], message })),
  (stream) =>
    stream.mode === 'incremental' && stream.filter.maxLastUpdatedTime !== undefined
      ? {
          path: ['filter', 'maxLastUpdatedTime'],
          message: 'an incremental stream sets the end of each run\'s window itself (its start minus safetyLag); remove this filter',
        }
      : undefined,
];

/**
 * What a stream's keys must agree on beyond their own types, each kind's own, as problems at their
 * paths in the stream (scheduledModes asks them again with another mode).
 */
export function streamProblems(stream: StreamConfig, apply: ApplyRules = applyAll): KeyProblem[] {
  if (stream.resource === 'datapoints') return datapointsProblems(stream, apply);
  if (stream.resource === 'instances') return instancesProblems(stream, apply);
  return apply(stream, COLLECTION_RULES);
}

/**
 * The modes of a new export each run (incremental, snapshot) that `stream` would be accepted with,
 * its other keys as they are, `keep` aside (it belongs to snapshot only).
 */
export function scheduledModes(stream: StreamConfig): Mode[] {
  return (['incremental', 'snapshot'] as const).filter((mode) => streamProblems({ ...stream, mode, keep: undefined }).length === 0);
}

/**
 * What is wrong with a stream's metadataColumns: no metadata to take them from, or column names that
 * clash. Names that differ only in case clash too: DuckDB and Spark match column names without case.
 */
function metadataColumnProblems(resource: Resource, keys: readonly string[]): string[] {
  const spec = resourceSpec(resource);
  if (keys.length > 0 && !spec.columns.some((column) => column.name === 'metadata')) {
    return [`${resource} have no metadata to take columns from; remove metadataColumns`];
  }
  const problems: string[] = [];
  const taken = new Map<string, { key: string; name: string }>();
  for (const key of keys) {
    const name = metadataColumnName(key);
    const clash = taken.get(name.toLowerCase());
    if (clash === undefined) taken.set(name.toLowerCase(), { key, name });
    if (clash?.name === name) problems.push(`'${key}' and '${clash.key}' both become the column ${name}; keep one`);
    else if (clash !== undefined) {
      problems.push(`'${key}' and '${clash.key}' become the columns ${name} and ${clash.name}, which readers such as DuckDB and Spark take for one (they ignore case); keep one`);
    } else if (spec.columns.some((column) => column.name.toLowerCase() === name.toLowerCase())) {
      problems.push(`'${key}' becomes ${name}, a column ${resource} already have`);
    }
  }
  return problems;
}

export type StreamConfig = z.output<typeof streamSchema>;
/** A stream of one of the collections (not datapoints, not instances). */
export type CollectionStreamConfig = Exclude<StreamConfig, { resource: 'datapoints' | 'instances' }>;
export type DatapointsStreamConfig = Extract<StreamConfig, { resource: 'datapoints' }>;
export type InstancesStreamConfig = Extract<StreamConfig, { resource: 'instances' }>;
/** What a stream reads: one of the collections, the datapoints inside time series, or data-model instances. */
export type StreamResource = Resource | 'datapoints' | 'instances' | 'datapoint-subscription';
/**
 * What the records (checkpoint, manifest) name a stream's resource by: a datapoints stream that
 * follows a subscription (its `subscription` key) is a `datapoint-subscription` stream there.
 */
export const STREAM_RESOURCES = [...RESOURCES, 'datapoints', 'instances', 'datapoint-subscription'] as const;
/** What a stream lists with `partition=m/n`: a collection, or the time series of a datapoints stream. */
export type ListedResource = Resource | 'datapoints';
export type OutputConfig = z.output<typeof outputSchema>;
