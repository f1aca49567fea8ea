/**
 * The stream kinds: the six collections, datapoints, a datapoint subscription's changes and
 * data-model instances, each behind the one StreamKind interface (partition/stream-kind.ts) that
 * the engine calls.
 */
export { planStream, streamKind } from './stream-kinds.js';
export { aggregateFilter, chainRequest } from './collections/index.js';
export { countInstances, INSTANCES_AGGREGATE_PATH, readViewColumns, SYNC_SET } from './instances/index.js';
export { POINTS_PATH } from './datapoints/index.js';
export { probeQuery } from './probe-query.js';
