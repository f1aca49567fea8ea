import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { ConfigError, UsageError } from '../errors.js';
import { createLogger } from '../log.js';
import { parseFaultSpec, parseInstancesSpec } from '../simulator/options.js';
import { type Simulator, startSimulator } from '../simulator/server.js';
import { EXIT } from './exit-codes.js';
import { type Resource, RESOURCES } from '../config/job-schema.js';
import { withUsage } from './parse-flags.js';
import { startingClock } from '../util/clock.js';

export const SIMULATE_USAGE = `Usage: bulk-extract simulate [options]

Serves a deterministic copy of the platform's API on loopback until SIGINT/SIGTERM. Prints one JSON
line with "baseUrl" on stdout once listening; logs go to stderr.

Options:
  --host HOST            Address to listen on (default 127.0.0.1).
  --port PORT            Port, 0 for any free one (default 0).
  --project NAME         Project name in the base URL (default demo).
  --assets N             Number of assets (default 1000).
  --events N             Number of events (default 10000).
  --timeseries N         Number of time series (default 1000).
  --datapoints N         Datapoints in all the time series together at the start (default
                         100000), spread unevenly: a few long series, many short, some empty;
                         most series live (points up to now, more as time passes). Generated
                         on demand, so N costs no memory.
  --files N              Number of files (default 1000).
  --sequences N          Number of sequences (default 500).
  --relationships N      Number of relationships (default 2000).
  --datasets N           Number of data sets the items belong to (default 5).
  --instances SPEC       Data-model instances (/models/instances/...): N (N asset nodes, 2N
                         activities, N time series, 2N asset-activity edges) or kind=count
                         pairs, e.g. assets=1000000,activities=0 (default assets=1000,
                         activities=2000,timeseries=1000,edges=2000). Generated on demand.
  --churn RATE           Changes per second while running, drawn from the seed, to rehearse
                         incremental exports: RATE to the six collections (updates and
                         inserts), RATE to the instances (updates, inserts and soft deletes)
                         and RATE to the datapoints (late points, corrections, deleted
                         ranges) (default 0).
  --subscription SPEC    A datapoint subscription created at start (repeatable):
                         ID:PARTITIONS every series, ID:PARTITIONS:numeric or
                         ID:PARTITIONS:string the numeric or string ones, PARTITIONS 1..100;
                         'none' for none. Without it, one demo subscription: sim-all-points,
                         every series in 4 partitions.
  --event-metadata-bytes N
                         Each event's metadata also holds "padding", N characters
                         (0..128000, default 0): large items for memory tests.
  --seed S               Data seed, 0..4294967295 (default 1). Same seed, same data.
  --start-time TIME      The simulator's clock starts at TIME (ISO 8601 with a zone, or epoch
                         ms) and runs on from there; datapoints lie around it (default: now).
                         Same seed and start time, same points: for comparing an export with
                         the data set computed elsewhere.
  --api-key KEY          Accept this API key (repeatable).
  --client ID:SECRET     Accept this OAuth client at /oauth2/token (repeatable).
  --user NAME:PASSWORD   Accept this user at POST /login (repeatable).
  --faults SPEC          Fault injection: key=value pairs (rate429=0.1,rate5xx=0.05,latencyMs=20),
                         JSON, or @FILE holding either (see config/faults-*.json).
  --tls-cert FILE        Serve HTTPS with this PEM certificate (needs --tls-key).
  --tls-key FILE         The certificate's PEM private key.
  --log-level LEVEL      debug logs every request (default info).

With no --api-key, --client or --user, the demo credentials are accepted: OAuth client
demo:demo-secret at the tokenUrl it prints (the way a job should authenticate), user
demo:demo-password, and API key demo-api-key (deprecated by the platform).
`;

export const DEMO_CREDENTIALS = {
  apiKey: 'demo-api-key',
  client: { id: 'demo', secret: 'demo-secret' },
  user: { user: 'demo', password: 'demo-password' },
};

