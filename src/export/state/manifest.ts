import { z } from 'zod';
import { CheckpointError } from '../../errors.js';
import { FORMATS, MODES, RESOURCES, STREAM_NAME, STREAM_RESOURCES } from '../../config/job-schema.js';
import type { OutputStore } from '../../output/index.js';
import { VERSION } from '../../version.js';
import type { Checkpoint } from './checkpoint.js';
import { sentWindow, streamRecord, syncField } from './stream-records.js';

import { MANIFEST_FILE, partDir } from './layout.js';
import { shardFileName } from '../../sink/index.js';
import { parseStateFile } from './state-file.js';

export const MANIFEST_VERSION = 1;
/** Far above the stats of any view's columns: a bound on what a manifest may make a run write into a commit. */
const MAX_STATS_CHARS = 1024 * 1024;

const manifestFileSchema = z.object({
  /** Relative to the output folder, with `/` separators: always where the shard belongs (shardPaths). */
  path: z.string().min(1),
  stream: z.string().regex(STREAM_NAME),
  /** incremental and snapshot: the run that wrote it (absent for a full export). */
  run: z.string().regex(/^\d{8}T\d{6}\.\d{3}Z$/).optional(),
  m: z.number().int().min(1),
  n: z.number().int().min(1),
  seq: z.number().int().min(0),
  format: z.enum(FORMATS),
  rows: z.number().int().min(0),
  bytes: z.number().int().min(0),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** A Delta table's data file: the stats its add action carries (JSON, as Spark writes them). */
  deltaStats: z.string().max(MAX_STATS_CHARS).optional(),
}).superRefine((file, ctx) => {
  const paths = shardPaths(file);
  if (!paths.includes(file.path)) {
    ctx.addIssue({
      code: 'custom',
      path: ['path'],
      message: `${JSON.stringify(file.path.slice(0, 200))} is not where shard ${file.seq} of ${file.stream} partition ${file.m}/${file.n} belongs (${paths.join(' or ')}): the manifest was edited or damaged`,
    });
  }
});

/**
 * The entries of a manifest (parsed JSON, not checked yet) that name a path other than their
 * shard's: one line each. Such a manifest was edited, and a run refuses it rather than start over
 * from an empty list, as it does for one that is merely damaged.
 */
function misplacedEntries(value: unknown): string[] {
  const files = (value as { files?: unknown } | null)?.files;
  if (!Array.isArray(files)) return [];
  return files.flatMap((entry: unknown, i) => {
    const parsed = manifestFileSchema.safeParse(entry);
    const issue = parsed.error?.issues.find((found) => found.path[0] === 'path');
    return issue === undefined ? [] : [`files.${i}.path: ${issue.message}`];
  });
}

/**
 * Where a shard of this partition, sequence number and format lies: the only paths a manifest may
 * list for it, so that no entry can lead outside the output or onto another shard.
 */
export function shardPaths(file: Pick<ManifestFile, 'stream' | 'run' | 'm' | 'n' | 'seq' | 'format'>): string[] {
  const dir = partDir(file.stream, file.m, file.n, file.run ?? null);
  const extensions = file.format === 'parquet' ? ['parquet'] : ['ndjson', 'ndjson.gz'];
  return extensions.map((ext) => `${dir}/${shardFileName(file.seq, ext)}`);
}

