import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { formatZodIssues } from '../util/zod-issues.js';

const rate = z.number().min(0).max(1);

/** The subscription a simulator serves unless told otherwise: every series, 4 partitions. */
export const DEMO_SUBSCRIPTION = { externalId: 'sim-all-points', name: 'Every point of every series', partitionCount: 4 };

/**
 * Fault injection. Rates are shares of list requests (`/assets`, `/events`, ...) in [0, 1]; at most one
 * status or body fault hits a request, so the rates of those add up to at most 1.
 */
export const faultOptionsSchema = z
  .strictObject({
    /** 429 without Retry-After (the platform's usual answer when throttling). */
    rate429: rate.default(0),
    /** 429 with `Retry-After: retryAfterSeconds`. */
    rate429RetryAfter: rate.default(0),
    retryAfterSeconds: z.number().int().min(0).max(3600).default(1),
    rate500: rate.default(0),
    rate502: rate.default(0),
    rate503: rate.default(0),
    rate504: rate.default(0),
    /** Shorthand: spread evenly over 500, 502, 503 and 504. */
    rate5xx: rate.default(0),
    /** Answer 502/503/504 with an HTML page, as a load balancer in front of the platform does. */
    htmlErrors: z.boolean().default(false),
    /** Send the headers and half the body, then destroy the connection. */
    resetRate: rate.default(0),
    /** A complete HTTP response whose JSON body is cut in half. */
    truncateRate: rate.default(0),
    /** A complete HTTP response whose body is not valid JSON. */
    malformedRate: rate.default(0),
    /** Pages shorter than asked (possibly empty) that still carry the right `nextCursor`. */
    shortPageRate: rate.default(0),
    /** Added to every list response: latencyMs plus a uniform share of jitterMs, milliseconds. */
    latencyMs: z.number().min(0).max(600_000).default(0),
    jitterMs: z.number().min(0).max(600_000).default(0),
    /** Concurrent list requests above this get 429 with the platform's message. */
    maxConcurrent: z.number().int().min(1).optional(),
    /** List requests per second above this get 429 (token bucket, burst of one second). */
    maxRps: z.number().positive().optional(),
    /** Cursors older than this many milliseconds get 400. */
    cursorTtlMs: z.number().int().min(0).optional(),
    /** Lifetime of tokens from the token endpoint, seconds. */
    tokenTtlSeconds: z.number().int().min(1).default(3600),
  })
  .refine(
    (f) =>
      f.rate429 +
      f.rate429RetryAfter +
      f.rate500 +
      f.rate502 +
      f.rate503 +
      f.rate504 +
      f.rate5xx +
      f.resetRate +
      f.truncateRate +
      f.malformedRate <=
      1,
    { message: 'the status and body fault rates (all rates but shortPageRate) must add up to at most 1' },
  );

export type FaultOptions = z.output<typeof faultOptionsSchema>;
export type FaultOptionsInput = z.input<typeof faultOptionsSchema>;

const instanceCount = z.number().int().min(0).max(1_000_000_000);

/** Data-modeling instances generated at start, by kind; each generated on demand, so a million cost no memory. */
export const instanceCountsSchema = z.strictObject({
  /** Nodes of the asset view (`cdf_cdm:CogniteAsset`), in trees of 50. */
  assets: instanceCount.default(1000),
  /** Nodes of the activity view (`cdf_cdm:CogniteActivity`). */
  activities: instanceCount.default(2000),
  /** Nodes of the time-series view (`cdf_cdm:CogniteTimeSeries`). */
  timeseries: instanceCount.default(1000),
  /** Edges from an asset to an activity (view `sim_model:ActivityLink`); none without assets and activities. */
  edges: instanceCount.default(2000),
});