export async function runSimulate(argv: string[]): Promise<number> {
  const { values } = withUsage(SIMULATE_USAGE, () => parseArgs({ args: argv, strict: true, options: FLAGS }));
  if (values.help) {
    console.log(SIMULATE_USAGE);
    return EXIT.OK;
  }
  const apiKeys = values['api-key'] ?? [];
  const clients = (values.client ?? []).map((pair) => splitPair(pair, '--client', 'ID:SECRET'));
  const users = (values.user ?? []).map((pair) => splitPair(pair, '--user', 'NAME:PASSWORD'));
  const demo = apiKeys.length + clients.length + users.length === 0;
  const logger = createLogger(values['log-level']);
  const port = values.port === undefined ? undefined : integer(values.port, '--port');
  const startMs = values['start-time'] === undefined ? undefined : startTime(values['start-time']);
  const simulator = await startSimulator({
    logger,
    ...(startMs === undefined ? {} : { clock: startingClock(startMs) }),
    ...(values.host === undefined ? {} : { host: values.host }),
    ...(values.project === undefined ? {} : { project: values.project }),
    ...(port === undefined ? {} : { port }),
    ...counts(values),
    ...(values.datapoints === undefined ? {} : { datapoints: integer(values.datapoints, '--datapoints') }),
    ...(values.datasets === undefined ? {} : { dataSets: integer(values.datasets, '--datasets') }),
    ...(values.instances === undefined ? {} : { instances: parseInstancesSpec(values.instances) }),
    ...(values.churn === undefined ? {} : { churn: rate(values.churn, '--churn') }),
    ...(values.subscription === undefined ? {} : { subscriptions: subscriptionsOf(values.subscription) }),
    ...(values['event-metadata-bytes'] === undefined
      ? {}
      : { eventMetadataBytes: integer(values['event-metadata-bytes'], '--event-metadata-bytes') }),
    ...(values.seed === undefined ? {} : { seed: integer(values.seed, '--seed') }),
    ...(values.faults === undefined ? {} : { faults: parseFaultSpec(readSpec(values.faults)) }),
    ...tlsOption(values['tls-cert'], values['tls-key']),
    apiKeys: demo ? [DEMO_CREDENTIALS.apiKey] : apiKeys,
    clients: demo ? [DEMO_CREDENTIALS.client] : clients.map(([id, secret]) => ({ id, secret })),
    users: demo ? [DEMO_CREDENTIALS.user] : users.map(([user, password]) => ({ user, password })),
  }).catch((error: unknown) => {
    throw listenError(error, values.host ?? '127.0.0.1', port ?? 0) ?? error;
  });
  console.log(JSON.stringify(startupLine(simulator, demo ? 'demo' : 'given')));

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  await simulator.close();
  logger.info({ signal, stats: simulator.stats() }, 'simulator stopped');
  return EXIT.OK;
}

/** The collection sizes the flags give. */
function counts(values: Partial<Record<Resource, string>>): Partial<Record<Resource, number>> {
  const given = RESOURCES.filter((name) => values[name] !== undefined);
  return Object.fromEntries(given.map((name) => [name, integer(values[name] ?? '', `--${name}`)]));
}

/** What `simulate` prints on stdout once listening (docs/simulator.md shows it). */
export function startupLine(simulator: Simulator, credentials: 'demo' | 'given'): Record<string, unknown> {
  const { config } = simulator;
  return {
    baseUrl: simulator.baseUrl,
    origin: simulator.origin,
    tokenUrl: simulator.tokenUrl,
    project: simulator.project,
    projectId: simulator.projectId,
    ...Object.fromEntries(RESOURCES.map((name) => [name, config[name]])),
    datapoints: config.datapoints,
    dataSets: config.dataSets,
    instances: config.instances,
    churn: config.churn,
    startTime: new Date(simulator.dataset.datapoints.startMs).toISOString(),
    subscriptions: config.subscriptions.map(({ externalId, partitionCount }) => ({ externalId, partitionCount })),
    seed: config.seed,
    credentials,
    pid: process.pid,
  };
}

const FLAGS = {
  'host': { type: 'string' },
  'port': { type: 'string' },
  'project': { type: 'string' },
  ...(Object.fromEntries(RESOURCES.map((name) => [name, { type: 'string' }])) as Record<Resource, { type: 'string' }>),
  'datapoints': { type: 'string' },
  'datasets': { type: 'string' },
  'instances': { type: 'string' },
  'churn': { type: 'string' },
  'subscription': { type: 'string', multiple: true },
  'event-metadata-bytes': { type: 'string' },
  'seed': { type: 'string' },
  'start-time': { type: 'string' },
  'api-key': { type: 'string', multiple: true },
  'client': { type: 'string', multiple: true },
  'user': { type: 'string', multiple: true },
  'faults': { type: 'string' },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  'log-level': { type: 'string', default: 'info' },
  'help': { type: 'boolean', short: 'h' },
} as const;

