import type { ResourceName } from './dataset/dataset.js';
import { isRecord, parseFilterObject, shown } from './filter-object.js';
import { resourceSpec } from '../resources/index.js';
import { MAX_LIMIT, PARTITION_EXPECTED, type ParseResult, parsePartition } from './query.js';

const TOP_LEVEL = ['filter', 'limit', 'cursor', 'partition', 'sort'];
/** Properties the platform accepts in a list body that the simulator does not serve. */
const NOT_SERVED = ['advancedFilter', 'aggregatedProperties', 'fetchResources'];

/**
 * Validates the body of `POST /{resource}/list` the way the platform validates bodies: strictly,
 * naming the property at fault. Paging is as for `GET /{resource}`: `limit` (1..1000, default 100; 25 for sequences),
 * `partition` ('m/n') and `cursor`, which is bound to every other property of the body. Items
 * listed by POST always carry their metadata.
 */
export function parseListBody(resource: ResourceName, body: unknown): ParseResult {
  if (!isRecord(body)) return fail(`The request body must be a JSON object, got ${shown(body)}.`);
  for (const key of Object.keys(body)) {
    // The platform's SDK sends `sort: []` (no order) when it lists events: that is served.
    const unsorted = key === 'sort' && Array.isArray(body.sort) && body.sort.length === 0;
    if ((key === 'sort' && !unsorted) || NOT_SERVED.includes(key)) return fail(`Property '${key}' is accepted by the platform but not served by the simulator.`);
    if (!TOP_LEVEL.includes(key)) return fail(`Unrecognized property '${key}'. Allowed: ${TOP_LEVEL.join(', ')}.`);
  }
  const { limit = resourceSpec(resource).defaultLimit, cursor, partition: partitionText } = body;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    return fail(`Invalid property 'limit': expected an integer in 1..${MAX_LIMIT}, got ${shown(limit)}.`);
  }
  if (cursor !== undefined && (typeof cursor !== 'string' || cursor === '')) {
    return fail(`Invalid property 'cursor': expected a non-empty string, got ${shown(cursor)}.`);
  }
  const partition = partitionText === undefined ? undefined : typeof partitionText === 'string' ? parsePartition(partitionText) : null;
  if (partition === null) return fail(`Invalid property 'partition': ${PARTITION_EXPECTED}, got ${shown(partitionText)}.`);
  const filter = parseFilterObject(resource, body.filter, `/${resource}/list`);
  if (!filter.ok) return fail(filter.message);
  // Bound like a GET's parameters, and apart from them: a cursor of one never continues the other.
  const binding = JSON.stringify(['POST', resource, limit, partitionText ?? null, Object.entries(filter.filter).sort()]);
  return {
    ok: true,
    query: { resource, limit, cursor, partition, includeMetadata: true, filter: filter.filter, binding },
  };
}

function fail(message: string): ParseResult {
  return { ok: false, message };
}
