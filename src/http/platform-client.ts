import { type Logger, silentLogger } from '../log.js';
import { type Clock, systemClock } from '../util/clock.js';
import { USER_AGENT } from '../version.js';
import type { Authenticator } from './auth/authenticator.js';
import {
  AbortedError,
  AuthError,
  BadResponseError,
  HttpStatusError,
  InvalidJsonError,
  type RequestContext,
} from './errors.js';
import type { LimiterState, RequestLimiter } from './adaptive-limiter.js';
import { DEFAULT_RETRY, type RetryOptions } from './retry-policy.js';
import {
  assertSecureTransport,
  DEFAULT_TRANSPORT,
  firstHeader,
  type RawResponse,
  Transport,
  type TransportOptions,
} from './transport.js';
import { type RetryRuntime, withRetries } from './with-retries.js';

/** Runs one request under the run's shared concurrency limit (a p-limit instance fits). */
export type Limiter = <T>(task: () => Promise<T>) => Promise<T>;

/** A plain limiter learns nothing from the answers. */
function withoutFeedback(limiter: Limiter): RequestLimiter {
  return { run: (task) => limiter(() => task({ epoch: 0, inFlight: 0, startedAtMs: 0 })), onResponse: () => {} };
}

export interface PlatformClientOptions {
  /** `https://{cluster}.host/api/v1/projects/{project}`; list paths are relative to it. */
  baseUrl: string;
  auth: Authenticator;
  transport?: Partial<TransportOptions>;
  retry?: Partial<RetryOptions>;
  /** Allow credentials over plain http:// to a host other than this machine. Default false. */
  allowInsecureHttp?: boolean;
  logger?: Logger;
  clock?: Clock;
  random?: () => number;
  /**
   * Default: no limit beyond the connection pool. An AdaptiveLimiter is told every answer's status,
   * so that it slows down on 429s and speeds up again.
   */
  limiter?: Limiter | RequestLimiter;
}

export interface JsonResponse {
  body: unknown;
  /** The body's bytes as received (after content decoding), for writers that keep items verbatim. */
  bytes: Buffer;
  /** The path and query requested, e.g. `/api/v1/projects/acme/events?limit=1000`. */
  path: string;
  requestId: string | undefined;
  /** Attempts it took, 1 when the first one succeeded. */
  attempts: number;
}

/** `GET /login/status` (and `/logout`) answer. */
export interface LoginStatus {
  user: string;
  loggedIn: boolean;
  project: string;
  projectId: number;
  apiKeyId?: number;
}

/**
 * Talks to the platform: every request carries the credential, `Accept: application/json` and a
 * User-Agent; failures become typed errors naming the request; retryable ones are retried under
 * the retry policy, and a 401 renews a token once.
 */
export class PlatformClient {
  readonly baseUrl: URL;
  /** Cluster root, where `/login/status` and `/logout` live (the base URL without `/api/...`). */
  readonly rootPath: string;
  /** Requests sent (attempts, not calls), retries made and 429 answers, for the run's summary. */
  readonly stats = { requests: 0, retries: 0, throttled: 0 };
  private readonly transport: Transport;
  private readonly runtime: RetryRuntime;
  private readonly limiter: RequestLimiter;
  private readonly logger: Logger;

  constructor(private readonly options: PlatformClientOptions) {
    this.baseUrl = new URL(options.baseUrl.replace(/\/+$/, ''));
    assertSecureTransport(this.baseUrl, options.allowInsecureHttp ?? false, 'source.baseUrl');
    this.rootPath = this.baseUrl.pathname.split('/api/')[0] ?? '';
    this.transport = new Transport(this.baseUrl.origin, { ...DEFAULT_TRANSPORT, ...options.transport });
    this.logger = options.logger ?? silentLogger;
    const limiter = options.limiter ?? ((task) => task());
    this.limiter = typeof limiter === 'function' ? withoutFeedback(limiter) : limiter;
    this.runtime = {
      retry: { ...DEFAULT_RETRY, ...options.retry },
      clock: options.clock ?? systemClock,
      random: options.random ?? Math.random,
      onRetry: (error, delayMs, reason) => {
        this.stats.retries++;
        this.logger.warn(
          {
            method: error.method,
            path: error.path,
            requestId: error.requestId,
            attempt: error.attempts,
            delayMs,
            reason,
          },
          `request failed, retrying in ${delayMs} ms: ${error.message}`,
        );
      },
    };
  }

  /** GET `{baseUrl}{path}?{params}` and parse the JSON answer. */
  get(path: string, params: Iterable<readonly [string, string]> = [], signal?: AbortSignal): Promise<JsonResponse> {
    const search = new URLSearchParams();
    for (const [key, value] of params) search.append(key, value);
    const query = search.toString();
    return this.send(`${this.baseUrl.pathname}${path}${query === '' ? '' : `?${query}`}`, signal);
  }