/** `--subscription` values: `ID:PARTITIONS[:numeric|string]`, or `none` alone. */
function subscriptionsOf(specs: string[]): { externalId: string; partitionCount: number }[] {
  if (specs.length === 1 && specs[0] === 'none') return [];
  return specs.map((spec) => {
    const match = /^([^:]+):([0-9]+)(?::(numeric|string))?$/.exec(spec);
    const [, externalId = '', partitions = '', kind] = match ?? [];
    const partitionCount = Number(partitions);
    if (match === null || partitionCount < 1 || partitionCount > 100) {
      throw new UsageError(`--subscription expects ID:PARTITIONS[:numeric|string] with PARTITIONS in 1..100, or none; got '${spec}'.`);
    }
    const filter = kind === undefined ? {} : { filter: { equals: { property: ['isString'], value: kind === 'string' } } };
    return { externalId, name: externalId, partitionCount, ...filter };
  });
}

function readSpec(spec: string): string {
  return spec.startsWith('@') ? readFlagFile(spec.slice(1), '--faults') : spec;
}

function tlsOption(certFile: string | undefined, keyFile: string | undefined) {
  if (certFile === undefined && keyFile === undefined) return {};
  if (certFile === undefined || keyFile === undefined) throw new UsageError('--tls-cert and --tls-key go together.');
  return { tls: { cert: readFlagFile(certFile, '--tls-cert'), key: readFlagFile(keyFile, '--tls-key') } };
}

function readFlagFile(file: string, flag: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`${flag} ${file}: cannot read the file (${(error as Error).message}).`, { cause: error });
  }
}

/** Why the server cannot listen, as one line saying what to change; undefined for other errors. */
function listenError(error: unknown, host: string, port: number): UsageError | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  const where = `cannot listen on ${host.includes(':') ? `[${host}]` : host}:${port}`;
  const otherPort = 'Choose another with --port PORT, or --port 0 to pick a free one.';
  const reason: Record<string, string> = {
    EADDRINUSE: `${where}: the port is in use (EADDRINUSE). ${otherPort}`,
    EACCES: `${where}: permission denied (EACCES; ports below 1024 need privileges). ${otherPort}`,
    EADDRNOTAVAIL: `${where}: no such address on this machine (EADDRNOTAVAIL). Check --host (default 127.0.0.1).`,
    ENOTFOUND: `${where}: the host name does not resolve (ENOTFOUND). Check --host (default 127.0.0.1).`,
  };
  const message = typeof code === 'string' ? reason[code] : undefined;
  return message === undefined ? undefined : new UsageError(message, { cause: error });
}

function integer(text: string, flag: string): number {
  const value = Number(text.replaceAll('_', ''));
  if (!Number.isSafeInteger(value)) throw new UsageError(`${flag} expects an integer, got '${text}'.`);
  return value;
}

function rate(text: string, flag: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) throw new UsageError(`${flag} expects a number, got '${text}'.`);
  return value;
}

function splitPair(pair: string, flag: string, shape: string): [string, string] {
  const colon = pair.indexOf(':');
  if (colon <= 0 || colon === pair.length - 1) throw new UsageError(`${flag} expects ${shape}.`);
  return [pair.slice(0, colon), pair.slice(colon + 1)];
}

/** `--start-time`: epoch ms, or an ISO 8601 date-time with a zone. */
function startTime(text: string): number {
  const ms = /^-?\d+$/.test(text) ? Number(text) : /[zZ]|[+-]\d{2}:\d{2}$/.test(text) ? Date.parse(text) : Number.NaN;
  if (!Number.isSafeInteger(ms)) {
    throw new UsageError(`--start-time: expected epoch milliseconds or an ISO 8601 date-time with a zone (2026-01-01T00:00:00Z), got '${text}'`);
  }
  return ms;
}
