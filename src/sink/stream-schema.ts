import type { Schema } from 'apache-arrow';
import type { Resource } from '../config/job-schema.js';
import { type InstanceColumn, pointColumns, resourceSpec, shapeFromParams, streamColumns } from '../resources/index.js';
import { columnsSchema } from './parquet/arrow-types.js';

/** What decides a stream's Parquet columns, as its checkpoint records it. */
export type SchemaSource =
  | { resource: Resource; metadataColumns?: readonly string[] | undefined } |
  { resource: 'datapoints'; params: readonly (readonly [string, string])[] } |
  { resource: 'instances'; instances: { columns: readonly InstanceColumn[] } };

/**
 * The Arrow schema of a stream's Parquet shards, the one its writers build their batches in: a
 * collection's columns with its metadata columns, a datapoints stream's columns for its shape
 * (raw or aggregates, as its parameters say), an instances stream's view columns. A Delta table's
 * schema is made from it.
 */
export function streamArrowSchema(source: SchemaSource): Schema {
  if (source.resource === 'datapoints' && 'params' in source) {
    return columnsSchema(pointColumns(shapeFromParams(source.params)));
  }
  if (source.resource === 'instances' && 'instances' in source) return columnsSchema(source.instances.columns);
  const metadataColumns = 'metadataColumns' in source ? (source.metadataColumns ?? []) : [];
  return columnsSchema(streamColumns(resourceSpec(source.resource).columns, metadataColumns));
}
