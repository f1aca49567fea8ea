import type { Logger } from '../../log.js';
import { LockedError, type OutputStore } from '../../output/index.js';
import { type Checkpoint, checkpointText, isComplete, type Manifest, MANIFEST_FILE, pairKey, reconcile, removeOwnedTree, sealWindow, SUCCESS_FILE } from '../state/index.js';
import { assertShardsPresent, readManifest } from '../check/index.js';
import { pairsOf, readAgreement, type WorkersAgreement, workerLockKey, workersPlace } from './agreement.js';
import { readWorker, workerComplete, type WorkerRecords } from './worker-files.js';

/**
 * The workers of a split job, merged: each worker's checkpoint and manifest into one, in memory
 * (to decide) or into the output's own files (`absorb`, which ends the split job).
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

/** A split job whose workers' locks this process holds, merged in memory: nothing is written yet. */
export interface HeldWorkers {
  state: 'held';
  agreement: WorkersAgreement;
  checkpoint: Checkpoint;
  manifest: Manifest;
  complete: boolean;
  /** Workers with partitions left. */
  incomplete: number[];
  /** Writes the merge into the folder and ends the split job (see absorbWorkers). */
  absorb(): Promise<void>;
  release(): Promise<void>;
}

/**
 * Takes every worker's lock of the folder's split job, so that nothing is merged while a worker
 * runs, and merges the workers' checkpoints and manifests in memory. Refuses (throws) when a worker
 * counts files that are not there. The caller holds the output folder's lock.
 */
export async function holdWorkers(options: WorkersOptions): Promise<{ state: 'none' } | { state: 'busy'; agreement: WorkersAgreement; running: number[] } | HeldWorkers> {
  const { store, logger, now } = options;
  const agreement = await readAgreement(store, await workersPlace(store));
  if (agreement === undefined) return { state: 'none' };
  const releases: (() => Promise<void>)[] = [];
  const release = async () => {
    for (const done of releases.splice(0)) await done();
  };
  try {
    const running: number[] = [];
    for (let index = 0; index < agreement.count; index++) {
      try {
        const what = `worker ${index}/${agreement.count} of ${store.location}`;
        releases.push(await store.lock(workerLockKey(agreement.place, { index, count: agreement.count }), what));
      } catch (error) {
        if (!(error instanceof LockedError)) throw error;
        running.push(index);
      }
    }
    if (running.length > 0) {
      await release();
      return { state: 'busy', agreement, running };
    }
    const root = await readManifest(store, agreement.checkpoint.baseUrl, logger);
    const workers = [];
    for (let index = 0; index < agreement.count; index++) {
      workers.push(await readWorker({ store, agreement, root, now, logger }, index));
    }
    const checkpoint = mergeCheckpoints(agreement, workers.map((s) => s.checkpoint), now);
    const complete = agreement.streams.every((name) => {
      const state = checkpoint.streams[name];
      return state !== undefined && isComplete(state);
    });
    const manifest = mergeManifests(agreement, root, workers, checkpoint, complete, now);
    await assertShardsPresent(store, checkpoint, manifest, agreement.streams);
    return {
      state: 'held',
      agreement,
      checkpoint,
      manifest,
      complete,
      incomplete: workers.flatMap((worker, index) => (workerComplete(worker.checkpoint) ? [] : [index])),
      absorb: () => absorb(options, agreement, checkpoint, manifest, complete),
      release,
    };
  } catch (error) {
    await release();
    throw error;
  }
}

export async function absorb(
  options: WorkersOptions,
  agreement: WorkersAgreement,
  checkpoint: Checkpoint,
  manifest: Manifest,
  complete: boolean,
): Promise<void> {
  const { store, checkpointKey, logger, keepOf } = options;
  // Adding the workers' files to the folder's records: manifest first, checkpoint second.
  await store.putText(MANIFEST_FILE, `${JSON.stringify(manifest, null, 2)}\n`);
  await store.putText(checkpointKey, checkpointText(checkpoint));
  if (complete) {
    for (const name of agreement.streams) {
      const state = checkpoint.streams[name];
      if (state !== undefined) {
        const run = { stream: name, state, files: manifest.files, keep: keepOf(name) };
        await sealWindow({ store, baseUrl: checkpoint.baseUrl, logger }, run);
      }
    }
    await store.putText(SUCCESS_FILE, '');
  }
  // The agreement goes first: without it, leftover worker files are never read again.
  await store.remove([agreement.place.agreementKey]);
  await removeOwnedTree(store, `${agreement.place.dir}/${agreement.id}`, logger);
  logger.info(
    { workers: agreement.count, complete, rows: Object.values(manifest.streams).reduce((sum, s) => sum + s.rows, 0) },
    complete ? `split job finalized: ${agreement.count} workers merged, _SUCCESS written` : 'merged the unfinished workers into the output folder\'s checkpoint',
  );
}

/** A split job as its workers are now, merged (read only: for `status`). */
export interface WorkersProgress {
  agreement: WorkersAgreement;
  checkpoint: Checkpoint;
  manifest: Manifest;
  workers: { index: number; started: boolean; complete: boolean }[];
}

export async function readWorkersProgress(
  store: OutputStore,
  logger: Logger,
  now: string,
): Promise<WorkersProgress | undefined> {
  const agreement = await readAgreement(store, await workersPlace(store));
  if (agreement === undefined) return undefined;
  const root = await readManifest(store, agreement.checkpoint.baseUrl, logger);
  const workers = [];
  for (let index = 0; index < agreement.count; index++) {
    workers.push(await readWorker({ store, agreement, root, now, logger }, index));
  }
  const checkpoint = mergeCheckpoints(agreement, workers.map((s) => s.checkpoint), now);
  const states = workers.map((worker, index) => ({
    index,
    started: worker.started,
    complete: workerComplete(worker.checkpoint),
  }));
  const manifest = mergeManifests(agreement, root, workers, checkpoint, states.every((state) => state.complete), now);
  return { agreement, checkpoint, manifest, workers: states };
}

function mergeCheckpoints(agreement: WorkersAgreement, workers: readonly Checkpoint[], now: string): Checkpoint {
  const streams = structuredClone(agreement.checkpoint.streams);
  for (const worker of workers) {
    for (const [name, state] of Object.entries(worker.streams)) {
      const merged = streams[name];
      if (merged !== undefined) Object.assign(merged.parts, state.parts);
    }
  }
  return { ...agreement.checkpoint, updatedAt: now, streams };
}

function mergeManifests(
  agreement: WorkersAgreement,
  root: Manifest,
  workers: readonly WorkerRecords[],
  checkpoint: Checkpoint,
  complete: boolean,
  now: string,
): Manifest {
  const shared = new Set(pairsOf(agreement).map((pair) => pairKey(pair.stream, pair.m)));
  const files = [
    ...root.files.filter((file) => !shared.has(pairKey(file.stream, file.m))),
    ...workers.flatMap((worker) => worker.manifest.files),
  ];
  const sum = (key: 'requests' | 'retries' | 'throttled') => workers.reduce((total, s) => total + (s.manifest[key] ?? 0), 0);
  const merged: Manifest = {
    ...root,
    state: complete ? 'complete' : 'interrupted',
    startedAt: agreement.createdAt,
    finishedAt: now,
    durationMs: Date.parse(now) - Date.parse(agreement.createdAt),
    requests: sum('requests'),
    retries: sum('retries'),
    throttled: sum('throttled'),
    schema: Object.assign({}, root.schema, ...workers.map((s) => s.manifest.schema)) as Manifest['schema'],
    files,
  };
  return reconcile(merged, checkpoint);
}
