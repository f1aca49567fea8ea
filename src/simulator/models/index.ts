/**
 * The data-modeling service under `/models/`: the core model's views and containers, the instances
 * generated from the seed and their churn, and the handlers of views, instance lists, the sync feed
 * and aggregates.
 */
export { Churn } from './churn.js';
export { CORE_SPACE, SIM_SPACE, VIEWS, type ViewDefinition } from './core-model.js';
export { EDGE_TYPE } from './instance-generators.js';
export { type Instance, type InstanceCounts, type InstanceRef, InstanceStore } from './instance-store.js';
export { SITES } from './instance-values.js';
export { handleInstancesAggregate } from './instances-aggregate-handler.js';
export { handleInstancesList } from './instances-list-handler.js';
export type { ModelsContext } from './models-context.js';
export { type InstanceKind, KINDS } from './node-links.js';
export { SYNC_RETENTION_MS } from './sync-feed.js';
export { handleSync } from './sync-handler.js';
export { handleViewsByIds, handleViewsList } from './views-handler.js';
