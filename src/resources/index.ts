import { assets } from './assets.js';
import { events } from './events.js';
import { files } from './files.js';
import { relationships } from './relationships.js';
import type { ResourceSpec } from './resource.js';
import { sequences } from './sequences.js';
import { timeseries } from './timeseries.js';

export {
  COLUMN_KINDS,
  type ColumnKind,
  type ColumnType,
  INSTANCE_COLUMN_KINDS,
  type InstanceColumnKind,
} from './column-kinds.js';
export {
  column,
  type ColumnSpec,
  EXTRA_COLUMN,
  FOLDER_KEYS,
  type FilterKind,
  type FilterSpec,
  LABEL_MATCHES,
  type LabelFilterValue,
  metadataColumnName,
  PART_FOLDER_KEY,
  type ResourceSpec,
  RUN_FOLDER_KEY,
  SEQUENCE_COLUMN_FIELDS,
  streamColumns,
} from './resource.js';
export { RELATIONSHIP_TYPES } from './relationships.js';
export { METADATA_MAX_KEY_BYTES, METADATA_MAX_PAIRS, type MetadataLimits, metadataLimitProblems } from './metadata-limits.js';
export { dmsDateDays, dmsTimestampMs } from './dms-time.js';
export {
  type ColumnValue,
  columnValue,
  instanceRow,
  type NodeRef,
} from './instance-values.js';
export {
  type ConnectionDefinition,
  fieldColumns,
  INSTANCE_TYPES,
  type InstanceColumn,
  type InstanceColumns,
  instanceColumns,
  type InstanceType,
  type ViewRef,
  PROPERTY_KINDS,
  type ViewDefinition,
  type ViewPropertyDefinition,
  viewSourceKey,
} from './instances.js';

/** Every collection bulk-extract exports; a new one is a file beside these and a line here. */
export const RESOURCE_SPECS = [assets, events, timeseries, files, sequences, relationships] as const;

export const RESOURCES = [
  'assets',
  'events',
  'timeseries',
  'files',
  'sequences',
  'relationships',
] as const satisfies readonly (typeof RESOURCE_SPECS)[number]['name'][];
export type Resource = (typeof RESOURCES)[number];

const byName = new Map<string, ResourceSpec>(RESOURCE_SPECS.map((spec) => [spec.name, spec]));

export function resourceSpec(name: Resource): ResourceSpec<Resource> {
  const spec = byName.get(name);
  if (spec === undefined) throw new Error(`no resource spec for ${name}`);
  return spec as ResourceSpec<Resource>;
}

/** The filter keys of a collection, in the order they are sent. */
export function filterKeys(name: Resource): string[] {
  return resourceSpec(name).filters.map((filter) => filter.key);
}
export {
  type Aggregate,
  AGGREGATES,
  bucketReachMs,
  INSTANCE_COLUMNS,
  isCountAggregate,
  MAX_POINT_TIME,
  MIN_POINT_TIME,
  PLATFORM_AGGREGATES,
  pointColumns,
  pointKey,
  type PointsShape,
  type PointTime,
  resolvePointTime,
  shapeFromParams,
} from './datapoints.js';
export { changeColumns, type ChangeRow, changeRows, type ChangeUpdate } from './subscription-changes.js';
