import { RESOURCES, type Resource, resourceSpec } from '../../resources/index.js';
import type { StreamState } from './checkpoint-schema.js';
import type { StreamPlan } from './stream-plan.js';

/** The collection a stream reads, when it is one of RESOURCES (not datapoints or instances). */
function collectionOf(resource: string): Resource | undefined {
  return (RESOURCES as readonly string[]).includes(resource) ? (resource as Resource) : undefined;
}

/** The Parquet schema version a new stream records: its collection's (resources/), none for the others. */
export function schemaVersionState(resource: string): Pick<StreamState, 'schemaVersion'> {
  const collection = collectionOf(resource);
  return collection === undefined ? {} : { schemaVersion: resourceSpec(collection).schemaVersion };
}

/**
 * A stream writing Parquet whose collection's schema changed since its checkpoint was written
 * (a checkpoint without `schemaVersion` wrote version 1): a resume would give one stream shards of
 * two schemas, which readers of the whole stream (a glob) refuse or read wrongly.
 */
export function schemaVersionDrift(at: string, saved: StreamState, stream: StreamPlan): string[] {
  const collection = collectionOf(stream.resource);
  if (collection === undefined || saved.resource !== stream.resource || !stream.formats.includes('parquet')) return [];
  const before = saved.schemaVersion ?? 1;
  const now = resourceSpec(collection).schemaVersion;
  if (before === now) return [];
  return [
    `${at}: its Parquet shards so far have version ${before} of the ${collection} schema, and this version writes version ${now} (docs/collections.md lists the columns); run with --fresh to write the stream again in the new schema, or finish it with the version that began it`,
  ];
}
