/**
 * What an output holds and where: its layout on disk, the checkpoint, the manifest, the one state-file
 * reader, sealed runs, and removing only what bulk-extract wrote.
 */
export {
  type CollectionStreamPlan,
  type DatapointsStreamPlan,
  type InstancesPlan,
  type InstancesStreamPlan,
  type NodeId,
  pointsParams,
  type PointsPlan,
  pointsShape,
  type QueryOptions,
  type SeriesRef,
  seriesRefKey,
  type StreamPlan,
  type SubscriptionPlan,
  type SubscriptionStreamPlan,
} from './stream-plan.js';
export {
  type Checkpoint,
  checkpointFromValue,
  checkpointText,
  checkpointValue,
  commitPart,
  findDrift,
  sameBaseUrl,
  isComplete,
  newCheckpoint,
  newStreamState,
  nextWindow,
  pairKey,
  parseCheckpoint,
  partOf,
  type PartState,
  type PartUpdate,
  type PointsPartState,
  restartPart,
  runStartMs,
  type SeriesProgress,
  streamOf,
  type StreamState,
} from './checkpoint.js';
export {
  collectionOf,
  pointWindowOf,
  seriesDoneOf,
  type PointWindow,
  type RowKey,
  type SentBounds,
  sentBounds,
  sentWindow,
  streamRecord,
  type StreamRecord,
  syncField,
  syncPhase,
} from './stream-records.js';
export { removeOwnedTree } from './clean-up.js';
export {
  CHECKPOINT_FILE,
  isOwnedKey,
  LATEST_FILE,
  LOCK_FILE,
  MANIFEST_FILE,
  partDir,
  RUN_PREFIX,
  windowDir,
  RUNS_DIR,
  shardSeq,
  SUCCESS_FILE,
} from './layout.js';
export {
  type Manifest,
  type ManifestFile,
  manifestSchema,
  readManifestFile,
  newManifest,
  reconcile,
  type WindowManifest,
  windowManifestSchema,
  type RunState,
  summarize,
} from './manifest.js';
export { destinationOf, openOutput, type Output, outputAt } from './output-target.js';
export { type WindowToSeal, sealedWindows, sealWindow } from './seal-window.js';
export { assertTablesWritable } from './tables-writable.js';
export { type LiveProgress, liveProgressSchema, progressKeyOf, readLiveProgress } from './live-progress.js';
export { parseStateFile } from './state-file.js';
