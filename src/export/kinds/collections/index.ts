/** The six collections: the list request of a partition's cursor chain, and the count filter. */
export { aggregateFilter, chainRequest, listed, type ListRequest } from './chain-request.js';