export const simulatorOptionsSchema = z.strictObject({
  host: z.string().min(1).default('127.0.0.1'),
  port: z.number().int().min(0).max(65_535).default(0),
  project: z
    .string()
    .regex(
      /^[a-z0-9][a-z0-9-]{0,63}$/,
      'lowercase letters, digits and dashes, starting with a letter or digit',
    )
    .default('demo'),
  assets: z.number().int().min(0).max(1_000_000_000).default(1000),
  events: z.number().int().min(0).max(1_000_000_000).default(10_000),
  timeseries: z.number().int().min(0).max(1_000_000_000).default(1000),
  files: z.number().int().min(0).max(1_000_000_000).default(1000),
  sequences: z.number().int().min(0).max(1_000_000_000).default(500),
  relationships: z.number().int().min(0).max(1_000_000_000).default(2000),
  /**
   * Datapoints in all the time series together, spread unevenly: a few long series, many short,
   * some empty. Generated on demand, so the number costs no memory; the default keeps reads quick.
   */
  datapoints: z.number().int().min(0).max(100_000_000_000).default(100_000),
  /** The data-modeling instances (`/models/instances/list` and `/sync`). */
  instances: instanceCountsSchema.default(() => instanceCountsSchema.parse({})),
  /**
   * Changes per second while the simulator runs, drawn from the seed, to rehearse incremental exports:
   * this many to the collections (updates and inserts) and as many to the instances (updates, inserts
   * and soft deletes); 0, the default, changes nothing.
   */
  churn: z.number().min(0).max(10_000).default(0),
  /**
   * Datapoint subscriptions created at start (`/timeseries/subscriptions`), each as the platform's
   * create body's item: `externalId`, `name`, `partitionCount` (1..100), and `timeSeriesIds`
   * (externalIds) or a `filter` (`{equals: {property: ["isString"|"isStep"], value}}`); neither
   * follows every series. The default is one demo subscription, `sim-all-points`: every series in
   * 4 partitions. `[]` creates none.
   */
  subscriptions: z
    .array(
      z.looseObject({
        externalId: z.string().min(1).max(255),
        partitionCount: z.number().int().min(1).max(100),
      }),
    )
    .default(() => [{ ...DEMO_SUBSCRIPTION }]),
  /** Data sets the items belong to (`dataSetId`: 4000000000000 + i, externalId `DS-i`). */
  dataSets: z.number().int().min(0).max(1_000_000).default(5),
  seed: z.number().int().min(0).max(0xffffffff).default(1),
  /**
   * Each event's metadata also holds `padding`: this many characters. For memory benchmarks with
   * large items (the platform allows values up to 128,000 bytes); 0, the default, adds nothing.
   */
  eventMetadataBytes: z.number().int().min(0).max(128_000).default(0),
  /** Assets per tree. */
  treeSize: z.number().int().min(1).default(100),
  apiKeys: z.array(z.string().min(8, 'API keys have at least 8 characters')).default([]),
  clients: z.array(z.strictObject({ id: z.string().min(1), secret: z.string().min(8) })).default([]),
  users: z.array(z.strictObject({ user: z.string().min(1), password: z.string().min(8) })).default([]),
  /**
   * What a credential may read, by its API key, OAuth client id or user: e.g.
   * `{ "my-key-0001": ["assetsAcl:READ"] }`. A credential named here holds only these capabilities
   * (`{acl}:READ`: assetsAcl, eventsAcl, timeSeriesAcl, filesAcl, sequencesAcl, relationshipsAcl,
   * dataModelsAcl, dataModelInstancesAcl), and a request it may not make gets 403 naming the one it
   * lacks, as the platform answers; any other credential holds every capability.
   */
  capabilities: z.record(z.string(), z.array(z.string().regex(/^[a-zA-Z]+Acl:[A-Z]+$/, 'an {acl}:{ACTION} such as eventsAcl:READ'))).default({}),
  /** Items examined per request when a filter is set; a page ends early (with a cursor) past it. */
  scanBudget: z.number().int().min(1).default(10_000),
  /** zlib level for gzip responses (1 fastest .. 9 smallest). */
  gzipLevel: z.number().int().min(1).max(9).default(1),
  /** Keep a log of every request (method, path, params, status) for tests; off by default. */
  recordRequests: z.boolean().default(false),
  faults: faultOptionsSchema.default(() => faultOptionsSchema.parse({})),
});

export type SimulatorConfig = z.output<typeof simulatorOptionsSchema>;
export type SimulatorConfigInput = z.input<typeof simulatorOptionsSchema>;

export function parseSimulatorOptions(input: SimulatorConfigInput): SimulatorConfig {
  const result = simulatorOptionsSchema.safeParse(input);
  if (!result.success)
    throw new ConfigError(`Invalid simulator options: ${formatZodIssues(result.error, input)}`);
  return result.data;
}

/**
 * Parses `--faults`: either JSON (`{"rate429":0.1}`) or `key=value` pairs separated by commas
 * (`rate429=0.1,latencyMs=20,htmlErrors=true`).
 */
export function parseFaultSpec(spec: string): FaultOptions {
  let input: unknown;
  const text = spec.trim();
  if (text.startsWith('{')) {
    try {
      input = JSON.parse(text);
    } catch (error) {
      throw new ConfigError(`Invalid --faults: not valid JSON (${(error as Error).message}).`, {
        cause: error,
      });
    }
  } else {
    const pairs: Record<string, unknown> = {};
    for (const part of text.split(',').filter((p) => p.trim() !== '')) {
      const [key, value, ...rest] = part.split('=').map((s) => s.trim());
      if (!key || value === undefined || rest.length > 0) {
        throw new ConfigError(`Invalid --faults: expected key=value, got '${part}'.`);
      }
      pairs[key] = value === 'true' ? true : value === 'false' ? false : Number(value);
    }
    input = pairs;
  }
  const result = faultOptionsSchema.safeParse(input);
  if (!result.success) throw new ConfigError(`Invalid --faults: ${formatZodIssues(result.error, input)}`);
  return result.data;
}

/**
 * Parses `--instances`: one count N (N asset nodes, 2N activities, N time series, 2N edges: the
 * defaults' proportions) or `key=value` pairs separated by commas (`assets=1000000,edges=0`), the
 * kinds not named keeping their defaults.
 */
export function parseInstancesSpec(spec: string): InstanceCounts {
  const text = spec.trim().replaceAll('_', '');
  let input: Record<string, unknown>;
  if (/^[0-9]+$/.test(text)) {
    const n = Number(text);
    input = { assets: n, activities: 2 * n, timeseries: n, edges: 2 * n };
  } else {
    input = {};
    for (const part of text.split(',').filter((p) => p.trim() !== '')) {
      const [key, value, ...rest] = part.split('=').map((s) => s.trim());
      if (!key || value === undefined || !/^[0-9]+$/.test(value) || rest.length > 0) {
        throw new ConfigError(`Invalid --instances: expected N or kind=count pairs (assets, activities, timeseries, edges), got '${part}'.`);
      }
      input[key] = Number(value);
    }
  }
  const result = instanceCountsSchema.safeParse(input);
  if (!result.success) throw new ConfigError(`Invalid --instances: ${formatZodIssues(result.error, input)}`);
  return result.data;
}

export type InstanceCounts = z.output<typeof instanceCountsSchema>;
