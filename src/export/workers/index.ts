/**
 * Sharing one job among K worker processes: the workers' agreement, each worker's files, and
 * merging them back into the output's own.
 */
export { holdWorkers, readWorkersProgress, type WorkersOptions } from './merge-workers.js';
export {
  newSharedRun,
  pairsOf,
  pairsOfWorker,
  readSharedRun,
  readWorker,
  resolveWorker,
  SHARED_RUN_KEY,
  type SharedRun,
  workerKeys,
  workerLockKey,
  workerName,
  WORKERS_DIR,
  type WorkerSpec,
  writeSharedRun,
} from './workers.js';
