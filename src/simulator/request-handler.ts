import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../log.js';
import type { Clock } from '../util/clock.js';
import { handleAggregate } from './aggregate-handler.js';
import { missingCapability } from './capabilities.js';
import { type AuthContext, handleLogin, handleLoginStatus, handleLogout, handleToken } from './auth-handlers.js';
import type { Credentials } from './credentials.js';
import { CursorCodec } from './cursor.js';
import { handleDatapoints } from './datapoints/index.js';
import type { Dataset } from './dataset/dataset.js';
import { FaultPlanner, RateGate } from './faults.js';
import { handleList, type ListContext } from './list-handler.js';
import type { SimulatorConfig } from './options.js';
import { type Exchange, sendError } from './respond.js';
import type { CollectionChurn } from './collection-churn.js';
import {
  type Churn,
  handleInstancesAggregate,
  handleInstancesList,
  handleSync,
  handleViewsByIds,
  handleViewsList,
  type InstanceStore,
  type ModelsContext,
} from './models/index.js';
import { matchModelsRoute, matchResourceRoute, type ModelsRoute, routeName } from './routes.js';
import { countClient, increment, type RecordedRequest, type RequestNotes, type SimulatorStats } from './stats.js';

/** The identity provider's token endpoint, at the origin's root. */
export const TOKEN_PATH = '/oauth2/token';

/** What the simulator counts and records; `stats` is replaced whole when a test resets it. */
export interface Counters {
  stats: SimulatorStats;
  readonly recorded: RecordedRequest[];
}

/** What the handlers of one simulator share: its config, data, credentials and counters. */
export interface Served {
  config: SimulatorConfig;
  dataset: Dataset;
  credentials: Credentials;
  projectId: number;
  clock: Clock;
  counters: Counters;
  /** The data-modeling service's instances, and the changes `--churn` makes to them. */
  instances: InstanceStore;
  churn: Churn;
  /** The changes `--churn` makes to the collections. */
  collectionChurn: CollectionChurn;
}

type Route = (ex: Exchange, notes: RequestNotes) => Promise<void>;

/** The contexts the list, models and auth handlers read; all see the counters a reset puts in place. */
function handlerContexts(served: Served): { list: ListContext; models: ModelsContext; auth: AuthContext } {
  const { config, dataset, credentials, clock, counters } = served;
  const list: ListContext = {
    config,
    dataset,
    cursors: new CursorCodec(config.seed),
    planner: new FaultPlanner(config.seed, config.faults),
    rateGate: config.faults.maxRps === undefined ? undefined : new RateGate(config.faults.maxRps, clock),
    get stats() {
      return counters.stats;
    },
    clock,
  };
  const models: ModelsContext = {
    config,
    dataset,
    cursors: list.cursors,
    planner: list.planner,
    rateGate: list.rateGate,
    get stats() {
      return counters.stats;
    },
    clock,
    instances: served.instances,
    churn: served.churn,
  };
  const auth: AuthContext = {
    credentials,
    project: config.project,
    projectId: served.projectId,
    tokenTtlSeconds: config.faults.tokenTtlSeconds,
    get stats() {
      return counters.stats;
    },
  };
  return { list, models, auth };
}

/**
 * The router: the fixed routes of the identity provider and login, then the resource routes for an
 * authenticated caller of the project. `notes.mechanism` is set as soon as the caller is authenticated.
 */
