/**
 * Reading an output and a job without changing them: the dry run, status, verify, the data's freshness.
 */
export { dataEndOf, readDataEnds } from './data-ends.js';
export { dryRunLines } from './dry-run-lines.js';
export {
  inspectRun,
  type RunInspection,
  type StreamAction,
  type StreamInspection,
  type WorkerShare,
} from './inspect-run.js';
export { probeAccess } from './probe-access.js';
export { probeQueries } from './probe-queries.js';
export { type OutputStatus, type PartStatus, readStatus, type StreamStatus } from './read-status.js';
export { NotAnOutputError, verifyJob, verifyOutput, type VerifyReport } from './verify.js';
export type { TableReport } from '../check/index.js';
