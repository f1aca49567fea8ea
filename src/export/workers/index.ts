/**
 * Sharing one job among K worker processes: the workers' agreement, each worker's files, and
 * merging them back into the output's own.
 */
export {
  newAgreement,
  OLDER_WORKERS_PLACE,
  pairsOf,
  pairsOfWorker,
  readAgreement,
  type WorkersAgreement,
  workerKeys,
  workerLockKey,
  WORKERS_PLACE,
  type WorkersPlace,
  workersPlace,
  writeAgreement,
} from './agreement.js';
export { holdWorkers, readWorkersProgress, type WorkersOptions } from './merge-workers.js';
export { readWorker } from './worker-files.js';
export { MAX_WORKERS, resolveWorker, type WorkerSpec } from './worker-spec.js';
