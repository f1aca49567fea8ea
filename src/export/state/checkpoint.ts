import { CheckpointError } from '../../errors.js';
import type { PointsPlan, StreamPlan } from './stream-plan.js';
import { checkStateValue, parseJson } from './state-file.js';
import { resolvePointTime } from '../../resources/index.js';
import { syncPhase } from './stream-records.js';
import { metadataColumnsDrift, metadataColumnsState } from './metadata-columns.js';
import { schemaVersionDrift, schemaVersionState } from './schema-version.js';
import { instanceColumnsDrift } from './instance-columns.js';
import { digestProblem, withDigest, withoutDigest } from './state-digest.js';
import { impossibleState } from './impossible-state.js';

import {
  type Checkpoint,
  CHECKPOINT_VERSION,
  checkpointSchema,
  DIGEST_VERSION,
  type PartState,
  type PointsPartState,
  type StreamState,
  type UpdatedWindow,
} from './checkpoint-schema.js';

export {
  type Checkpoint,
  CHECKPOINT_VERSION,
  type PartState,
  type PointsPartState,
  type SeriesProgress,
  type StreamState,
  type UpdatedWindow,
} from './checkpoint-schema.js';

/**
 * A stream not read yet: every partition starts at its first page. The window ends at the run's
 * start (`now`), minus the safety lag for an incremental stream, and at the filter's own
 * maxLastUpdatedTime when that is earlier; a resumed run keeps it, so it reads the same snapshot.
 */
export function newStreamState(stream: StreamPlan, now: string): StreamState {
  const startedAtMs = Date.parse(now);
  const { points } = stream;
  return {
    resource: stream.resource,
    mode: stream.mode,
    params: stream.params,
    window:
      points === undefined
        ? { from: stream.updatedBetween.min ?? null, until: windowEnd(stream, startedAtMs) }
        : pointsWindow(points, stream, startedAtMs),
    // A Delta table's full export has a run folder too: a --fresh export writes beside the version readers see.
    run: stream.mode === 'full' && stream.table !== 'delta' ? null : runId(startedAtMs),
    watermark: null,
    partitions: stream.partitions,
    formats: [...stream.formats],
    ...metadataColumnsState(stream.metadataColumns),
    ...schemaVersionState(stream.resource),
    parts: freshParts(stream.partitions, now),
    ...(stream.table === 'delta' ? { table: 'delta' as const } : {}),
  };
}

/**
 * The point times a datapoints stream's first run reads: from `start` to `end` (default: the run's
 * start), both resolved now; incremental: to the run's start minus the safety lag.
 */
function pointsWindow(points: PointsPlan, stream: StreamPlan, startedAtMs: number): UpdatedWindow {
  const from = resolvePointTime(points.start, startedAtMs);
  if (stream.mode === 'incremental') return { from, until: startedAtMs - stream.safetyLagMs };
  return { from, until: points.end === undefined ? startedAtMs : resolvePointTime(points.end, startedAtMs) };
}

/** Where a run started at `startedAtMs` stops reading: its start (minus the lag, incremental), or the filter's end. */
function windowEnd(stream: StreamPlan, startedAtMs: number): number {
  const { max } = stream.updatedBetween;
  const until =
    stream.mode === 'incremental' ? startedAtMs - stream.safetyLagMs : Math.min(startedAtMs, max === undefined ? Infinity : max + 1);
  return Math.max(until, 0);
}

/**
 * The next window of a stream whose last window completed. Incremental: the watermark moves to
 * that window's `until` and the new window runs from there to this run's start minus the safety
 * lag. Snapshot: the whole collection again, pinned at this run's start; a datapoints stream's
 * point times from `start` to `end` resolved at this run's start (a relative window moves with
 * the runs). Windows follow each other without a gap or an overlap however close together the runs
 * are, and a window that holds no update is still a run (its folder is sealed with 0 rows).
 * Undefined when there is no next run: a full export, or a run that starts no later than the last
 * one (a clock set back, or the same millisecond), which has no window of its own.
 */
