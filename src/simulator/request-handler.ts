import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../log.js';
import type { Clock } from '../util/clock.js';
import { missingCapability } from './capabilities.js';
import type { AuthContext } from './auth-handlers.js';
import type { Credentials } from './credentials.js';
import { CursorCodec } from './cursor.js';
import type { Dataset } from './dataset/dataset.js';
import { FaultPlanner, RateGate } from './faults.js';
import type { ListContext } from './list-handler.js';
import type { SimulatorConfig } from './options.js';
import { type Exchange, sendError } from './respond.js';
import type { CollectionChurn } from './collection-churn.js';
import type { Churn, InstanceStore, ModelsContext } from './models/index.js';
import type { SubscriptionsContext, SubscriptionStore } from './datapoints/index.js';
import { findRoute, type RouteContexts, type RouteMatch, routeName, TOKEN_PATH } from './routes.js';
import { countClient, increment, type RecordedRequest, type RequestNotes, type SimulatorStats } from './stats.js';

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
  /** The datapoint subscriptions: those made at start and those created since. */
  subscriptions: SubscriptionStore;
}

type Router = (ex: Exchange, notes: RequestNotes, found: RouteMatch | undefined) => Promise<void>;

/**
 * The contexts the handlers read; all see the counters a reset puts in place. The datapoints
 * route reads the lists' context.
 */
function routeContexts(served: Served): RouteContexts {
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
  const subscriptions: SubscriptionsContext = {
    config,
    dataset,
    cursors: list.cursors,
    planner: list.planner,
    rateGate: list.rateGate,
    get stats() {
      return counters.stats;
    },
    clock,
    subscriptions: served.subscriptions,
  };
  const catchUpCollections = () => served.collectionChurn.catchUp(clock.now());
  return { auth, list, points: list, models, subscriptions, catchUpCollections };
}

/**
 * The router: the route found for the path (routes.ts), 404 without one and 405 for another
 * method; a route of the platform's API answers an authenticated caller of the project who holds
 * its capability. `notes.mechanism` is set as soon as the caller is authenticated.
 */
function createRouter(served: Served): Router {
  const { config, credentials } = served;
  const contexts = routeContexts(served);
  return async (ex, notes, found) => {
    const { req, url } = ex;
    const path = url.pathname;
    const method = req.method ?? 'GET';
    const route = found?.route;
    if (route?.serve === undefined) return sendError(ex, 404, `Not found: ${method} ${path}`);
    if (method !== route.method) {
      return sendError(ex, 405, `Method ${method} not allowed on ${path}; use ${route.method}.`, {
        allow: route.method,
      });
    }
    if (route.api === undefined) return route.serve(contexts, ex, notes);
    const principal = credentials.authenticate(req.headers);
    if (principal === undefined) return sendError(ex, 401, 'Unauthorized');
    notes.mechanism = principal.mechanism;
    const project = found?.project;
    if (project !== config.project) return sendError(ex, 403, `Project '${project}' does not exist`);
    const missing = missingCapability(config.capabilities, principal, route.api.capability);
    if (missing !== undefined) {
      return sendError(ex, 403, `Missing capability ${missing}: the credential may not make this request in project '${project}'`);
    }
    return route.serve(contexts, ex, notes);
  };
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
    const found = findRoute(url.pathname, req.method);
    const name = routeName(req.method, url.pathname, found);
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
    route({ req, res, requestId, url, gzipLevel: config.gzipLevel }, notes, found).catch((error: unknown) => {
      logger.error({ err: error, requestId }, 'simulator handler failed');
      if (!res.headersSent) void sendError({ req, res, requestId, url, gzipLevel: 1 }, 500, 'Internal server error');
      else res.destroy();
    });
  };
}
