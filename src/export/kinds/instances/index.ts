/** Data-model instances: a view's instances read by query (list) or followed by a sync feed. */
export { instances } from './instances-kind.js';
export {
  countInstances,
  INSTANCES_AGGREGATE_PATH,
  instancesCheck,
  instancesRequest,
  instancesSyncRequest,
  type InstancesSyncRequest,
  readViewColumns,
  SYNC_SET,
} from './instances-request.js';