export function nextWindow(state: StreamState, stream: StreamPlan, now: string): StreamState | undefined {
  if (state.window === null || stream.mode === 'full') return undefined;
  const startedAtMs = Date.parse(now);
  const run = runId(startedAtMs);
  const window =
    stream.mode === 'incremental'
      ? { from: state.window.until, until: windowEnd(stream, startedAtMs) }
      : stream.points === undefined
        ? { from: stream.updatedBetween.min ?? null, until: windowEnd(stream, startedAtMs) }
        : pointsWindow(stream.points, stream, startedAtMs);
  if (window.until <= (window.from ?? -1) || run <= (state.run ?? '')) return undefined;
  return {
    ...state,
    window,
    run,
    watermark: stream.mode === 'incremental' ? state.window.until : null,
    parts: syncPhase(state) === undefined ? freshParts(state.partitions, now) : followOn(state.parts),
  };
}

/**
 * The parts of a sync feed's next run: each query goes on from the cursor it ended with, which
 * keeps the time it was saved (the platform expires a cursor 3 days after it gave it out).
 */
function followOn(parts: Readonly<Record<string, PartState>>): Record<string, PartState> {
  return Object.fromEntries(
    Object.entries(parts).map(([m, { cursor, updatedAt }]): [string, PartState] => {
      return [m, { cursor, nextSeq: 0, rows: 0, done: false, updatedAt }];
    }),
  );
}

/** `20261121T101530.123Z`: the run's start in UTC, safe in file names and sorted by time. */
export function runId(startedAtMs: number): string {
  return new Date(startedAtMs).toISOString().replace(/[-:]/g, '');
}

/** The start of the run `run` (runId's format) in milliseconds since the epoch. */
export function runStartMs(run: string): number {
  const [, date = '', hh = '', mm = '', rest = ''] = /^(\d{8})T(\d\d)(\d\d)(\d\d\.\d{3}Z)$/.exec(run) ?? [];
  const ms = Date.parse(`${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6)}T${hh}:${mm}:${rest}`);
  if (!Number.isSafeInteger(ms)) throw new TypeError(`not a run id: ${run}`);
  return ms;
}

export function isComplete(state: StreamState): boolean {
  return Object.values(state.parts).every((part) => part.done);
}

function freshParts(partitions: number, now: string): Record<string, PartState> {
  const parts: Record<string, PartState> = {};
  for (let m = 1; m <= partitions; m++) {
    parts[String(m)] = { cursor: null, nextSeq: 0, rows: 0, done: false, updatedAt: now };
  }
  return parts;
}

export function newCheckpoint(baseUrl: string, streams: readonly StreamPlan[], now: string): Checkpoint {
  return {
    version: CHECKPOINT_VERSION,
    baseUrl,
    createdAt: now,
    updatedAt: now,
    streams: Object.fromEntries(streams.map((stream) => [stream.name, newStreamState(stream, now)])),
  };
}

/** Whether two base URLs name the same project root: a trailing slash does not count (older checkpoints kept it). */
export function sameBaseUrl(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}

/**
 * How the planned streams differ from what the checkpoint recorded; empty when a resume is safe.
 * Streams the checkpoint does not know yet are not drift: they start fresh.
 */
export function findDrift(checkpoint: Checkpoint, baseUrl: string, streams: readonly StreamPlan[]): string[] {
  const drift: string[] = [];
  if (!sameBaseUrl(checkpoint.baseUrl, baseUrl)) {
    drift.push(`source.baseUrl: '${checkpoint.baseUrl}' in the checkpoint, '${baseUrl}' in the config`);
  }
  for (const stream of streams) {
    const saved = checkpoint.streams[stream.name];
    if (saved === undefined) continue;
    const at = `stream '${stream.name}'`;
    if (saved.resource !== stream.resource) {
      drift.push(`${at}: resource ${saved.resource} in the checkpoint, ${stream.resource} in the config`);
    }
    if (saved.mode !== stream.mode) {
      drift.push(`${at}: mode ${saved.mode} in the checkpoint, ${stream.mode} in the config`);
    }
    if (saved.partitions !== stream.partitions) {
      drift.push(`${at}: partitions ${saved.partitions} in the checkpoint, ${stream.partitions} in the config`);
    }
    const before = new Map(saved.params);
    const now = new Map(stream.params);
    for (const key of new Set([...before.keys(), ...now.keys()])) {
      if (before.get(key) !== now.get(key)) {
        drift.push(`${at}: ${key} ${show(before.get(key))} in the checkpoint, ${show(now.get(key))} in the config`);
      }
    }
    drift.push(...metadataColumnsDrift(at, saved, stream));
    drift.push(...schemaVersionDrift(at, saved, stream));
    drift.push(...instanceColumnsDrift(at, saved, stream));
    if ((saved.table ?? 'files') !== (stream.table ?? 'files')) {
      drift.push(`${at}: table ${saved.table ?? 'files'} in the checkpoint, ${stream.table ?? 'files'} in the config`);
    }
    if ([...saved.formats].sort().join() !== [...stream.formats].sort().join()) {
      drift.push(`${at}: formats ${saved.formats.join('+')} in the checkpoint, ${stream.formats.join('+')} in the config`);
    }
  }
  return drift;
}

