/** The six collections: their stream kind, the list request of a partition's chain, and the count filter. */
export { aggregateFilter, chainRequest, listed } from './chain-request.js';
export { collections, listParams } from './collections-kind.js';
