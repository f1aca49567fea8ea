import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { type Logger, silentLogger } from '../log.js';
import { RESOURCES } from '../resources/index.js';
import { type Clock, systemClock } from '../util/clock.js';
import { Credentials } from './credentials.js';
import { createDataset, type Dataset, type ResourceName } from './dataset/dataset.js';
import { parseSimulatorOptions, type SimulatorConfig, type SimulatorConfigInput } from './options.js';
import { hashString } from './random.js';
import { requestHandler, type Served, TOKEN_PATH } from './request-handler.js';
import { emptyStats, type RecordedRequest, type SimulatorStats } from './stats.js';

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
  const served: Served = {
    config,
    dataset: createDataset({ ...config, treeSize: config.treeSize }),
    credentials: new Credentials(config.project, config, clock),
    projectId: 1_000_000_000 + (hashString(config.project) % 1_000_000_000),
    clock,
    counters: { stats: emptyStats(), recorded: [] },
  };
  const onRequest = requestHandler(served, logger);
  const server =
    tls === undefined
      ? createHttpServer({ keepAliveTimeout: 30_000 }, onRequest)
      : createHttpsServer({ keepAliveTimeout: 30_000, cert: tls.cert, key: tls.key }, onRequest);
  const origin = await listen(server, config, tls === undefined ? 'http' : 'https');
  logger.info(
    {
      origin,
      project: config.project,
      ...Object.fromEntries(RESOURCES.map((name) => [name, config[name]])),
      datapoints: config.datapoints,
      dataSets: config.dataSets,
    },
    'simulator listening',
  );
  return simulatorAt(origin, served, server);
}

/** Listens on the configured host and port; resolves to the origin it is reached at. */
async function listen(server: Server, config: SimulatorConfig, scheme: 'http' | 'https'): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `${scheme}://${host}:${address.port}`;
}

/** The handle a caller of startSimulator gets: its addresses, its data, its counters, close. */
function simulatorAt(origin: string, served: Served, server: Server): Simulator {
  const { config, dataset, counters, clock } = served;
  return {
    baseUrl: `${origin}/api/v1/projects/${config.project}`,
    origin,
    tokenUrl: `${origin}${TOKEN_PATH}`,
    project: config.project,
    projectId: served.projectId,
    config,
    dataset,
    update: (resource, indexes, at = clock.now()) => {
      for (const index of indexes) dataset[resource].update(index, at);
    },
    stats: () => structuredClone(counters.stats),
    resetStats: () => {
      const inFlight = counters.stats.inFlight;
      counters.stats = emptyStats();
      counters.stats.inFlight = inFlight;
    },
    requests: () => counters.recorded,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
