import type { Format, Mode, Resource } from '../config/job-schema.js';
import { VERSION } from '../version.js';
import { type Checkpoint, sentBounds } from './checkpoint.js';

export const MANIFEST_VERSION = 1;

/** One committed shard. `path` is relative to the output folder, with `/` separators. */
export interface ManifestFile {
  path: string;
  stream: string;
  /** incremental and snapshot: the run that wrote it (absent for a full export). */
  run?: string;
  m: number;
  n: number;
  seq: number;
  format: Format;
  rows: number;
  bytes: number;
  sha256: string;
}

export interface ManifestStream {
  resource: Resource;
  mode: Mode;
  /** The lastUpdatedTime range of the current run, as sent: min inclusive, max inclusive (null: none). */
  window: { minLastUpdatedTime: number | null; maxLastUpdatedTime: number } | null;
  /** incremental and snapshot: the current run; incremental: where it started (the last completed run's end). */
  run: string | null;
  watermark: number | null;
  partitions: number;
  formats: Format[];
  params: [string, string][];
  rows: number;
  /** Committed shard files, all formats. */
  files: number;
  done: boolean;
  /** Per partition m: the cursor to resume from, null once drained. */
  cursors: Record<string, string | null>;
}

/** incomplete: the run ended without a failure, but the job has streams it did not read (--stream). */
export type RunState = 'running' | 'complete' | 'incomplete' | 'failed' | 'interrupted';

/** `_manifest.json`: what the output folder holds, updated with every committed shard. */
export interface Manifest {
  version: typeof MANIFEST_VERSION;
  tool: string;
  baseUrl: string;
  state: RunState;
  startedAt: string;
  finishedAt?: string;
  durationMs?: number;
  requests: number;
  retries: number;
  /** Answers that were HTTP 429 (throttled), part of `requests`. */
  throttled: number;
  /** Column names and types of the Parquet files, per resource. */
  schema: Partial<Record<Resource, { name: string; type: string }[]>>;
  streams: Record<string, ManifestStream>;
  files: ManifestFile[];
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
          mode: state.mode,
          window: state.window === null ? null : sentBounds(state.window),
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