function show(value: string | undefined): string {
  return value === undefined ? '(not set)' : `=${value}`;
}

/**
 * What a commit moves a partition to: the cursor after its shard (undefined: the chain ended) and
 * the rows it holds; a datapoints partition gives its listing and series instead of a cursor.
 */
export interface PartUpdate {
  cursor: string | undefined;
  /**
   * The partition has nothing more to read in this run; default: the chain ended (no cursor).
   * A sync feed that caught up is done and keeps its cursor.
   */
  done?: boolean | undefined;
  rows: number;
  points?: PointsPartState | undefined;
  /** A list chain's last page committed, its fingerprint (PartState.lastPage). */
  lastPage?: string | undefined;
}

/** Records a committed shard (or a drained empty partition): the cursor after it, its rows, done. */
export function commitPart(
  checkpoint: Checkpoint,
  stream: string,
  m: number,
  update: PartUpdate & { shards: number },
  now: string,
): Checkpoint {
  const part = partOf(checkpoint, stream, m);
  const { points } = update;
  const next: PartState = {
    cursor: update.cursor ?? null,
    nextSeq: part.nextSeq + update.shards,
    rows: part.rows + update.rows,
    done:
      points === undefined ? (update.done ?? update.cursor === undefined) : points.listed && points.series.length === 0,
    updatedAt: now,
    ...(points === undefined ? {} : { points }),
    ...(update.lastPage === undefined ? {} : { lastPage: update.lastPage }),
  };
  return withPart(checkpoint, stream, m, next, now);
}

/** Forgets a partition's progress (its cursor was refused): it is read again from its first page. */
export function restartPart(checkpoint: Checkpoint, stream: string, m: number, now: string): Checkpoint {
  return withPart(checkpoint, stream, m, { cursor: null, nextSeq: 0, rows: 0, done: false, updatedAt: now }, now);
}

export function partOf(checkpoint: Checkpoint, stream: string, m: number): PartState {
  const part = checkpoint.streams[stream]?.parts[String(m)];
  if (part === undefined) throw new CheckpointError(`The checkpoint has no partition ${m} of stream '${stream}'.`);
  return part;
}

export function streamOf(checkpoint: Checkpoint, stream: string): StreamState {
  const state = checkpoint.streams[stream];
  if (state === undefined) throw new CheckpointError(`The checkpoint has no stream '${stream}'.`);
  return state;
}

function withPart(checkpoint: Checkpoint, stream: string, m: number, part: PartState, now: string): Checkpoint {
  const state = streamOf(checkpoint, stream);
  return {
    ...checkpoint,
    updatedAt: now,
    streams: { ...checkpoint.streams, [stream]: { ...state, parts: { ...state.parts, [String(m)]: part } } },
  };
}

/**
 * Which partitions a checkpoint holds: `all` of each stream's (the output's own), or `some` of them
 * (a worker's, which holds its share).
 */
export type PartitionSet = 'all' | 'some';

/**
 * The text of a checkpoint file, as its one writer writes it (a run's commits, the merge of a
 * split job's workers): the checkpoint with the digest of its content (state-digest.ts).
 */
export function checkpointText(checkpoint: Checkpoint): string {
  return `${JSON.stringify(checkpointValue(checkpoint), null, 2)}\n`;
}

/** A checkpoint as it is stored, with its digest: in its file, or inside a split job's agreement. */
export function checkpointValue(checkpoint: Checkpoint): Checkpoint & { digest: string } {
  return withDigest(checkpoint);
}

