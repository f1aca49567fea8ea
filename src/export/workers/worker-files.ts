import { CheckpointError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { OutputStore } from '../../output/index.js';
import { type Checkpoint, isComplete, type Manifest, pairKey, parseCheckpoint, readManifestFile, reconcile } from '../state/index.js';
import { pairsOfWorker, type WorkersAgreement, workerKeys } from './agreement.js';

/** A worker's starting checkpoint: the agreement's streams with only the worker's partitions. */
export function workerCheckpoint(agreement: WorkersAgreement, index: number): Checkpoint {
  const mine = pairsOfWorker(agreement, index);
  return {
    ...agreement.checkpoint,
    streams: Object.fromEntries(
      agreement.streams.flatMap((name) => {
        const state = agreement.checkpoint.streams[name];
        if (state === undefined) return [];
        const parts = Object.fromEntries(
          Object.entries(state.parts).filter(([m]) => mine.has(pairKey(name, Number(m)))),
        );
        return [[name, { ...state, parts }]];
      }),
    ),
  };
}

/** A worker's starting manifest: the folder's, with only the files of the worker's partitions. */
export function workerManifest(manifest: Manifest, agreement: WorkersAgreement, index: number, now: string): Manifest {
  const mine = pairsOfWorker(agreement, index);
  return {
    ...manifest,
    state: 'running',
    startedAt: now,
    requests: 0,
    retries: 0,
    throttled: 0,
    files: manifest.files.filter((file) => mine.has(pairKey(file.stream, file.m))),
  };
}

/** What reading a worker's files takes. */
export interface WorkerFilesContext {
  store: OutputStore;
  agreement: WorkersAgreement;
  /** The output folder's manifest: a worker that has none of its own starts from its share of it. */
  root: Manifest;
  now: string;
  logger: Logger;
}

/** A worker's checkpoint and manifest as it left them. */
export interface WorkerRecords {
  /** Whether the worker has written its checkpoint. */
  started: boolean;
  checkpoint: Checkpoint;
  /** Its manifest, reconciled with its checkpoint. */
  manifest: Manifest;
}

/**
 * Worker `index`'s files as it left them; a worker never started is its part of the agreement,
 * untouched. Files written for another run than the agreement's are refused.
 */
export async function readWorker(context: WorkerFilesContext, index: number): Promise<WorkerRecords> {
  const { store, agreement } = context;
  const keys = workerKeys(agreement, index);
  const checkpointText = await store.getText(keys.checkpoint);
  const checkpoint =
    checkpointText === undefined
      ? workerCheckpoint(agreement, index)
      : parseCheckpoint(checkpointText, store.where(keys.checkpoint), 'some');
  for (const [name, state] of Object.entries(checkpoint.streams)) {
    const planned = agreement.checkpoint.streams[name];
    const sameRun = planned?.run === state.run && JSON.stringify(planned.window) === JSON.stringify(state.window);
    if (!sameRun) {
      throw new CheckpointError(
        `${store.where(keys.checkpoint)}: stream '${name}' is not at the run of ${store.where(agreement.place.agreementKey)}; the worker's files were not written for this split job. Move the ${agreement.place.dir} folder away to start the split job over.`,
      );
    }
  }
  const manifest = await readWorkerManifest(context, keys.manifest, index);
  return { started: checkpointText !== undefined, checkpoint, manifest: reconcile(manifest, checkpoint) };
}

/**
 * A worker's manifest as it left it; absent (never started) or damaged, its share of the
 * folder's manifest. A damaged one loses the list of the worker's new files, which the resume then
 * reports as missing against its checkpoint, rather than going on without them.
 */
async function readWorkerManifest(context: WorkerFilesContext, key: string, index: number): Promise<Manifest> {
  const { store, root, agreement, now, logger } = context;
  const manifest = await readManifestFile(store, key, (damaged) => {
    logger.warn({ path: store.where(key) }, `a worker's manifest is damaged, so its file list starts from the folder's manifest: ${damaged.message}`);
  });
  if (manifest !== undefined) return { ...manifest, state: 'running', startedAt: now };
  return workerManifest(root, agreement, index, now);
}

/** Whether every partition of the worker's checkpoint is drained. */
export function workerComplete(checkpoint: Checkpoint): boolean {
  return Object.values(checkpoint.streams).every(isComplete);
}
