/**
 * output/: where an export's output lives. The `OutputStore` interface and its two homes, a local
 * folder and an S3 bucket prefix (chosen once, by `openStore`), each with its lock; what the
 * export reads back through it (verify, repair), a Delta table's log among it. Other folders import
 * output/ through this file.
 */
export type { DeltaAdd, DeltaFileStats, DeltaMetaData, DeltaProtocol, DeltaTxn } from './delta/actions.js';
export { type CheckpointState, type LastCheckpointJson, writeCheckpoint } from './delta/checkpoint-writer.js';
export {
  addAction,
  commitInfoAction,
  commitText,
  deltaPath,
  ENGINE_INFO,
  metaDataAction,
  OWN_INFO_KEY,
  protocolAction,
  removeAction,
  txnAction,
  WRITE_PROTOCOL,
  type WriteAction,
  writeCommit,
} from './delta/commit.js';
export { type DeltaSnapshot, hasDeltaLog, MAX_COMMIT_BYTES, readDeltaLog, type ReadDeltaLogOptions } from './delta/read-log.js';
export { checkpointNames, commitName, LOG_FOLDER } from './delta/log-names.js';
export type { DeltaCommit, DeltaFile } from './delta/table-state.js';
export { createLocalStore } from './local-store.js';
export { LockedError, type LockOptions, type LockOwner, type LockState } from './lock.js';
export { destinationOf, isObjectStorageUrl, openStore, type StoreOptions } from './open-store.js';
export { isAzureUrl } from '../util/output-url.js';
export type { S3Credentials } from './s3-bucket.js';
export type { LocalCopy, OutputStore } from './store.js';