function createRouter(served: Served): Route {
  const { config, dataset, credentials } = served;
  const { list, models, auth } = handlerContexts(served);
  const fixed: Record<string, [string, (ex: Exchange) => Promise<void>]> = {
    '/login/status': ['GET', (ex) => handleLoginStatus(auth, ex)],
    '/logout': ['GET', (ex) => handleLogout(auth, ex)],
    '/login': ['POST', (ex) => handleLogin(auth, ex)],
    [TOKEN_PATH]: ['POST', (ex) => handleToken(auth, ex)],
  };
  return async (ex, notes) => {
    const { req, url } = ex;
    const path = url.pathname;
    const method = req.method ?? 'GET';
    const known = fixed[path];
    const match = matchResourceRoute(path);
    const modelsRoute = match === undefined ? matchModelsRoute(path) : undefined;
    const allowed = known?.[0] ?? match?.method ?? modelsRoute?.method;
    if (allowed === undefined) return sendError(ex, 404, `Not found: ${method} ${path}`);
    if (method !== allowed) {
      return sendError(ex, 405, `Method ${method} not allowed on ${path}; use ${allowed}.`, {
        allow: allowed,
      });
    }
    if (known) return known[1](ex);
    const principal = credentials.authenticate(req.headers);
    if (principal === undefined) return sendError(ex, 401, 'Unauthorized');
    notes.mechanism = principal.mechanism;
    const project = match?.project ?? modelsRoute?.project;
    if (project !== config.project) return sendError(ex, 403, `Project '${project}' does not exist`);
    const route = match ?? modelsRoute;
    const missing = route === undefined ? undefined : missingCapability(config.capabilities, principal, route);
    if (missing !== undefined) {
      return sendError(ex, 403, `Missing capability ${missing}: the credential may not make this request in project '${project}'`);
    }
    if (modelsRoute !== undefined) return routeModels(models, ex, modelsRoute, notes);
    if (match === undefined) return sendError(ex, 404, `Not found: ${method} ${path}`);
    served.collectionChurn.catchUp(served.clock.now());
    if (match.action === 'aggregate') return handleAggregate(dataset, ex, match.resource, notes);
    if (match.action === 'datapoints') return handleDatapoints(list, ex, notes);
    return handleList(list, ex, match, notes);
  };
}

function routeModels(ctx: ModelsContext, ex: Exchange, route: ModelsRoute, notes: RequestNotes): Promise<void> {
  switch (route.action) {
    case 'views':
      return handleViewsList(ctx, ex);
    case 'views/byids':
      return handleViewsByIds(ctx, ex, notes);
    case 'instances/list':
      return handleInstancesList(ctx, ex, notes);
    case 'instances/sync':
      return handleSync(ctx, ex, notes);
    case 'instances/aggregate':
      return handleInstancesAggregate(ctx, ex, notes);
  }
}

/** Each request: an id, counted by route, status and client, recorded if asked, then routed. */
export function requestHandler(served: Served, logger: Logger): (req: IncomingMessage, res: ServerResponse) => void {
  const { config, counters } = served;
  const route = createRouter(served);
  const idPrefix = randomBytes(4).toString('hex');
  let requestSeq = 0;
  return (req, res) => {
    const requestId = `${idPrefix}-${(++requestSeq).toString(16)}`;
    const startedAt = performance.now();
    res.setHeader('x-request-id', requestId);
    const url = new URL(req.url ?? '/', 'http://simulator');
    const name = routeName(req.method, url.pathname);
    const { stats } = counters;
    stats.requests++;
    increment(stats.byRoute, name);
    countClient(url.pathname === TOKEN_PATH ? stats.clients.token : stats.clients.platform, req.headers);
    const notes: RequestNotes = {};
    res.once('close', () => {
      increment(counters.stats.byStatus, String(res.statusCode));
      if (config.recordRequests) {
        counters.recorded.push({
          requestId,
          method: req.method ?? 'GET',
          route: name,
          params: [...url.searchParams],
          status: res.statusCode,
          mechanism: notes.mechanism,
          ...(notes.body === undefined ? {} : { body: notes.body }),
        });
      }
      logger.debug({ requestId, route: name, status: res.statusCode, ms: performance.now() - startedAt }, 'request');
    });
    route({ req, res, requestId, url, gzipLevel: config.gzipLevel }, notes).catch((error: unknown) => {
      logger.error({ err: error, requestId }, 'simulator handler failed');
      if (!res.headersSent) void sendError({ req, res, requestId, url, gzipLevel: 1 }, 500, 'Internal server error');
      else res.destroy();
    });
  };
}
