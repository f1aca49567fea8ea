import type { Logger } from '../../log.js';
import { LockedError } from '../../output/folder-lock.js';
import type { OutputStore } from '../../output/store.js';
import { type Checkpoint, isComplete, type Manifest, MANIFEST_FILE, pairKey, reconcile, removeOwnedTree, sealRun, SUCCESS_FILE } from '../state/index.js';
import { assertShardsPresent, readManifest } from '../check/index.js';
import {
  pairsOf,
  readSharedRun,
  readWorker,
  SHARED_RUN_KEY,
  type SharedRun,
  WORKERS_DIR,
  workerComplete,
  workerLockKey,
  type WorkerRecords,
} from './workers.js';

/**
 * The workers of a sharded run, merged: each worker's checkpoint and manifest into one, in memory
 * (to decide) or into the output's own files (`absorb`, which ends the sharded run).
 */

export interface WorkersOptions {
  store: OutputStore;
  checkpointKey: string;
  baseUrl: string;
  logger: Logger;
  now: string;
  /** snapshot streams: completed snapshots to keep, when the merge seals a run. */
  keepOf: (stream: string) => number | undefined;
}

/** A sharded run whose workers' locks this process holds, merged in memory: nothing is written yet. */
export interface HeldWorkers {
  state: 'held';
  plan: SharedRun;
  checkpoint: Checkpoint;
  manifest: Manifest;
  complete: boolean;
  /** Workers with partitions left. */
  incomplete: number[];
  /** Writes the merge into the folder and ends the sharded run (see absorbWorkers). */
  absorb(): Promise<void>;
  release(): Promise<void>;
}

/**
 * Takes every worker's lock of the folder's sharded run, so that nothing is merged while a worker
 * runs, and merges the workers' checkpoints and manifests in memory. Refuses (throws) when a worker
 * counts files that are not there. The caller holds the output folder's lock.
 */
export async function holdWorkers(options: WorkersOptions): Promise<{ state: 'none' } | { state: 'busy'; plan: SharedRun; running: number[] } | HeldWorkers> {
  const { store, logger, now } = options;
  const plan = await readSharedRun(store);
  if (plan === undefined) return { state: 'none' };
  const releases: (() => Promise<void>)[] = [];
  const release = async () => {
    for (const done of releases.splice(0)) await done();
  };
  try {
    const running: number[] = [];
    for (let index = 0; index < plan.count; index++) {
      try {
        const what = `shard ${index}/${plan.count} of ${store.location}`;
        releases.push(await store.lock(workerLockKey({ index, count: plan.count }), what));
      } catch (error) {
        if (!(error instanceof LockedError)) throw error;
        running.push(index);
      }
    }
    if (running.length > 0) {
      await release();
      return { state: 'busy', plan, running };
    }
    const root = await readManifest(store, plan.checkpoint.baseUrl, logger);
    const workers = [];
    for (let index = 0; index < plan.count; index++) {
      workers.push(await readWorker({ store, plan, root, now, logger }, index));
    }
    const checkpoint = mergeCheckpoints(plan, workers.map((s) => s.checkpoint), now);
    const complete = plan.streams.every((name) => {
      const state = checkpoint.streams[name];
      return state !== undefined && isComplete(state);
    });
    const manifest = mergeManifests(plan, root, workers, checkpoint, complete, now);
    await assertShardsPresent(store, checkpoint, manifest, plan.streams);
    return {
      state: 'held',
      plan,
      checkpoint,
      manifest,
      complete,
      incomplete: workers.flatMap((worker, index) => (workerComplete(worker.checkpoint) ? [] : [index])),
      absorb: () => absorb(options, plan, checkpoint, manifest, complete),
      release,
    };
  } catch (error) {
    await release();
    throw error;
  }
}

