import { silentLogger } from '../../log.js';
import { DeltaLogError } from '../../errors.js';
import { commitName, hasDeltaLog, LOG_FOLDER, type LockOwner, type OutputStore, readDeltaLog } from '../../output/index.js';
import {
  LATEST_FILE,
  LOCK_FILE,
  MANIFEST_FILE,
  type Output,
  pairKey,
  parseCheckpoint,
  type LiveProgress,
  progressKeyOf,
  readLiveProgress,
  sealedWindows,
  type StreamState,
} from '../state/index.js';
import { readWorkersProgress, workerLockKey } from '../workers/index.js';
import { readManifest } from '../check/index.js';
import { dataEndOf } from './data-ends.js';

export interface PartStatus {
  stream: string;
  partition: string;
  rows: number;
  shards: number;
  done: boolean;
  /** False when nothing of it was committed yet: no cursor saved, no shard. */
  started: boolean;
  /** Seconds since the partition's cursor was last saved. */
  cursorAgeSeconds: number;
  /** Datapoints: series taken from its listing and not done yet (each resumes after its last committed point). */
  seriesInFlight?: number;
  /**
   * From the progress file of the run draining it (beside that run's lock): 'fetching' while that
   * run holds its lock, 'stopped' when the file outlived it. Absent when no run drains it.
   */
  live?: 'fetching' | 'stopped';
  /** While fetching: rows read so far, committed or not (`rows` counts the committed ones). */
  rowsRead?: number;
}

export interface StreamStatus {
  stream: string;
  /** What the stream reads: a collection, or `datapoints` (then `window` holds point times). */
  resource: string;
  mode: string;
  run: string | null;
  /** lastUpdatedTime read by the current run: [from, until), epoch ms (from null: the beginning). */
  window: StreamState['window'];
  /**
   * incremental: the end of its last completed window, epoch ms (the current window's `until` once
   * it is complete, else the one before's); null until one completed, and for other modes.
   */
  watermark: number | null;
  /** snapshot: the newest sealed run (its folder name), and how many sealed runs the folder keeps. */
  latest?: string | null;
  snapshots?: number;
  /** A Delta table stream: its latest version, or null before the first commit. */
  table?: TableStatus | null;
  /** While a run drains it: its figures from the run's progress file (rows, rows/s, totals, series). */
  running?: LiveStream;
}

/** A stream's figures as a running run's progress file gives them. */
export type LiveStream = NonNullable<LiveProgress['streams']>[string];

/** A stream's Delta table: its latest version and that version's commit, or why its log cannot be read. */
export type TableStatus =
  | { version: number; committedAt: number | null; run: string | null; files: number } |
  { problem: string };

/** An output's progress as its state files record it, read without a lock and without the platform. */
export interface OutputStatus {
  outDir: string;
  /** The last run's state; 'running' only while its lock is alive, 'stopped' when its process is gone. */
  state: string;
  /** Who runs it now. */
  runner?: LockOwner;
  streams: StreamStatus[];
  parts: PartStatus[];
  /** During a split job: each worker's progress, and the job's number of workers and start. */
  workers?: { index: number; started: boolean; complete: boolean }[];
  split?: { count: number; since: string };
}

/** The status of an output; undefined when it has no checkpoint (no run yet). */
export async function readStatus(output: Output, now = Date.now()): Promise<OutputStatus | undefined> {
  const { store, checkpointKey } = output;
  const text = await store.getText(checkpointKey);
  if (text === undefined) return undefined;
  // During a split job the output's checkpoint is where it started: the workers have the progress.
  const split = await readWorkersProgress(store, silentLogger, new Date(now).toISOString());
  const checkpoint = split?.checkpoint ?? parseCheckpoint(text, store.where(checkpointKey));
  const hasManifest = (await store.size(MANIFEST_FILE)) !== undefined;
  const manifest = hasManifest ? await readManifest(store, checkpoint.baseUrl, silentLogger) : undefined;
  const lock = await store.lockState(LOCK_FILE);
  const runner = lock.state === 'held' && lock.alive ? lock.owner : undefined;
  const recorded = split === undefined ? (manifest?.state ?? 'unknown') : 'running';
  const workerLocks = (split?.workers ?? []).map(({ index }) => {
    const { place, count } = split!.agreement;
    return workerLockKey(place, { index, count });
  });
  const { parts: live, streams: running } = await liveParts(store, [LOCK_FILE, ...workerLocks]);
  const parts: PartStatus[] = Object.entries(checkpoint.streams).flatMap(([stream, s]) =>
    Object.entries(s.parts).map(([m, part]) => {
      const drained = part.done ? undefined : live.get(pairKey(stream, Number(m)));
      return {
        stream,
        partition: `${m}/${s.partitions}`,
        rows: part.rows,
        shards: part.nextSeq,
        done: part.done,
        started: part.done || part.cursor !== null || part.nextSeq > 0 || part.points !== undefined,
        cursorAgeSeconds: Math.round((now - Date.parse(part.updatedAt)) / 1000),
        ...(part.points === undefined ? {} : { seriesInFlight: part.points.series.length }),
        ...(drained === undefined ? {} : { live: drained.live }),
        // The file is rewritten every few seconds, a commit may be newer: never fewer than committed.
        ...(drained?.live === 'fetching' ? { rowsRead: Math.max(part.rows, drained.rows) } : {}),
      };
    }),
  );
  const streams: StreamStatus[] = [];
  for (const [name, state] of Object.entries(checkpoint.streams)) {
    const { mode, run, window, resource } = state;
    const watermark = mode === 'incremental' ? (dataEndOf(state, undefined) ?? null) : null;
    const table = state.table === 'delta' ? { table: await tableStatus(store, name) } : {};
    const figures = running.get(name);
    const runningNow = figures === undefined ? {} : { running: figures };
    const base = { stream: name, resource, mode, run, window, watermark, ...table, ...runningNow };
    if (state.mode !== 'snapshot') {
      streams.push(base);
      continue;
    }
    const latest = (await store.getText(`${name}/${LATEST_FILE}`))?.trim() ?? null;
    streams.push({ ...base, latest, snapshots: (await sealedWindows(store, name)).length });
  }
  return {
    outDir: store.location,
    // A manifest left 'running' by a process that is gone: stopped, not running.
    state: recorded === 'running' && split === undefined && runner === undefined ? 'stopped' : recorded,
    ...(runner === undefined ? {} : { runner }),
    streams,
    parts,
    ...(split === undefined
      ? {}
      : { workers: split.workers, split: { count: split.agreement.count, since: split.agreement.createdAt } }),
  };
}

