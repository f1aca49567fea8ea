import { z } from 'zod';
import { byteSize } from './byte-size.js';
import { appNameProblem, DEFAULT_APP_NAME } from '../http/identification-headers.js';
import { DEFAULT_RETRY } from '../http/retry-policy.js';
import { DEFAULT_TRANSPORT } from '../http/transport.js';
import { Secret } from '../util/secret.js';

const secret = (key: string) =>
  z.instanceof(Secret, { message: `expected \${ENV_VARIABLE} in ${key}, or a file path in ${key}File` });

const isHttpUrl = (text: string): boolean => URL.canParse(text) && /^https?:$/.test(new URL(text).protocol);

const httpUrl = z.string().refine(isHttpUrl, 'expected an http(s):// URL');

const PROJECT_ROOT = /^\/api\/v1\/projects\/[^/]+\/?$/;

/**
 * `http(s)://host[:port]/api/v1/projects/<project>`, optionally with a trailing slash: the requests
 * go to paths below it, so a host alone or another path would only fail later, with a 404. The
 * trailing slash is dropped: `.../projects/demo/` is the same source as `.../projects/demo` (in the
 * checkpoint, its drift check and every record).
 */
const projectRootUrl = z.string().superRefine((text, ctx) => {
  if (!isHttpUrl(text)) {
    ctx.addIssue({ code: 'custom', message: 'expected an http(s):// URL' });
    return;
  }
  const url = new URL(text);
  const extra = url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '';
  if (extra || !PROJECT_ROOT.test(url.pathname)) {
    ctx.addIssue({
      code: 'custom',
      message: "expected https://{cluster}.{host}/api/v1/projects/{project}, the project's API root",
    });
  }
}).transform((text) => text.replace(/\/+$/, ''));

/** `source.appName`: sent to the platform as the `x-cdp-app` header, so it must be a valid header value. */
const appName = z.string().superRefine((text, ctx) => {
  const problem = appNameProblem(text);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

/** How requests are authenticated; `type` picks the mechanism. */
export const authSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('oauth-client-credentials'),
    tokenUrl: httpUrl,
    clientId: z.string().min(1),
    clientSecret: secret('clientSecret'),
    /** e.g. `https://{cluster}.host/.default`. */
    scopes: z.array(z.string().min(1)).default([]),
    audience: z.string().min(1).optional(),
  }),
  z.strictObject({ type: z.literal('token'), token: secret('token') }),
  z.strictObject({ type: z.literal('api-key'), apiKey: secret('apiKey') }),
  z.strictObject({ type: z.literal('cookie'), cookie: secret('cookie') }),
]);

export type AuthConfig = z.output<typeof authSchema>;

/** The keys of the `source` section as the job file gives them. */
const sourceKeys = z.strictObject({
  /** `https://{cluster}.host/api/v1/projects/{project}`. */
  baseUrl: projectRootUrl,
  auth: authSchema,
  /**
   * Names the application to the platform: sent as `x-cdp-app` with every request to it (never to
   * the identity provider), so the platform's operators can tell this job's traffic from others'.
   */
  appName: appName.default(DEFAULT_APP_NAME),
  /** Credentials over plain http:// to a non-loopback host are refused unless this is true. */
  allowInsecureHttp: z.boolean().default(false),
  /** PEM file of a private CA to trust (relative to the config file). TLS verification stays on. */
  caFile: z.string().min(1).optional(),
  /**
   * Most requests in flight at once, over all streams and partitions (the one shared limiter). The
   * platform serves about 23 list requests/s per identity; 8 concurrent requests of a few hundred
   * ms each stay near that without piling up 429s. The limiter adapts below this: a 429 about
   * concurrent requests lowers it a step when they are sustained, and on any 429 it also paces
   * request starts (see AdaptiveLimiter); the pace grows back while no 429 comes, the concurrency a
   * step after 30 s without sustained 429s.
   */
  concurrency: z.number().int().min(1).max(64).default(8),
  /**
   * Most request starts per second, retries included: a static cap for the adaptive limiter, which
   * otherwise starts at full speed and paces itself only once the platform answers 429. Set it to
   * stay under a known quota (e.g. a share of the platform's ~23/s when other jobs use the same
   * identity). Default: none.
   */
  maxRequestsPerSecond: z.number().positive().finite().optional(),
  /**
   * Most bytes of responses held in memory at once, over all streams and partitions: a page holds
   * its share from before its request until its rows are written. Default: 8 MiB per request of
   * `concurrency`, at least 32 MiB (sourceSchema resolves it). A page larger than this still goes, alone.
   */
  maxBufferedBytes: byteSize(1024 * 1024).optional(),
  /**
   * Most bytes of one response once decoded (gzip included): a larger one is cut off as it arrives
   * and fails its partition with E_RESPONSE_TOO_LARGE, so that a runaway or hostile answer (a gzip
   * bomb, an endless body) cannot exhaust memory. The default is twice the largest real page (1000
   * items with 128 KB of metadata each).
   */
  maxResponseBytes: byteSize(1024 * 1024).default(DEFAULT_TRANSPORT.maxResponseBytes),
  /**
   * Most rows a stream reads, as a multiple of the platform's count of it (plus 10,000 rows): a
   * partition whose page goes past it stops with E_READ_LIMIT, since only a platform that sends
   * items again reads that much. Instances streams are counted by their view (list and sync feed
   * alike). 0 turns the check off; a stream without a count (relationships, a count that failed)
   * has none. Default 2.
   */
  maxReadFactor: z
    .number()
    .finite()
    .refine((factor) => factor === 0 || factor >= 1, 'expected 0 (no limit) or a factor of at least 1')
    .default(2),
  /** Most connections to the platform at once. */
  maxConnections: z.number().int().min(1).max(256).default(DEFAULT_TRANSPORT.connections),
  timeouts: z
    .strictObject({
      connectMs: z.number().int().min(1).default(DEFAULT_TRANSPORT.connectTimeoutMs),
      headersMs: z.number().int().min(1).default(DEFAULT_TRANSPORT.headersTimeoutMs),
      bodyMs: z.number().int().min(1).default(DEFAULT_TRANSPORT.bodyTimeoutMs),
      /** From sending a request to the last byte of its body, retries apart: bounds a body that trickles. */
      requestMs: z.number().int().min(1).default(DEFAULT_TRANSPORT.requestTimeoutMs),
    })
    .prefault({}),
  retry: z
    .strictObject({
      maxAttempts: z.number().int().min(1).max(100).default(DEFAULT_RETRY.maxAttempts),
      baseDelayMs: z.number().int().min(0).default(DEFAULT_RETRY.baseDelayMs),
      maxDelayMs: z.number().int().min(0).default(DEFAULT_RETRY.maxDelayMs),
      maxRetryAfterMs: z.number().int().min(0).default(DEFAULT_RETRY.maxRetryAfterMs),
    })
    .prefault({}),
});

/** Where to read from and how to talk to it, with every default resolved (maxBufferedBytes follows concurrency). */
export const sourceSchema = sourceKeys.transform((source) => ({
  ...source,
  maxBufferedBytes: source.maxBufferedBytes ?? defaultBufferedBytes(source.concurrency),
}));

export type SourceConfig = z.output<typeof sourceSchema>;

/** source.maxBufferedBytes when the job file leaves it out: room for two pages of 4 MiB per request in flight. */
function defaultBufferedBytes(concurrency: number): number {
  return Math.max(32, 8 * concurrency) * 1024 * 1024;
}
