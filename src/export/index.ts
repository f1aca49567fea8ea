/**
 * The export engine's front door: what the CLI and library users call. Nothing outside
 * src/export/ imports its inner files, and its rooms (state/, partition/, kinds/, plan/, check/,
 * workers/, run/, inspect/) import each other only through their own index.ts.
 *
 * - runJob: a run (resume, --fresh, --repair, --stream, a worker of a split job);
 * - inspectRun: what a run would do and refuse, changing nothing (--dry-run);
 * - readStatus: the progress an output records (status);
 * - readDataEnds: how fresh the data of its scheduled streams is (metrics);
 * - readRunRecords / latestRunRecord: the history of runs in the output's `_runs/` (status, metrics);
 *   recordRun: a run's record written there (run);
 * - verifyOutput / verifyJob: every file read back against its manifest (verify);
 * - finalizeJob: the end of a split job whose workers are complete (finalize).
 */
export { LockedError } from '../output/index.js';
export {
  dataEndOf,
  dryRunLines,
  inspectRun,
  NotAnOutputError,
  type OutputStatus,
  type PartStatus,
  probeAccess,
  probeQueries,
  readDataEnds,
  readStatus,
  type RunInspection,
  type StreamAction,
  type StreamInspection,
  type StreamStatus,
  verifyJob,
  verifyOutput,
  type TableReport,
  type VerifyReport,
  type WorkerShare,
} from './inspect/index.js';
export { aggregateFilter, planStreams, readViewColumns, streamName } from './plan/index.js';
export {
  type AbsorbOutcome,
  finalizeJob,
  type FinalizeResult,
  idleMessage,
  idleReason,
  type IdleStream,
  latestRunRecord,
  parseRunRecordKey,
  readRunRecords,
  type ReadRunRecordsOptions,
  recordRun,
  type RecordRunOptions,
  type RunHandle,
  runJob,
  type RunOptions,
  type RunRecord,
  runRecordKey,
  runRecords,
  runRecordSchema,
  type RunResult,
  type StoredRunRecord,
  type StreamProgress,
  writeRunRecord,
  type WriteRunRecordOptions,
} from './run/index.js';
export {
  destinationOf,
  type Manifest,
  type ManifestFile,
  openOutput,
  type Output,
  outputAt,
  type RunState,
  streamRecord,
} from './state/index.js';
export { resolveWorker, type WorkerSpec } from './workers/index.js';
