import type { Resource } from '../../config/job-schema.js';
import type { EncodedColumn } from '../parquet/encode.js';
import { columnsOf } from '../parquet/schemas.js';

/**
 * How a collection's columns are encoded: integers and times delta-encoded (smaller and faster
 * than dictionaries on ids and timestamps); externalId is unique within a collection, so a
 * dictionary of it never pays (bench/RESULTS.md, issue 27).
 */
export function collectionEncodings(resource: Resource): EncodedColumn[] {
  return columnsOf(resource).map(({ name, kind }) => ({
    name,
    encoding: kind === 'int64' || kind === 'timestamp' ? 'delta' : name === 'externalId' ? 'plain' : undefined,
  }));
}
