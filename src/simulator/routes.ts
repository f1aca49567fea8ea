import { RESOURCES, type Resource, resourceSpec } from '../resources/index.js';
import { handleAggregate } from './aggregate-handler.js';
import { type AuthContext, handleLogin, handleLoginStatus, handleLogout, handleToken } from './auth-handlers.js';
import { INSTANCES_READ, readCapability, VIEWS_READ } from './capabilities.js';
import { handleDatapoints, type PointsContext } from './datapoints/index.js';
import { handleList, type ListContext } from './list-handler.js';
import {
  handleInstancesAggregate,
  handleInstancesList,
  handleSync,
  handleViewsByIds,
  handleViewsList,
  type ModelsContext,
} from './models/index.js';
import type { Exchange } from './respond.js';
import type { RequestNotes } from './stats.js';

/** The identity provider's token endpoint, at the origin's root. */
export const TOKEN_PATH = '/oauth2/token';

/** What the routes' handlers read, made once per simulator (request-handler.ts). */
export interface RouteContexts {
  auth: AuthContext;
  list: ListContext;
  points: PointsContext;
  models: ModelsContext;
  /** Applies the changes `--churn` has made to the collections by now: a collection's route calls it first. */
  catchUpCollections(): void;
}

type Serve = (ctx: RouteContexts, ex: Exchange, notes: RequestNotes) => Promise<void>;

/** One route: the one method it answers, its path, and what answers it. */
export interface Route {
  readonly method: 'GET' | 'POST';
  /**
   * At the origin, the whole path; in the platform's API, what follows `/api/v1/projects/{project}`.
   * Either is the route's name in the stats.
   */
  readonly path: string;
  /**
   * A route of the platform's API: the capability its caller needs (after the credential and the
   * project), and whether its path may end in one more `/`. Absent at the origin: anyone may call.
   */
  readonly api?: { capability: string; slash: boolean };
  /** What answers; undefined for a route the platform does not have: named in the stats, not found. */
  readonly serve: Serve | undefined;
}

/** A route of the collections' data: the collections' churn due by now is applied before it answers. */
function collection(serve: Serve): Serve {
  return (ctx, ex, notes) => {
    ctx.catchUpCollections();
    return serve(ctx, ex, notes);
  };
}

/** A collection's list by GET (parameters in the query) and by POST (in a body), and its count. */
function collectionRoutes(resource: Resource): Route[] {
  const api = { capability: readCapability(resource), slash: false };
  return [
    {
      method: 'GET',
      path: `/${resource}`,
      api,
      serve: collection((ctx, ex, notes) => handleList(ctx.list, ex, { resource, method: 'GET' }, notes)),
    },
    {
      method: 'POST',
      path: `/${resource}/list`,
      api,
      serve: collection((ctx, ex, notes) => handleList(ctx.list, ex, { resource, method: 'POST' }, notes)),
    },
    {
      method: 'POST',
      path: `/${resource}/aggregate`,
      api,
      // The platform has no count for some collections (relationships): that route does not exist.
      serve: resourceSpec(resource).countable
        ? collection((ctx, ex, notes) => handleAggregate(ctx.list.dataset, ex, resource, notes))
        : undefined,
    },
  ];
}

// The official SDK lists views at `models/views/`, with a trailing slash: the platform takes both.
const VIEWS_API = { capability: VIEWS_READ, slash: true };
const INSTANCES_API = { capability: INSTANCES_READ, slash: true };

/**
 * Every route of the simulator: the identity provider and login at the origin, then the platform's
 * API under `/api/v1/projects/{project}`: the collections, the points inside time series, and the
 * data-modeling service. One path, one method.
 */
export const ROUTES: readonly Route[] = [
  { method: 'GET', path: '/login/status', serve: (ctx, ex) => handleLoginStatus(ctx.auth, ex) },
  { method: 'GET', path: '/logout', serve: (ctx, ex) => handleLogout(ctx.auth, ex) },
  { method: 'POST', path: '/login', serve: (ctx, ex) => handleLogin(ctx.auth, ex) },
  { method: 'POST', path: TOKEN_PATH, serve: (ctx, ex) => handleToken(ctx.auth, ex) },
  ...RESOURCES.flatMap(collectionRoutes),
  {
    method: 'POST',
    path: '/timeseries/data/list',
    api: { capability: readCapability('timeseries'), slash: false },
    serve: collection((ctx, ex, notes) => handleDatapoints(ctx.points, ex, notes)),
  },
  { method: 'GET', path: '/models/views', api: VIEWS_API, serve: (ctx, ex) => handleViewsList(ctx.models, ex) },
  {
    method: 'POST',
    path: '/models/views/byids',
    api: VIEWS_API,
    serve: (ctx, ex, notes) => handleViewsByIds(ctx.models, ex, notes),
  },
  {
    method: 'POST',
    path: '/models/instances/list',
    api: INSTANCES_API,
    serve: (ctx, ex, notes) => handleInstancesList(ctx.models, ex, notes),
  },
  {
    method: 'POST',
    path: '/models/instances/sync',
    api: INSTANCES_API,
    serve: (ctx, ex, notes) => handleSync(ctx.models, ex, notes),
  },
  {
    method: 'POST',
    path: '/models/instances/aggregate',
    api: INSTANCES_API,
    serve: (ctx, ex, notes) => handleInstancesAggregate(ctx.models, ex, notes),
  },
];

const AT_ORIGIN = new Map(ROUTES.filter((route) => route.api === undefined).map((route) => [route.path, route]));
const IN_API = new Map(ROUTES.filter((route) => route.api !== undefined).map((route) => [route.path, route]));

/** `/api/v1/projects/{project}` and the path after it. */
const API_PATH = /^\/api\/v1\/projects\/([^/]+)(\/.*)$/;

/** A route found for a path; `project` is the project the path names, for the platform's API. */
export interface RouteMatch {
  route: Route;
  project: string | undefined;
}

/** The route of a path, whatever the method; undefined when there is none. */
export function findRoute(path: string): RouteMatch | undefined {
  const api = API_PATH.exec(path);
  if (api === null) {
    const route = AT_ORIGIN.get(path);
    return route === undefined ? undefined : { route, project: undefined };
  }
  const [, project = '', rest = ''] = api;
  let route = IN_API.get(rest);
  if (route === undefined && rest.endsWith('/')) {
    const slashed = IN_API.get(rest.slice(0, -1));
    if (slashed?.api?.slash === true) route = slashed;
  }
  return route === undefined ? undefined : { route, project };
}

/**
 * `METHOD /route` for stats: a route by its path, the platform's without their project prefix
 * (`POST /events/aggregate`, `POST /models/instances/sync`); any other path as it was asked.
 */
export function routeName(method: string | undefined, path: string, found = findRoute(path)): string {
  return `${method} ${found?.route.path ?? path}`;
}