const manifestStreamSchema = z.object({
  resource: z.enum(STREAM_RESOURCES),
  /**
   * What identifies a row, unique across the stream's rows: the field `id`, or `externalId`
   * (relationships); datapoints: the columns `timeseriesId` and `timestamp` (and `granularity`);
   * instances: `space` and `externalId` (of the stream's one instance type).
   */
  key: z.union([z.enum(['id', 'externalId']), z.array(z.string())]).optional(),
  /** Datapoints and instances: the columns of its Parquet files, with their types. */
  columns: z.array(z.object({ name: z.string(), type: z.string() })).optional(),
  /** Datapoints: the point times the current run reads, start inclusive, end exclusive. */
  pointWindow: z.object({ start: z.number(), end: z.number() }).optional(),
  /** Datapoints: series asked for that the platform did not know (deleted since listed, or never there), skipped. */
  unknownSeries: z.array(z.union([
    z.object({ id: z.number() }),
    z.object({ externalId: z.string() }),
    z.object({ instanceId: z.object({ space: z.string(), externalId: z.string() }) }),
  ])).optional(),
  /** Metadata keys its Parquet files also hold as `metadata_<key>` STRING columns, before `extra`. */
  metadataColumns: z.array(z.string()).optional(),
  mode: z.enum(MODES),
  /** Incremental instances: the current run reads the sync feed's backfill, or its changes since the run before. */
  sync: z.enum(['backfill', 'changes']).optional(),
  /** The lastUpdatedTime range of the current run, as sent: min inclusive, max inclusive (null: none). */
  window: z.object({ minLastUpdatedTime: z.number().nullable(), maxLastUpdatedTime: z.number() }).nullable(),
  /** incremental and snapshot: the current run; incremental: where it started (the last completed run's end). */
  run: z.string().nullable(),
  watermark: z.number().nullable(),
  partitions: z.number().int().min(1),
  formats: z.array(z.enum(FORMATS)),
  params: z.array(z.tuple([z.string(), z.string()])),
  rows: z.number().int().min(0),
  /** Committed shard files, all formats. */
  files: z.number().int().min(0),
  done: z.boolean(),
  /** Per partition m: the cursor to resume from, null once drained. */
  cursors: z.record(z.string(), z.string().nullable()),
});

/** incomplete: the run ended without a failure, but the job has streams it did not read (--stream). */
const RUN_STATES = ['running', 'complete', 'incomplete', 'failed', 'interrupted'] as const;

/** `_manifest.json`: what the output folder holds, updated with every committed shard. */
export const manifestSchema = z.object({
  version: z.literal(MANIFEST_VERSION),
  tool: z.string(),
  baseUrl: z.string(),
  state: z.enum(RUN_STATES),
  startedAt: z.string(),
  finishedAt: z.string().optional(),
  durationMs: z.number().optional(),
  requests: z.number().int().min(0),
  retries: z.number().int().min(0),
  /** Answers that were HTTP 429 (throttled), part of `requests`. */
  throttled: z.number().int().min(0),
  /** Column names and types of the Parquet files, per resource. */
  schema: z.partialRecord(z.enum(RESOURCES), z.array(z.object({ name: z.string(), type: z.string() }))),
  streams: z.record(z.string(), manifestStreamSchema),
  files: z.array(manifestFileSchema),
});

/**
 * `<stream>/run=<run>/_manifest.json`: what one completed incremental or snapshot run wrote. The
 * output folder's `_manifest.json` lists the current runs only, so each run folder describes itself.
 */
export const windowManifestSchema = z.object({
  version: z.literal(1),
  tool: z.string(),
  baseUrl: z.string(),
  stream: z.string(),
  resource: z.enum(STREAM_RESOURCES),
  run: z.string(),
  /** The lastUpdatedTime range read, both ends inclusive as sent (min null: the beginning); null for datapoints. */
  window: z.object({ minLastUpdatedTime: z.number().nullable(), maxLastUpdatedTime: z.number() }).nullable(),
  /** Datapoints: the point times read, start inclusive, end exclusive. */
  pointWindow: z.object({ start: z.number(), end: z.number() }).optional(),
  /** Incremental instances: the feed's backfill (every instance) or its changes since the run before. */
  sync: z.enum(['backfill', 'changes']).optional(),
  rows: z.number().int().min(0),
  /** Paths relative to the output folder, as in the output folder's manifest. */
  files: z.array(manifestFileSchema),
});

