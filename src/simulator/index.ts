export type { ClientCredential, Principal, UserCredential } from './credentials.js';
export { SESSION_COOKIE } from './credentials.js';
export { ASSET_ID_BASE, ASSET_ID_STRIDE } from './dataset/assets.js';
export type {
  AssetFilter,
  Dataset,
  EventFilter,
  DatasetOptions,
  FilterValue,
  GeneratedAsset,
  GeneratedEvent,
  GeneratedFile,
  GeneratedRelationship,
  GeneratedSequence,
  GeneratedTimeseries,
  ListFilter,
  Ref,
  ResourceName,
} from './dataset/dataset.js';
export { createDataset } from './dataset/dataset.js';
export type {
  Datapoint,
  DatapointChange,
  DatapointSet,
  DeletedRange,
  PointStatus,
  PointValue,
  Quality,
  SeriesPoint,
  SeriesPoints,
} from './datapoints/index.js';
export { EVENT_ID_BASE, EVENT_ID_STRIDE } from './dataset/events.js';
export { FILE_ID_BASE, FILE_ID_STRIDE } from './dataset/files.js';
export { DATA_SET_ID_BASE } from './dataset/links.js';
export { SEQUENCE_ID_BASE, SEQUENCE_ID_STRIDE } from './dataset/sequences.js';
export { TIMESERIES_ID_BASE, TIMESERIES_ID_STRIDE } from './dataset/timeseries.js';
export type { FaultKind } from './faults.js';
export type { FaultOptions, FaultOptionsInput, SimulatorConfig } from './options.js';
export { parseFaultSpec } from './options.js';
export {
  CORE_SPACE,
  EDGE_TYPE,
  type Instance,
  type InstanceCounts,
  type InstanceKind,
  type InstanceRef,
  type InstanceStore,
  KINDS,
  SIM_SPACE,
  SITES,
  SYNC_RETENTION_MS,
  VIEWS,
  type ViewDefinition,
} from './models/index.js';
export { MAX_PARTITIONS, partitionRange } from './partition.js';
export { MAX_LIMIT } from './query.js';
export type { Simulator, SimulatorOptions } from './server.js';
export { startSimulator } from './server.js';
export type { ClientCount, RecordedRequest, SimulatorStats } from './stats.js';
