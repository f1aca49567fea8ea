import type { ListFilter, ResourceName } from './dataset/dataset.js';
import { isRecord, parseFilterObject, shown } from './filter-object.js';

/** A validated `POST /{resource}/aggregate` body: the count of the items its filter matches. */
export interface AggregateQuery {
  resource: ResourceName;
  aggregate: 'count';
  filter: ListFilter;
}

export type AggregateParse = { ok: true; query: AggregateQuery } | { ok: false; message: string };

const TOP_LEVEL = ['aggregate', 'filter'];

/**
 * Validates an aggregate body the way the platform validates bodies: strictly, naming the property
 * at fault. `aggregate` may be left out (count is the default); ranges are inclusive epoch ms and a
 * range with min > max is valid (it matches nothing).
 */
export function parseAggregateBody(resource: ResourceName, body: unknown): AggregateParse {
  if (!isRecord(body)) return fail(`The request body must be a JSON object, got ${shown(body)}.`);
  for (const key of Object.keys(body)) {
    if (!TOP_LEVEL.includes(key)) return fail(`Unrecognized property '${key}'. Allowed: ${TOP_LEVEL.join(', ')}.`);
  }
  if (body.aggregate !== undefined && body.aggregate !== 'count') {
    return fail(`Invalid property 'aggregate': the simulator serves "count" only, got ${shown(body.aggregate)}.`);
  }
  const filter = parseFilterObject(resource, body.filter, `/${resource}/aggregate`);
  if (!filter.ok) return fail(filter.message);
  return { ok: true, query: { resource, aggregate: 'count', filter: filter.filter } };
}

function fail(message: string): AggregateParse {
  return { ok: false, message };
}