  /** `GET /login/status` at the cluster root: who the credential belongs to (API keys, cookies). */
  async loginStatus(): Promise<LoginStatus> {
    return parseLoginStatus(await this.send(`${this.rootPath}/login/status`));
  }

  /** `GET /logout` at the cluster root: ends a cookie session. */
  async logout(): Promise<LoginStatus> {
    return parseLoginStatus(await this.send(`${this.rootPath}/logout`));
  }

  /** The adaptive limiter's pace and concurrency, when it has one. */
  limiterState(): LimiterState | undefined {
    return this.limiter.state?.();
  }

  async close(): Promise<void> {
    await Promise.all([this.transport.close(), this.options.auth.close()]);
  }

  private send(path: string, signal?: AbortSignal): Promise<JsonResponse> {
    const { auth } = this.options;
    return withRetries(async (attempts) => {
      const ctx: RequestContext = { method: 'GET', path, attempts };
      const credential = await auth.headers();
      let raw = await this.exchange(path, credential, ctx, signal);
      if (raw.status === 401 && (await auth.onUnauthorized(credential))) {
        this.logger.info({ path, requestId: raw.requestId }, 'credential refused (401); renewed it, sending again');
        raw = await this.exchange(path, await auth.headers(), ctx, signal);
      }
      return this.interpret(raw, { ...ctx, ...(raw.requestId === undefined ? {} : { requestId: raw.requestId }) });
    }, this.runtime, signal);
  }

  private exchange(
    path: string,
    credential: Record<string, string>,
    ctx: RequestContext,
    signal?: AbortSignal,
  ): Promise<RawResponse> {
    this.stats.requests++;
    const headers = { 'accept': 'application/json', 'user-agent': USER_AGENT, ...credential };
    return this.limiter.run(
      async (permit) => {
        if (signal?.aborted === true) throw new AbortedError('Stopped before sending', ctx);
        const raw = await this.transport.request('GET', path, headers, ctx, undefined, signal);
        if (raw.status === 429) this.stats.throttled++;
        this.limiter.onResponse(permit, raw.status, raw.status === 429 ? errorMessage(raw) : undefined);
        return raw;
      },
      { signal, abortError: () => new AbortedError('Stopped while waiting for a request slot', ctx) },
    );
  }

  private interpret(raw: RawResponse, ctx: RequestContext): JsonResponse {
    const { status } = raw;
    if (status >= 200 && status < 300) {
      const text = raw.body.toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new InvalidJsonError(
          `HTTP ${status} with a body that is not JSON (${raw.body.length} bytes${preview(text)})`,
          ctx,
        );
      }
      return { body, bytes: raw.body, path: ctx.path, requestId: raw.requestId, attempts: ctx.attempts ?? 1 };
    }
    const message = errorMessage(raw);
    if (status === 401) {
      throw new AuthError(
        `The platform refused the ${this.options.auth.mechanism} credential: HTTP 401${message === undefined ? '' : ` ${message}`}. Check source.auth`,
        ctx,
      );
    }
    if (status >= 300 && status < 400) {
      throw new BadResponseError(
        `Unexpected redirect (HTTP ${status} to ${firstHeader(raw.headers, 'location') ?? '?'}); redirects are not ` +
        'followed so that credentials stay with the configured host. Check source.baseUrl',
        ctx,
      );
    }
    throw new HttpStatusError(status, message, firstHeader(raw.headers, 'retry-after'), ctx);
  }
}

/** The platform's `error.message`, or the title of an HTML error page from a proxy. */
function errorMessage(raw: RawResponse): string | undefined {
  const text = raw.body.toString('utf8');
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } } | null)?.error?.message;
    return typeof message === 'string' ? message : undefined;
  } catch {
    const title = /<title>([^<]*)<\/title>/i.exec(text)?.[1];
    return title === undefined ? undefined : `(HTML page: ${title.trim()})`;
  }
}

function preview(text: string): string {
  if (text.length === 0) return ', empty';
  const start = text.slice(0, 60).replace(/\s+/g, ' ');
  return `, starting ${JSON.stringify(start)}${text.length > 60 ? '...' : ''}`;
}

function parseLoginStatus(response: JsonResponse): LoginStatus {
  const data = (response.body as { data?: Partial<LoginStatus> } | null)?.data;
  if (data === undefined || typeof data.loggedIn !== 'boolean' || typeof data.user !== 'string') {
    throw new BadResponseError('The answer has no data.loggedIn and data.user', {
      method: 'GET',
      path: response.path,
      attempts: response.attempts,
      ...(response.requestId === undefined ? {} : { requestId: response.requestId }),
    });
  }
  return {
    user: data.user,
    loggedIn: data.loggedIn,
    project: typeof data.project === 'string' ? data.project : '',
    projectId: typeof data.projectId === 'number' ? data.projectId : -1,
    ...(typeof data.apiKeyId === 'number' ? { apiKeyId: data.apiKeyId } : {}),
  };
}