export type WindowManifest = z.output<typeof windowManifestSchema>;
export type ManifestFile = z.output<typeof manifestFileSchema>;
export type ManifestStream = z.output<typeof manifestStreamSchema>;
export type RunState = (typeof RUN_STATES)[number];
export type Manifest = z.output<typeof manifestSchema>;

/**
 * The one reader of a manifest: the output's `_manifest.json` or a worker's (`key`); undefined when
 * there is none. Strict (no `onDamaged`): a manifest that is not valid JSON or does not check is a
 * CheckpointError naming the file. Tolerant: a damaged one goes to `onDamaged` and reads as
 * undefined, for a caller that goes on from something else; but one with entries outside their
 * shards' places was edited, and is refused all the same.
 */
export async function readManifestFile(
  store: OutputStore,
  key: string = MANIFEST_FILE,
  onDamaged?: (error: CheckpointError) => void,
): Promise<Manifest | undefined> {
  const text = await store.getText(key);
  if (text === undefined) return undefined;
  if (onDamaged === undefined) return parseStateFile(text, store.where(key), manifestSchema, MANIFEST_WHAT);
  const misplaced = misplacedEntries(jsonOrUndefined(text));
  if (misplaced.length > 0) {
    throw new CheckpointError(
      `${store.where(key)} lists shards outside their partition's folder, so it was edited; no run goes on from it:\n  - ${misplaced.slice(0, 5).join('\n  - ')}\nRestore it, or move it away and run with --fresh to start over. Nothing was changed.`,
    );
  }
  try {
    return parseStateFile(text, store.where(key), manifestSchema, MANIFEST_WHAT);
  } catch (error) {
    if (!(error instanceof CheckpointError)) throw error;
    onDamaged(error);
    return undefined;
  }
}

const MANIFEST_WHAT = 'a bulk-extract manifest';

function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export function newManifest(baseUrl: string, startedAt: string): Manifest {
  return {
    version: MANIFEST_VERSION,
    tool: `bulk-extract/${VERSION}`,
    baseUrl,
    state: 'running',
    startedAt,
    requests: 0,
    retries: 0,
    throttled: 0,
    schema: {},
    streams: {},
    files: [],
  };
}

/**
 * Brings the manifest in line with the checkpoint: files of a partition at or past its next
 * sequence number were written after the last checkpoint (a crash between rename and checkpoint)
 * and are dropped; stream summaries are recomputed from the checkpoint.
 */
export function reconcile(manifest: Manifest, checkpoint: Checkpoint): Manifest {
  const files = manifest.files.filter((file) => {
    const state = checkpoint.streams[file.stream];
    const part = state?.parts[String(file.m)];
    return (
      part !== undefined &&
      state?.partitions === file.n &&
      (file.run ?? null) === state.run &&
      file.seq < part.nextSeq
    );
  });
  return { ...manifest, files, streams: summarize(checkpoint, files) };
}

export function summarize(checkpoint: Checkpoint, files: readonly ManifestFile[]): Record<string, ManifestStream> {
  return Object.fromEntries(
    Object.entries(checkpoint.streams).map(([name, state]): [string, ManifestStream] => {
      const parts = Object.entries(state.parts);
      return [
        name,
        {
          resource: state.resource,
          ...streamRecord(state.resource).key(state),
          ...(state.metadataColumns === undefined ? {} : { metadataColumns: state.metadataColumns }),
          mode: state.mode,
          ...syncField(state),
          // Datapoints record their point times instead (key); instances are read whole (or by sync cursor).
          window: sentWindow(state),
          run: state.run,
          watermark: state.watermark,
          partitions: state.partitions,
          formats: state.formats,
          params: state.params,
          rows: parts.reduce((sum, [, part]) => sum + part.rows, 0),
          done: parts.every(([, part]) => part.done),
          cursors: Object.fromEntries(parts.map(([m, part]) => [m, part.cursor])),
          files: files.filter((file) => file.stream === name).length,
        },
      ];
    }),
  );
}
