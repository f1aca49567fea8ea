/**
 * The plan of a job: its streams, their partitions (one cursor chain each), the requests a chain
 * sends, and the count of what a run will read.
 */
export { aggregateFilter, chainRequest, type ListRequest } from './chain-request.js';
export { countStreams, type StreamCounts } from './count-streams.js';
export { instancesCheck, instancesRequest, instancesSyncRequest, readViewColumns, SYNC_SET } from './instances-request.js';
export { chainParams, type PartitionPlan, planPartitions } from './partitions.js';
export { planStreams, streamName } from './streams.js';
