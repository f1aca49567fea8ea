import { RESOURCES, resourceSpec } from '../resources/index.js';
import type { ResourceName } from './dataset/dataset.js';

/**
 * A route under `/api/v1/projects/{project}`: a resource's list (`GET /{resource}` or
 * `POST /{resource}/list`), its aggregate, or the points inside time series
 * (`POST /timeseries/data/list`).
 */
export interface ResourceRoute {
  project: string;
  resource: ResourceName;
  action: 'list' | 'aggregate' | 'datapoints';
  /** The one method the route answers. */
  method: 'GET' | 'POST';
}

/** Every collection of the registry, listed and counted under the project. */
const RESOURCE_ROUTE = new RegExp(`^/api/v1/projects/([^/]+)/(${RESOURCES.join('|')})(/aggregate|/list)?$`);
const DATAPOINTS_ROUTE = /^\/api\/v1\/projects\/([^/]+)\/timeseries\/data\/list$/;

/** A route of the data-modeling service under `/api/v1/projects/{project}/models/`. */
export interface ModelsRoute {
  project: string;
  action: (typeof MODELS_ACTIONS)[number];
  method: 'GET' | 'POST';
}

const MODELS_ACTIONS = ['views', 'views/byids', 'instances/list', 'instances/sync', 'instances/aggregate'] as const;

// The official SDK lists views at `models/views/`, with a trailing slash: the platform takes both.
const MODELS_ROUTE = new RegExp(`^/api/v1/projects/([^/]+)/models/(${MODELS_ACTIONS.join('|')})/?$`);

export function matchModelsRoute(path: string): ModelsRoute | undefined {
  const match = MODELS_ROUTE.exec(path);
  const action = MODELS_ACTIONS.find((name) => name === match?.[2]);
  if (match === null || action === undefined) return undefined;
  return { project: match[1] ?? '', action, method: action === 'views' ? 'GET' : 'POST' };
}

export function matchResourceRoute(path: string): ResourceRoute | undefined {
  const datapoints = DATAPOINTS_ROUTE.exec(path);
  if (datapoints !== null) return { project: datapoints[1] ?? '', resource: 'timeseries', action: 'datapoints', method: 'POST' };
  const match = RESOURCE_ROUTE.exec(path);
  const resource = RESOURCES.find((name) => name === match?.[2]);
  if (match === null || resource === undefined) return undefined;
  const suffix = match[3];
  // The platform has no count for some collections (relationships): that route does not exist.
  if (suffix === '/aggregate' && !resourceSpec(resource).countable) return undefined;
  return {
    project: match[1] ?? '',
    resource,
    action: suffix === '/aggregate' ? 'aggregate' : 'list',
    method: suffix === undefined ? 'GET' : 'POST',
  };
}

/**
 * `METHOD /route` for stats: resource and models routes without their project prefix, e.g.
 * `POST /events/aggregate`, `POST /models/instances/sync`.
 */
export function routeName(method: string | undefined, path: string): string {
  const route = path
    .replace(RESOURCE_ROUTE, '/$2$3')
    .replace(DATAPOINTS_ROUTE, '/timeseries/data/list')
    .replace(MODELS_ROUTE, '/models/$2');
  return `${method} ${route}`;
}
