import { RESOURCES, type Resource, resourceSpec } from '../resources/index.js';
import { handleAggregate } from './aggregate-handler.js';
import { type AuthContext, handleLogin, handleLoginStatus, handleLogout, handleToken } from './auth-handlers.js';
import { INSTANCES_READ, readCapability, VIEWS_READ } from './capabilities.js';
import {
  handleCreateSubscription,
  handleDatapoints,
  handleLatest,
  handleListSubscriptions,
  handleSubscriptionData,
  handleSubscriptionsByIds,
  type PointsContext,
  type SubscriptionsContext,
} from './datapoints/index.js';
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
  subscriptions: SubscriptionsContext;
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
// Datapoint subscriptions are read with the time series' capability, and created with its WRITE.
const SUBSCRIPTIONS_READ = { capability: readCapability('timeseries'), slash: false };
const SUBSCRIPTIONS_WRITE = { capability: 'timeSeriesAcl:WRITE', slash: false };

/**
 * Every route of the simulator: the identity provider and login at the origin, then the platform's
 * API under `/api/v1/projects/{project}`: the collections, the points inside time series, and the
 * data-modeling service. A path has one route per method (`/timeseries/subscriptions`: GET lists,
 * POST creates).
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
  {
    method: 'POST',
    path: '/timeseries/data/latest',
    api: { capability: readCapability('timeseries'), slash: false },
    serve: collection((ctx, ex, notes) => handleLatest(ctx.points, ex, notes)),
  },
  {
    method: 'POST',
    path: '/timeseries/subscriptions',
    api: SUBSCRIPTIONS_WRITE,
    serve: (ctx, ex, notes) => handleCreateSubscription(ctx.subscriptions, ex, notes),
  },
  {
    method: 'GET',
    path: '/timeseries/subscriptions',
    api: SUBSCRIPTIONS_READ,
    serve: (ctx, ex) => handleListSubscriptions(ctx.subscriptions, ex),
  },
  {
    method: 'POST',
    path: '/timeseries/subscriptions/byids',
    api: SUBSCRIPTIONS_READ,
    serve: (ctx, ex, notes) => handleSubscriptionsByIds(ctx.subscriptions, ex, notes),
  },
  {
    method: 'POST',
    path: '/timeseries/subscriptions/data/list',
    api: SUBSCRIPTIONS_READ,
    serve: collection((ctx, ex, notes) => handleSubscriptionData(ctx.subscriptions, ex, notes)),
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

/** The routes of each path, the first in the table first. */
function byPath(routes: readonly Route[]): Map<string, Route[]> {
  const paths = new Map<string, Route[]>();
  for (const route of routes) paths.set(route.path, [...(paths.get(route.path) ?? []), route]);
  return paths;
}

const AT_ORIGIN = byPath(ROUTES.filter((route) => route.api === undefined));
const IN_API = byPath(ROUTES.filter((route) => route.api !== undefined));

/** The path's route for the method; another of its routes when none answers it (a 405 names its method). */
function ofMethod(routes: readonly Route[] | undefined, method: string | undefined): Route | undefined {
  return routes?.find((route) => route.method === method) ?? routes?.[0];
}

/** `/api/v1/projects/{project}` and the path after it. */
const API_PATH = /^\/api\/v1\/projects\/([^/]+)(\/.*)$/;

/** A route found for a path; `project` is the project the path names, for the platform's API. */
export interface RouteMatch {
  route: Route;
  project: string | undefined;
}

/**
 * The route of a path for the method (any of the path's routes when none answers that method, or
 * no method is given); undefined when the path has none.
 */
export function findRoute(path: string, method?: string): RouteMatch | undefined {
  const api = API_PATH.exec(path);
  if (api === null) {
    const route = ofMethod(AT_ORIGIN.get(path), method);
    return route === undefined ? undefined : { route, project: undefined };
  }
  const [, project = '', rest = ''] = api;
  let route = ofMethod(IN_API.get(rest), method);
  if (route === undefined && rest.endsWith('/')) {
    const slashed = ofMethod(IN_API.get(rest.slice(0, -1)), method);
    if (slashed?.api?.slash === true) route = slashed;
  }
  return route === undefined ? undefined : { route, project };
}

/**
 * `METHOD /route` for stats: a route by its path, the platform's without their project prefix
 * (`POST /events/aggregate`, `POST /models/instances/sync`); any other path as it was asked.
 */
export function routeName(method: string | undefined, path: string, found = findRoute(path, method)): string {
  return `${method} ${found?.route.path ?? path}`;
}
