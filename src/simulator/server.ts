import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { type Logger, silentLogger } from '../log.js';
import { RESOURCES } from '../resources/index.js';
import { type Clock, systemClock } from '../util/clock.js';
import { Credentials } from './credentials.js';
import { createDataset, type Dataset, type ResourceName } from './dataset/dataset.js';
import { parseSimulatorOptions, type SimulatorConfig, type SimulatorConfigInput } from './options.js';
import { CollectionChurn } from './collection-churn.js';
import { Churn, type InstanceKind, type InstanceRef, InstanceStore } from './models/index.js';
import { subscriptionSpecOf, SubscriptionStore } from './datapoints/index.js';
import { ConfigError } from '../errors.js';
import { hashString } from './random.js';
import { requestHandler, type Served } from './request-handler.js';
import { TOKEN_PATH } from './routes.js';
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
  /**
   * Creates `count` items of the collection at `at` (default: the clock's now), after its last, with new
   * ids; returns their indexes. Partition m/n lists every n-th insert from the m-th after its other items.
   */
  insert(resource: ResourceName, count: number, at?: number): number[];
  /** The data-modeling instances served (`/models/instances/...`), for tests to compute what an export must contain. */
  readonly instances: InstanceStore;
  /**
   * Updates instances as a client of the platform would: each gets a new version, its changing
   * properties re-drawn, `lastUpdatedTime` = `at` (default: the clock's now); the sync feed shows it.
   */
  updateInstances(refs: Iterable<InstanceRef>, at?: number): void;
  /** Soft-deletes instances at `at`: lists leave them out, the sync feed shows each once with `deletedTime`. */
  deleteInstances(refs: Iterable<InstanceRef>, at?: number): void;
  /** Creates `count` instances of `kind` at `at`, at the end of the kind; returns their keys. */
  insertInstances(kind: InstanceKind, count: number, at?: number): InstanceRef[];
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
  const instances = new InstanceStore(config.seed, config.instances);
  const dataset = createDataset({ ...config, treeSize: config.treeSize, clock, seriesNodes: instances.seriesNodes() });
  const served: Served = {
    config,
    dataset,
    credentials: new Credentials(config.project, config, clock),
    projectId: 1_000_000_000 + (hashString(config.project) % 1_000_000_000),
    clock,
    counters: { stats: emptyStats(), recorded: [] },
    instances,
    churn: new Churn(instances, config.seed, config.churn, clock.now()),
    collectionChurn: new CollectionChurn(dataset, config.seed, config.churn, clock.now()),
    subscriptions: subscriptionsAtStart(config, dataset, clock.now()),
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
      instances: config.instances,
      churn: config.churn,
      subscriptions: config.subscriptions.map((subscription) => subscription.externalId),
    },
    'simulator listening',
  );
  return simulatorAt(origin, served, server);
}

/** The subscriptions of the `subscriptions` option, created at the start; a ConfigError names a bad one. */
function subscriptionsAtStart(config: SimulatorConfig, dataset: Dataset, nowMs: number): SubscriptionStore {
  const store = new SubscriptionStore(dataset.timeseries);
  config.subscriptions.forEach((given, at) => {
    const spec = subscriptionSpecOf(given);
    const created = typeof spec === 'string' ? spec : store.create(spec, nowMs);
    if (typeof created === 'string') throw new ConfigError(`Invalid simulator options: subscriptions[${at}]: ${created}`);
  });
  return store;
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
  const { config, dataset, counters, clock, instances, churn, collectionChurn } = served;
  /** Applies the churn due by `at` first, so that changes keep their order in the feed. */
  const changing = (at: number) => {
    churn.catchUp(clock.now());
    return at;
  };
  return {
    baseUrl: `${origin}/api/v1/projects/${config.project}`,
    origin,
    tokenUrl: `${origin}${TOKEN_PATH}`,
    project: config.project,
    projectId: served.projectId,
    config,
    dataset,
    update: (resource, indexes, at = clock.now()) => {
      collectionChurn.catchUp(clock.now());
      for (const index of indexes) dataset[resource].update(index, at);
    },
    insert: (resource, count, at = clock.now()) => {
      collectionChurn.catchUp(clock.now());
      return Array.from({ length: count }, () => dataset[resource].insert(at));
    },
    instances,
    updateInstances: (refs, at = clock.now()) => instances.update(refs, changing(at)),
    deleteInstances: (refs, at = clock.now()) => instances.delete(refs, changing(at)),
    insertInstances: (kind, count, at = clock.now()) => instances.insert(kind, count, changing(at)),
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
