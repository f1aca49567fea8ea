import { silentLogger } from '../../log.js';
import type { LockOwner } from '../../output/index.js';
import { LATEST_FILE, LOCK_FILE, MANIFEST_FILE, type Output, parseCheckpoint, sealedWindows, type StreamState } from '../state/index.js';
import { readWorkersProgress } from '../workers/index.js';
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
}

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
  const parts: PartStatus[] = Object.entries(checkpoint.streams).flatMap(([stream, s]) =>
    Object.entries(s.parts).map(([m, part]) => ({
      stream,
      partition: `${m}/${s.partitions}`,
      rows: part.rows,
      shards: part.nextSeq,
      done: part.done,
      started: part.done || part.cursor !== null || part.nextSeq > 0 || part.points !== undefined,
      cursorAgeSeconds: Math.round((now - Date.parse(part.updatedAt)) / 1000),
      ...(part.points === undefined ? {} : { seriesInFlight: part.points.series.length }),
    })),
  );
  const streams: StreamStatus[] = [];
  for (const [name, state] of Object.entries(checkpoint.streams)) {
    const { mode, run, window, resource } = state;
    const watermark = mode === 'incremental' ? (dataEndOf(state, undefined) ?? null) : null;
    const base = { stream: name, resource, mode, run, window, watermark };
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
