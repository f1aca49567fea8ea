import type { ListedResource, Resource } from '../../../config/job-schema.js';
import { type FilterSpec, resourceSpec } from '../../../resources/index.js';
import type { ListRequest } from '../../partition/index.js';

/**
 * The `filter` object of `POST /{resource}/list` and `/aggregate` for a chain's parameters: each
 * filter as its field, in JSON of its own type (a parameter is text: see FilterSpec); the ends of a
 * range as the `min` and `max` of its field's object, `{isNull}` as that object itself; ids the
 * body takes as references as `{id}`.
 */
export function aggregateFilter(
  resource: ListedResource,
  params: readonly (readonly [string, string])[],
): Record<string, unknown> {
  const specs = new Map(resourceSpec(listed(resource)).filters.map((filter) => [filter.key, filter]));
  const filter: Record<string, unknown> = {};
  for (const [key, value] of params) {
    const spec = specs.get(key);
    if (spec === undefined) continue; // limit, partition
    switch (spec.kind) {
      case 'time':
      case 'number':
        filter[spec.field] = { ...(filter[spec.field] as object | undefined), [spec.bound]: Number(value) };
        break;
      case 'string':
        filter[spec.field] = value;
        break;
      case 'boolean':
        filter[spec.field] = value === 'true';
        break;
      case 'ids': {
        const ids = JSON.parse(value) as number[];
        filter[spec.field] = spec.refsInBody === true ? ids.map((id) => ({ id })) : ids;
        break;
      }
      case 'isNull':
        filter[spec.field] = { isNull: value === 'true' };
        break;
      case 'strings':
      case 'refs':
      case 'map':
      case 'labels':
        filter[spec.field] = JSON.parse(value) as unknown;
    }
  }
  return filter;
}

/** The collection a stream's chains list: its own, or for datapoints the time series they are read from. */
export function listed(resource: ListedResource): Resource {
  return resource === 'datapoints' ? 'timeseries' : resource;
}

/** Whether GET cannot carry this parameter: a body-only filter, or a list longer than GET takes. */
function needsBody(spec: FilterSpec | undefined, value: string): boolean {
  if (spec === undefined) return false; // limit, partition
  if (spec.via === 'body') return true;
  if ((spec.kind !== 'ids' && spec.kind !== 'strings') || spec.maxItemsOnGet === undefined) return false;
  return (JSON.parse(value) as unknown[]).length > spec.maxItemsOnGet;
}

/**
 * How a chain with these parameters is listed: `GET /{resource}` with them as its query, or, when
 * a filter only `POST /{resource}/list` takes is set (or a list longer than GET takes: events'
 * `assetIds` over 100), that with `limit`, `partition` and the filter object in its body. Either
 * way the chain repeats it with only the cursor added.
 */
export function chainRequest(
  stream: ListedResource,
  params: readonly (readonly [string, string])[],
): ListRequest {
  const resource = listed(stream);
  const specs = new Map(resourceSpec(resource).filters.map((filter) => [filter.key, filter]));
  const byPost = params.some(([key, value]) => needsBody(specs.get(key), value));
  if (!byPost) return { method: 'GET', path: `/${resource}`, params };
  const value = (key: string) => params.find(([name]) => name === key)?.[1];
  const limit = value('limit');
  const partition = value('partition');
  return {
    method: 'POST',
    path: `/${resource}/list`,
    body: {
      ...(limit === undefined ? {} : { limit: Number(limit) }),
      ...(partition === undefined ? {} : { partition }),
      filter: aggregateFilter(resource, params),
    },
  };
}
