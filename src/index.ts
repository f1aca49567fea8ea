/**
 * bulk-extract as a library: the pieces the CLI is built from (docs/library.md).
 *
 * ```ts
 * import { loadConfig, runJob, verifyJob } from 'bulk-extract';
 *
 * const config = loadConfig('job.yaml');
 * const result = await runJob({ config });
 * const report = await verifyJob(config);
 * ```
 *
 * Every function that logs takes an optional pino logger; without one it logs nothing.
 */
export { BadItemError, BulkExtractError, CheckpointError, ConfigError, UsageError } from './errors.js';
export { type ConfigOverrides, type JobConfig, loadConfig } from './config/load-config.js';
export { Redactor } from './util/redact.js';
export { Secret } from './util/secret.js';
export {
  destinationOf,
  finalizeJob,
  type FinalizeResult,
  type IdleStream,
  inspectRun,
  latestRunRecord,
  LockedError,
  type Manifest,
  type ManifestFile,
  NotAnOutputError,
  openOutput,
  type Output,
  type OutputStatus,
  outputAt,
  readRunRecords,
  readStatus,
  type RunHandle,
  type RunInspection,
  type RunOptions,
  type RunRecord,
  type RunResult,
  type RunState,
  runJob,
  type StoredRunRecord,
  type StreamProgress,
  type StreamStatus,
  verifyJob,
  verifyOutput,
  type VerifyReport,
  type WorkerSpec,
} from './export/index.js';
export { createPlatformClient } from './connect/index.js';
export { type ChainPage, type ChainRequest, drainCursorChain } from './http/cursor-chain.js';
export {
  AbortedError,
  AuthError,
  BadResponseError,
  CursorLoopError,
  HttpStatusError,
  InvalidJsonError,
  NetworkError,
  RequestError,
  ResponseTooLargeError,
  TimeoutError,
  TlsError,
} from './http/errors.js';
export { type JsonResponse, type LoginStatus, PlatformClient } from './http/platform-client.js';
export type { Simulator, SimulatorOptions } from './simulator/index.js';
export { startSimulator } from './simulator/index.js';
