import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { type Logger, silentLogger } from '../log.js';
import { type Clock, systemClock } from '../util/clock.js';
import { Credentials } from './credentials.js';
import {
  type AuthContext,
  handleLogin,
  handleLoginStatus,
  handleLogout,
  handleToken,
} from './auth-handlers.js';
import { handleAggregate } from './aggregate-handler.js';
import { CursorCodec } from './cursor.js';
import { RESOURCES } from '../resources/index.js';
import { createDataset, type Dataset, type ResourceName } from './dataset/dataset.js';
import { FaultPlanner, RateGate } from './faults.js';
import { handleList, type ListContext } from './list-handler.js';
import { parseSimulatorOptions, type SimulatorConfig, type SimulatorConfigInput } from './options.js';
import { hashString } from './random.js';
import { type Exchange, sendError } from './respond.js';
import { matchResourceRoute, routeName } from './routes.js';
import {
  countClient,
  emptyStats,
  increment,
  type RecordedRequest,
  type RequestNotes,
  type SimulatorStats,
} from './stats.js';

/** The identity provider's token endpoint, at the origin's root. */
const TOKEN_PATH = '/oauth2/token';

export interface SimulatorOptions extends SimulatorConfigInput {
  /** Defaults to a silent logger. */
  logger?: Logger;
  /** Drives token expiry, cursor TTL, the rate cap and latency; tests pass a fake one. */
  clock?: Clock;
  /** Serve HTTPS with this PEM certificate and key instead of plain HTTP. */
  tls?: { cert: string; key: string };
}

export interface Simulator {
  /** `http://HOST:PORT/api/v1/projects/PROJECT`: the base URL of the platform API. */
  readonly baseUrl: string;
  /** `http://HOST:PORT`: where `/login/status`, `/logout`, `/login` and the token endpoint live. */
  readonly origin: string;
  readonly tokenUrl: string;
  readonly project: string;
  readonly projectId: number;
  readonly config: SimulatorConfig;
  /** The data served, for tests to compute what an export must contain. */
  readonly dataset: Dataset;
  /**
   * Updates items as a client of the platform would: each gets a new version whose
   * `lastUpdatedTime` is `at` (default: the clock's now), so `lastUpdatedTime` filters see it move.
   */
  update(resource: ResourceName, indexes: Iterable<number>, at?: number): void;
  stats(): SimulatorStats;
  resetStats(): void;
  /** Requests seen so far (only with `recordRequests: true`). */
  requests(): readonly RecordedRequest[];
  close(): Promise<void>;
}

/** Starts the platform simulator on loopback (by default) and resolves once it is listening. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const { logger = silentLogger, clock = systemClock, tls, ...rest } = options;
  const config = parseSimulatorOptions(rest);
  const dataset = createDataset({ ...config, treeSize: config.treeSize });
  const projectId = 1_000_000_000 + (hashString(config.project) % 1_000_000_000);
  let stats = emptyStats();
  const recorded: RecordedRequest[] = [];
  const credentials = new Credentials(config.project, config, clock);
  const list: ListContext = {
    config,
    dataset,
    cursors: new CursorCodec(config.seed),
    planner: new FaultPlanner(config.seed, config.faults),
    rateGate: config.faults.maxRps === undefined ? undefined : new RateGate(config.faults.maxRps, clock),
    get stats() {
      return stats;
    },
    clock,
  };
  const auth: AuthContext = {
    credentials,
    project: config.project,
    projectId,
    tokenTtlSeconds: config.faults.tokenTtlSeconds,
    get stats() {
      return stats;
    },
  };
  const idPrefix = randomBytes(4).toString('hex');
  let requestSeq = 0;

  /** Serves one request; `notes.mechanism` is set as soon as the caller is authenticated. */
  async function route(ex: Exchange, notes: RequestNotes): Promise<void> {
    const { req, url } = ex;
    const path = url.pathname;
    const method = req.method ?? 'GET';
    const fixed: Record<string, [string, () => Promise<void>]> = {
      '/login/status': ['GET', () => handleLoginStatus(auth, ex)],
      '/logout': ['GET', () => handleLogout(auth, ex)],
      '/login': ['POST', () => handleLogin(auth, ex)],
      [TOKEN_PATH]: ['POST', () => handleToken(auth, ex)],
    };
    const known = fixed[path];
    const match = matchResourceRoute(path);
    const allowed = known?.[0] ?? match?.method;
    if (allowed === undefined) return sendError(ex, 404, `Not found: ${method} ${path}`);
    if (method !== allowed) {
      return sendError(ex, 405, `Method ${method} not allowed on ${path}; use ${allowed}.`, {
        allow: allowed,
      });
    }
    if (known) return known[1]();
    const principal = credentials.authenticate(req.headers);
    if (principal === undefined) return sendError(ex, 401, 'Unauthorized');
    notes.mechanism = principal.mechanism;
    if (match?.project !== config.project) {
      return sendError(ex, 403, `Project '${match?.project}' does not exist or these credentials have no access to it.`);
    }
    if (match.action === 'aggregate') return handleAggregate(dataset, ex, match.resource, notes);
    return handleList(list, ex, match, notes);
  }

  function onRequest(req: IncomingMessage, res: ServerResponse): void {
    const requestId = `${idPrefix}-${(++requestSeq).toString(16)}`;
    const startedAt = performance.now();
    res.setHeader('x-request-id', requestId);
    const url = new URL(req.url ?? '/', 'http://simulator');
    const name = routeName(req.method, url.pathname);
    stats.requests++;
    increment(stats.byRoute, name);
    countClient(url.pathname === TOKEN_PATH ? stats.clients.token : stats.clients.platform, req.headers);
    const notes: RequestNotes = {};
    res.once('close', () => {
      increment(stats.byStatus, String(res.statusCode));
      if (config.recordRequests) {
        recorded.push({
          requestId,
          method: req.method ?? 'GET',
          route: name,
          params: [...url.searchParams],
          status: res.statusCode,
          mechanism: notes.mechanism,
          ...(notes.body === undefined ? {} : { body: notes.body }),
        });
      }
      logger.debug(
        { requestId, route: name, status: res.statusCode, ms: performance.now() - startedAt },
        'request',
      );
    });
    route({ req, res, requestId, url, gzipLevel: config.gzipLevel }, notes).catch((error: unknown) => {
      logger.error({ err: error, requestId }, 'simulator handler failed');
      if (!res.headersSent)
        void sendError({ req, res, requestId, url, gzipLevel: 1 }, 500, 'Internal server error');
      else res.destroy();
    });
  }

  const server =
    tls === undefined
      ? createHttpServer({ keepAliveTimeout: 30_000 }, onRequest)
      : createHttpsServer({ keepAliveTimeout: 30_000, cert: tls.cert, key: tls.key }, onRequest);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const origin = `${tls === undefined ? 'http' : 'https'}://${host}:${address.port}`;
  logger.info(
    {
      origin,
      project: config.project,
      ...Object.fromEntries(RESOURCES.map((name) => [name, config[name]])),
      dataSets: config.dataSets,
    },
    'simulator listening',
  );

  return {
    baseUrl: `${origin}/api/v1/projects/${config.project}`,
    origin,
    tokenUrl: `${origin}${TOKEN_PATH}`,
    project: config.project,
    projectId,
    config,
    dataset,
    update: (resource, indexes, at = clock.now()) => {
      for (const index of indexes) dataset[resource].update(index, at);
    },
    stats: () => structuredClone(stats),
    resetStats: () => {
      const inFlight = stats.inFlight;
      stats = emptyStats();
      stats.inFlight = inFlight;
    },
    requests: () => recorded,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