export async function absorb(
  options: WorkersOptions,
  plan: SharedRun,
  checkpoint: Checkpoint,
  manifest: Manifest,
  complete: boolean,
): Promise<void> {
  const { store, checkpointKey, logger, keepOf } = options;
  // Adding the workers' files to the folder's records: manifest first, checkpoint second.
  await store.putText(MANIFEST_FILE, `${JSON.stringify(manifest, null, 2)}\n`);
  await store.putText(checkpointKey, `${JSON.stringify(checkpoint, null, 2)}\n`);
  if (complete) {
    for (const name of plan.streams) {
      const state = checkpoint.streams[name];
      if (state !== undefined) {
        const run = { stream: name, state, files: manifest.files, keep: keepOf(name) };
        await sealRun({ store, baseUrl: checkpoint.baseUrl, logger }, run);
      }
    }
    await store.putText(SUCCESS_FILE, '');
  }
  // The plan goes first: without it, leftover worker files are never read again.
  await store.remove([SHARED_RUN_KEY]);
  await removeOwnedTree(store, `${WORKERS_DIR}/${plan.id}`, logger);
  logger.info(
    { shards: plan.count, complete, rows: Object.values(manifest.streams).reduce((sum, s) => sum + s.rows, 0) },
    complete ? `sharded run finalized: ${plan.count} shards merged, _SUCCESS written` : 'merged the unfinished shards into the output folder\'s checkpoint',
  );
}

/** A sharded run as its workers are now, merged (read only: for `status`). */
export interface WorkersProgress {
  plan: SharedRun;
  checkpoint: Checkpoint;
  manifest: Manifest;
  shards: { index: number; started: boolean; complete: boolean }[];
}

export async function readWorkersProgress(
  store: OutputStore,
  logger: Logger,
  now: string,
): Promise<WorkersProgress | undefined> {
  const plan = await readSharedRun(store);
  if (plan === undefined) return undefined;
  const root = await readManifest(store, plan.checkpoint.baseUrl, logger);
  const workers = [];
  for (let index = 0; index < plan.count; index++) {
    workers.push(await readWorker({ store, plan, root, now, logger }, index));
  }
  const checkpoint = mergeCheckpoints(plan, workers.map((s) => s.checkpoint), now);
  const states = workers.map((worker, index) => ({
    index,
    started: worker.started,
    complete: workerComplete(worker.checkpoint),
  }));
  const manifest = mergeManifests(plan, root, workers, checkpoint, states.every((state) => state.complete), now);
  return { plan, checkpoint, manifest, shards: states };
}

function mergeCheckpoints(plan: SharedRun, workers: readonly Checkpoint[], now: string): Checkpoint {
  const streams = structuredClone(plan.checkpoint.streams);
  for (const worker of workers) {
    for (const [name, state] of Object.entries(worker.streams)) {
      const merged = streams[name];
      if (merged !== undefined) Object.assign(merged.parts, state.parts);
    }
  }
  return { ...plan.checkpoint, updatedAt: now, streams };
}

function mergeManifests(
  plan: SharedRun,
  root: Manifest,
  workers: readonly WorkerRecords[],
  checkpoint: Checkpoint,
  complete: boolean,
  now: string,
): Manifest {
  const shared = new Set(pairsOf(plan).map((pair) => pairKey(pair.stream, pair.m)));
  const files = [
    ...root.files.filter((file) => !shared.has(pairKey(file.stream, file.m))),
    ...workers.flatMap((worker) => worker.manifest.files),
  ];
  const sum = (key: 'requests' | 'retries' | 'throttled') => workers.reduce((total, s) => total + (s.manifest[key] ?? 0), 0);
  const merged: Manifest = {
    ...root,
    state: complete ? 'complete' : 'interrupted',
    startedAt: plan.createdAt,
    finishedAt: now,
    durationMs: Date.parse(now) - Date.parse(plan.createdAt),
    requests: sum('requests'),
    retries: sum('retries'),
    throttled: sum('throttled'),
    schema: Object.assign({}, root.schema, ...workers.map((s) => s.manifest.schema)) as Manifest['schema'],
    files,
  };
  return reconcile(merged, checkpoint);
}
