/** bulk-extract as a library: the same pieces the CLI is built from. */
export { BadItemError, BulkExtractError, CheckpointError, ConfigError, UsageError } from './errors.js';
export { type ConfigOverrides, type JobConfig, loadConfig } from './config/load-config.js';
export { Secret } from './config/secret.js';
export { destinationOf } from './export/output-target.js';
export { type RunOptions, type RunResult, runJob } from './export/run-job.js';
export type { Manifest, ManifestFile } from './export/manifest.js';
export { type VerifyReport, verifyOutput } from './export/verify.js';
export { createPlatformClient } from './http/create-client.js';
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
  TimeoutError,
  TlsError,
} from './http/errors.js';
export { type JsonResponse, type LoginStatus, PlatformClient } from './http/platform-client.js';
export type { Simulator, SimulatorOptions } from './simulator/index.js';
export { startSimulator } from './simulator/index.js';