/** Bytes of a commit file status reads for its commitInfo; a larger one is left unread (its time unknown). */
const MAX_COMMIT_INFO_BYTES = 16 * 1024 * 1024;

/** The latest version of the Delta table in a stream's folder and when it was committed, for which run. */
async function tableStatus(store: OutputStore, stream: string): Promise<TableStatus | null> {
  if (!(await hasDeltaLog(store, stream))) return null;
  try {
    const { version, files, commits } = await readDeltaLog(store, stream);
    // The version's commitInfo, replayed after the checkpoint; or, for the checkpoint's own version, its commit file.
    const key = `${stream}/${LOG_FOLDER}/${commitName(version)}`;
    const replayed = commits.find((commit) => commit.version === version)?.info;
    const small = replayed === undefined && ((await store.size(key)) ?? Infinity) <= MAX_COMMIT_INFO_BYTES;
    const text = small ? await store.getText(key) : undefined;
    const line = text?.split('\n').find((entry) => entry.startsWith('{"commitInfo"'));
    const parsed = line === undefined ? undefined : (JSON.parse(line) as { commitInfo?: Record<string, unknown> });
    const info = replayed ?? parsed?.commitInfo;
    const own = info?.bulkExtract as { run?: unknown } | undefined;
    return {
      version,
      committedAt: typeof info?.timestamp === 'number' ? info.timestamp : null,
      run: typeof own?.run === 'string' ? own.run : null,
      files: files.length,
    };
  } catch (error) {
    if (error instanceof DeltaLogError || error instanceof SyntaxError) return { problem: error.message };
    throw error;
  }
}

/**
 * The partitions the progress files beside `locks` name: 'fetching' when the lock is held, alive,
 * by the process that wrote the file; 'stopped' when that process is gone. A missing file names
 * none; a damaged one is passed over (status goes by the checkpoint). With them, the figures of
 * each stream the live runs drain (the workers' of a split job added up).
 */
async function liveParts(
  store: OutputStore,
  locks: readonly string[],
): Promise<{ parts: Map<string, { live: 'fetching' | 'stopped'; rows: number }>; streams: Map<string, LiveStream> }> {
  const found = new Map<string, { live: 'fetching' | 'stopped'; rows: number }>();
  const streams = new Map<string, LiveStream>();
  for (const lockKey of locks) {
    const key = progressKeyOf(lockKey);
    const text = await store.getText(key);
    if (text === undefined) continue;
    const read = readLiveProgress(text, store.where(key));
    if (!('progress' in read)) continue;
    const { progress } = read;
    const lock = await store.lockState(lockKey);
    const held = lock.state === 'held' && lock.alive && lock.owner?.pid === progress.pid && lock.owner.host === progress.host;
    for (const [pair, { rows }] of Object.entries(progress.parts)) found.set(pair, { live: held ? 'fetching' : 'stopped', rows });
    if (!held) continue;
    for (const [name, figures] of Object.entries(progress.streams ?? {})) {
      streams.set(name, addFigures(streams.get(name), figures));
    }
  }
  return { parts: found, streams };
}

/** Two workers' figures of one stream, added up (a figure one of them lacks is unknown). */
function addFigures(a: LiveStream | undefined, b: LiveStream): LiveStream {
  if (a === undefined) return { ...b };
  const sum = (key: 'rowsPerSecond' | 'total' | 'series' | 'seriesTotal') =>
    a[key] === undefined || b[key] === undefined ? {} : { [key]: a[key] + b[key] };
  return { rows: a.rows + b.rows, ...sum('rowsPerSecond'), ...sum('total'), ...sum('series'), ...sum('seriesTotal') };
}
