/**
 * The plan of a job: its streams, their partitions (one cursor chain each), the requests a chain
 * sends, and the count of what a run will read.
 */
export { aggregateFilter, chainRequest, type ListRequest } from '../kinds/index.js';
export { countStreams, type StreamCounts } from './count-streams.js';
export { instancesCheck, instancesRequest, instancesSyncRequest, readViewColumns, SYNC_SET } from '../kinds/index.js';
export { chainParams, planPartitions } from './partitions.js';
export { planStreams, streamName } from './streams.js';
