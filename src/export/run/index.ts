/**
 * A run: starting it (whole or as a worker), draining partitions into shards, committing them,
 * finishing and finalizing, and the record of runs.
 */
export { type AbsorbOutcome, finalizeJob, type FinalizeResult } from './finalize.js';
export { type IdleStream, prepareOutput } from './prepare-output.js';
export { idleMessage, idleReason, runJob, type RunOptions, type RunResult } from './run-job.js';
export type { RunHandle, StreamProgress } from './run-progress.js';
export {
  latestRunRecord,
  parseRunRecordKey,
  readRunRecords,
  type ReadRunRecordsOptions,
  recordRun,
  type RecordRunOptions,
  type RunRecord,
  runRecordKey,
  runRecords,
  runRecordSchema,
  type StoredRunRecord,
  writeRunRecord,
  type WriteRunRecordOptions,
} from './run-records.js';
