/**
 * The plan of a job: its streams, their partitions (one cursor chain each), and the count of what
 * a run will read, each asked of the stream's kind.
 */
export { aggregateFilter, readViewColumns } from '../kinds/index.js';
export { countStreams, type StreamCounts } from './count-streams.js';
export { chainParams, firstRequest, planPartitions } from './partitions.js';
export { planStreams, streamName } from './streams.js';