/** Reads a checkpoint file's text; every way it can be unusable gets its own message. */
export function parseCheckpoint(text: string, file: string, parts: PartitionSet = 'all'): Checkpoint {
  return checkpointFromValue(parseJson(text, file), file, parts);
}

/**
 * A checkpoint already parsed from JSON (e.g. embedded in a split job's plan), checked the same
 * way: its version, its digest (version 6 on), its shape, and what bulk-extract never writes
 * (impossibleState). A checkpoint of an earlier version has no digest and is taken without one, so
 * that an export begun by an earlier version goes on after an upgrade; the next commit writes it
 * with its digest. Removing the digest of a later one does not pass for that: its version says it
 * had one.
 */
export function checkpointFromValue(value: unknown, file: string, parts: PartitionSet = 'all'): Checkpoint {
  const version = (value as { version?: unknown } | null)?.version;
  if (typeof version === 'number' && version > CHECKPOINT_VERSION) {
    throw new CheckpointError(
      `${file} was written by a newer bulk-extract (checkpoint version ${version}, this one reads ${CHECKPOINT_VERSION}). Upgrade bulk-extract, or run with --fresh to start over.`,
    );
  }
  const content = value !== null && typeof value === 'object' && !Array.isArray(value) ? checkedDigest(value as Record<string, unknown>, file) : value;
  const checkpoint = checkStateValue(content, file, checkpointSchema, 'a bulk-extract checkpoint');
  for (const [name, stream] of Object.entries(checkpoint.streams)) {
    const problem = partitionSetProblem(stream, parts);
    if (problem !== undefined) {
      throw new CheckpointError(
        `${file} is not a bulk-extract checkpoint (streams.${name}.parts: ${problem}). Move it away, or run with --fresh.`,
      );
    }
    const impossible = impossibleState(stream);
    if (impossible !== undefined) {
      throw new CheckpointError(
        `${file} holds what bulk-extract never writes (streams.${name}.${impossible.path}: ${impossible.problem}), so it was changed after bulk-extract wrote it and resuming from it would lose or repeat rows. Restore it as it was, or run with --fresh to start over.`,
      );
    }
  }
  return checkpoint;
}

/** A checkpoint's parsed value without its digest, once the digest matches (or it is of a version before digests). */
function checkedDigest(value: Record<string, unknown>, file: string): Record<string, unknown> {
  const { version } = value;
  const problem = digestProblem(value, typeof version === 'number' && version >= DIGEST_VERSION);
  if (problem === 'missing') {
    throw new CheckpointError(
      `${file} has no digest, which every checkpoint of version ${DIGEST_VERSION} on carries, so it was changed after bulk-extract wrote it and resuming from it could lose or repeat rows. Restore it as it was, or run with --fresh to start over.`,
    );
  }
  if (problem === 'mismatch') {
    throw new CheckpointError(
      `${file} does not match its digest: it was changed after bulk-extract wrote it (edited, or damaged), and resuming from it could lose or repeat rows. Restore it as it was, or run with --fresh to start over.`,
    );
  }
  return withoutDigest(value);
}

/** What is wrong with a stream's partition entries: each m from 1 to `partitions`, once (all of them, or some). */
function partitionSetProblem(stream: StreamState, parts: PartitionSet): string | undefined {
  const expected = Array.from({ length: stream.partitions }, (_, i) => String(i + 1));
  const missing = parts === 'all' ? expected.filter((m) => !(m in stream.parts)) : [];
  const extra = Object.keys(stream.parts).filter((m) => !expected.includes(m));
  if (missing.length === 0 && extra.length === 0) return undefined;
  const wrong = [
    ...(missing.length === 0 ? [] : [`no entry for partition ${missing.join(', ')}`]),
    ...(extra.length === 0 ? [] : [`an entry ${extra.map((m) => JSON.stringify(m)).join(', ')}, which is no partition`]),
  ];
  return `partitions: ${stream.partitions} wants entries 1 to ${stream.partitions}, but there is ${wrong.join(' and ')}`;
}

/** A partition's key in sets and maps: `stream/m`. */
export function pairKey(stream: string, m: number): string {
  return `${stream}/${m}`;
}
