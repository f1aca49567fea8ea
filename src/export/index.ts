/**
 * The export engine's front door: what the CLI and library users call. Nothing outside
 * src/export/ imports its inner files.
 *
 * - runJob: a run (resume, --fresh, --repair, --stream, a worker of a sharded run);
 * - inspectRun: what a run would do and refuse, changing nothing (--dry-run);
 * - readStatus: the progress an output records (status);
 * - readRunRecords / latestRunRecord: the history of runs in the output's `_runs/` (status, metrics);
 *   recordRun: a run's record written there (run);
 * - verifyOutput / verifyJob: every file read back against its manifest (verify);
 * - finalizeJob: the end of a sharded run whose workers are complete (finalize).
 */
export { idleMessage, type RunOptions, type RunResult, runJob } from './run-job.js';
export type { RunHandle, StreamProgress } from './run-progress.js';
export {
  inspectRun,
  type RunInspection,
  type StreamAction,
  type StreamInspection,
  type WorkerShare,
} from './inspect-run.js';
export { type OutputStatus, type PartStatus, readStatus, type StreamStatus } from './read-status.js';
export {
  latestRunRecord,
  parseRunRecordKey,
  type ReadRunRecordsOptions,
  readRunRecords,
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
export { NotAnOutputError, verifyJob, verifyOutput, type VerifyReport } from './verify.js';
export { type AbsorbOutcome, type FinalizeResult, finalizeJob } from './finalize.js';
export { destinationOf, openOutput, type Output, outputAt } from './output-target.js';
export { LockedError } from '../output/folder-lock.js';
export { resolveWorker, type WorkerSpec } from './workers.js';
export { planStreams, streamName } from './streams.js';
export type { Manifest, ManifestFile, RunState } from './manifest.js';
export type { IdleStream } from './prepare-output.js';
