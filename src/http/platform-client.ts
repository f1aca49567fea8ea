import { ConfigError } from '../errors.js';
import { type Logger, silentLogger } from '../log.js';
import { type Clock, systemClock } from '../util/clock.js';
import { USER_AGENT } from '../version.js';
import { type BudgetHold, ByteBudget } from '../page/index.js';
import { type AggregateFilter, parseAggregateCount } from './aggregate-count.js';
import type { Authenticator } from './auth/authenticator.js';
import { AbortedError, type RequestContext, RequestError } from './errors.js';
import { appNameProblem, DEFAULT_APP_NAME, identificationHeaders } from './identification-headers.js';
import type { LimiterState, RequestLimiter } from './adaptive-limiter.js';
import {
  errorMessage,
  type Credential,
  interpretPage,
  interpretRead,
  interpretResponse,
  type JsonResponse,
  type PageResponse,
  type ReadResponse,
} from './interpret-response.js';
import { type LoginStatus, parseLoginStatus } from './login-status.js';
import { DEFAULT_RETRY, type RetryOptions } from './retry-policy.js';
import { logRetry } from './retry-warning.js';
import {
  assertSecureTransport,
  DEFAULT_TRANSPORT,
  type RawResponse,
  type ResponseLimit,
  SMALL_ANSWER_LIMIT,
  Transport,
  type TransportOptions,
} from './transport.js';
import { type RetryRuntime, withRetries } from './with-retries.js';

export type { AggregateFilter, JsonResponse, LoginStatus, PageResponse, ReadResponse };

/** Runs one request under the run's shared concurrency limit (a p-limit instance fits). */
/** The class of an HTTP answer, or `none` for a request that got no answer. */
export type StatusClass = '1xx' | '2xx' | '3xx' | '4xx' | '5xx' | 'none';

function statusClass(status: number): StatusClass {
  const cls = `${Math.floor(status / 100)}xx`;
  return cls === '1xx' || cls === '2xx' || cls === '3xx' || cls === '4xx' || cls === '5xx' ? cls : 'none';
}

export type Limiter = <T>(task: () => Promise<T>) => Promise<T>;

/** A plain limiter learns nothing from the answers. */
function withoutFeedback(limiter: Limiter): RequestLimiter {
  return { run: (task) => limiter(() => task({ epoch: 0, inFlight: 0, startedAtMs: 0 })), onResponse: () => {} };
}

export interface PlatformClientOptions {
  /** `https://{cluster}.host/api/v1/projects/{project}`; list paths are relative to it. */
  baseUrl: string;
  auth: Authenticator;
  /** Sent as `x-cdp-app` with every request (`source.appName`). Default `bulk-extract`. */
  appName?: string;
  transport?: Partial<TransportOptions>;
  retry?: Partial<RetryOptions>;
  /** Allow credentials over plain http:// to a host other than this machine. Default false. */
  allowInsecureHttp?: boolean;
  /** The config key `baseUrl` came from, named in errors about reaching it. Default `source.baseUrl`. */
  setting?: string;
  logger?: Logger;
  clock?: Clock;
  random?: () => number;
  /**
   * Default: no limit beyond the connection pool. An AdaptiveLimiter is told every answer's status,
   * so that it slows down on 429s and speeds up again.
   */
  limiter?: Limiter | RequestLimiter;
  /**
   * The most response bytes held in memory at once, by every request of the client together
   * (`source.maxBufferedBytes`): the client's ByteBudget. Default 64 MiB.
   */
  maxBufferedBytes?: number;
}

/** PlatformClientOptions.maxBufferedBytes when not given: source.maxBufferedBytes's at the default concurrency. */
const DEFAULT_BUFFERED_BYTES = 64 * 1024 * 1024;

/** One request as sent: the body is JSON text for a POST. */
interface Outgoing {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  /** The most bytes of its answer once decoded. Default `transport.maxResponseBytes`. */
  limit?: ResponseLimit;
  /**
   * Its share of the budget, held from before it was sent (a page's estimate) and kept, filled
   * with the answer, for the caller to settle and release. Without one, the request takes its
   * bytes as they come, and gives them back once its answer is interpreted.
   */
  hold?: BudgetHold | undefined;
}

/**
 * Talks to the platform: every request carries the credential, `Accept: application/json`, a
 * User-Agent and the identification headers (`x-cdp-app`, `x-cdp-sdk`); failures become typed
 * errors naming the request; retryable ones are retried under the retry policy, and a 401 renews a
 * token once. A request has one retry budget (`retry.maxAttempts`), getting its token included: a
 * retryable failure of the token endpoint is one failed attempt of the request.
 */
export class PlatformClient {
  readonly baseUrl: URL;
  /** Cluster root, where `/login/status` and `/logout` live (the base URL without `/api/...`). */
  readonly rootPath: string;
  /**
   * Requests sent (attempts, not calls), retries made and 429 answers, for the run's summary; and
   * for metrics the requests that reached the server, by the class of their answer (`2xx` to `5xx`,
   * or `none` when none came: a connection refused or reset, a timeout), and the bytes of the answers
   * read (their bodies as decoded, every status).
   */
  /**
   * The budget of response bytes held at once, for every request of this client (one client, one
   * budget: the process's, in the CLI). Each answer's bytes are counted as they arrive and as they
   * are decoded (readBody); a run's pages hold their share from before they are asked for (ChainCommon.budget).
   */
  readonly budget: ByteBudget;
  readonly stats = {
    requests: 0,
    retries: 0,
    throttled: 0,
    answers: {} as Partial<Record<StatusClass, number>>,
    responseBytes: 0,
  };

  private readonly transport: Transport;
  private readonly runtime: RetryRuntime;
  private readonly limiter: RequestLimiter;
  private readonly logger: Logger;
  private readonly identification: Record<string, string>;

  constructor(private readonly options: PlatformClientOptions) {
    this.baseUrl = new URL(options.baseUrl.replace(/\/+$/, ''));
    const setting = options.setting ?? 'source.baseUrl';
    assertSecureTransport(this.baseUrl, options.allowInsecureHttp ?? false, setting);
    this.rootPath = this.baseUrl.pathname.split('/api/')[0] ?? '';
    const appName = options.appName ?? DEFAULT_APP_NAME;
    const problem = appNameProblem(appName);
    if (problem !== undefined) throw new ConfigError(`appName: ${problem} (got ${JSON.stringify(appName)})`);
    this.identification = identificationHeaders(appName);
    const clock = options.clock ?? systemClock;
    const transport = { ...DEFAULT_TRANSPORT, ...options.transport };
    this.transport = new Transport(this.baseUrl.origin, transport, { setting, clock });
    this.logger = options.logger ?? silentLogger;
    this.budget = new ByteBudget(options.maxBufferedBytes ?? DEFAULT_BUFFERED_BYTES);
    const limiter = options.limiter ?? ((task) => task());
    this.limiter = typeof limiter === 'function' ? withoutFeedback(limiter) : limiter;
    const retry = { ...DEFAULT_RETRY, ...options.retry };
    this.runtime = {
      retry,
      clock,
      random: options.random ?? Math.random,
      onRetry: (error, delayMs, reason, attempt) => {
        this.stats.retries++;
        const target = { maxAttempts: retry.maxAttempts, basePath: this.baseUrl.pathname };
        logRetry(this.logger, error, { delayMs, reason, attempt }, target);
      },
    };
  }

  /** GET `{baseUrl}{path}?{params}` and parse the JSON answer. */
  get(path: string, params: Iterable<readonly [string, string]> = [], signal?: AbortSignal): Promise<JsonResponse> {
    return this.send(this.getRequest(path, params), interpretResponse, signal);
  }

  /**
   * POST `{baseUrl}{path}` with `body` as JSON and parse the JSON answer. The platform's POST reads
   * (`/list`, `/aggregate`) change nothing, so they are retried like a GET.
   */
  post(path: string, body: Readonly<Record<string, unknown>>, signal?: AbortSignal): Promise<JsonResponse> {
    return this.send(this.postRequest(path, body), interpretResponse, signal);
  }

  /**
   * `get` for a list page: the answer is scanned, not parsed, when it can be (interpretPage). With
   * `hold`, its bytes are counted in it, and stay so until the caller releases it.
   */
  getPage(
    path: string,
    params: Iterable<readonly [string, string]>,
    signal?: AbortSignal,
    hold?: BudgetHold,
  ): Promise<PageResponse> {
    return this.send({ ...this.getRequest(path, params), hold }, interpretPage, signal);
  }

  /** `post` for a list page (`POST /{resource}/list`): scanned, not parsed, when it can be. */
  postPage(
    path: string,
    body: Readonly<Record<string, unknown>>,
    signal?: AbortSignal,
    hold?: BudgetHold,
  ): Promise<PageResponse> {
    return this.send({ ...this.postRequest(path, body), hold }, interpretPage, signal);
  }

  /** `post` whose answer `read` reads from its bytes; parsed only when `read` leaves it (ReadResponse). */
  postRead<T>(
    path: string,
    body: Readonly<Record<string, unknown>>,
    read: (bytes: Buffer) => T | undefined,
    signal?: AbortSignal,
    hold?: BudgetHold,
  ): Promise<ReadResponse<T>> {
    return this.send({ ...this.postRequest(path, body), hold }, interpretRead(read), signal);
  }

  /**
   * `POST /{resource}/aggregate` with `{"aggregate":"count","filter":...}`: how many items match.
   * Approximate on the platform (it may lag recent writes): for progress, never for completeness.
   */
  async aggregateCount(resource: string, filter: AggregateFilter = {}, signal?: AbortSignal): Promise<number> {
    return parseAggregateCount(await this.post(`/${resource}/aggregate`, { aggregate: 'count', filter }, signal));
  }

  /**
   * `GET /login/status` at the cluster root: who the credential belongs to (API keys, cookies). Its
   * answer is a few hundred bytes, so it may be at most 1 MiB (SMALL_ANSWER_LIMIT).
   */
  async loginStatus(): Promise<LoginStatus> {
    const request: Outgoing = { method: 'GET', path: `${this.rootPath}/login/status`, limit: SMALL_ANSWER_LIMIT };
    return parseLoginStatus(await this.send(request, interpretResponse));
  }

  /** `GET /logout` at the cluster root: ends a cookie session. At most 1 MiB, as `/login/status`. */
  async logout(): Promise<LoginStatus> {
    const request: Outgoing = { method: 'GET', path: `${this.rootPath}/logout`, limit: SMALL_ANSWER_LIMIT };
    return parseLoginStatus(await this.send(request, interpretResponse));
  }

  /** The adaptive limiter's pace and concurrency, when it has one. */
  limiterState(): LimiterState | undefined {
    return this.limiter.state?.();
  }

  async close(): Promise<void> {
    await Promise.all([this.transport.close(), this.options.auth.close()]);
  }

  private countAnswer(cls: StatusClass): void {
    this.stats.answers[cls] = (this.stats.answers[cls] ?? 0) + 1;
  }

  private getRequest(path: string, params: Iterable<readonly [string, string]>): Outgoing {
    const search = new URLSearchParams();
    for (const [key, value] of params) search.append(key, value);
    const query = search.toString();
    return { method: 'GET', path: `${this.baseUrl.pathname}${path}${query === '' ? '' : `?${query}`}` };
  }

  private postRequest(path: string, body: Readonly<Record<string, unknown>>): Outgoing {
    return { method: 'POST', path: `${this.baseUrl.pathname}${path}`, body: JSON.stringify(body) };
  }

  private send<T>(
    request: Outgoing,
    interpret: (raw: RawResponse, ctx: RequestContext, credential: Credential) => T,
    signal?: AbortSignal,
  ): Promise<T> {
    const { auth } = this.options;
    return withRetries(async (attempts) => {
      const ctx: RequestContext = { method: request.method, path: request.path, attempts };
      // A token renewal that fails is this attempt's failure: one retry budget per request.
      const asThisAttempt = (error: unknown) => {
        throw error instanceof RequestError ? error.asAttempt(attempts) : error;
      };
      const hold = request.hold ?? this.budget.open();
      try {
        const credential = await auth.headers().catch(asThisAttempt);
        let raw = await this.exchange(request, hold, credential, ctx, signal);
        if (raw.status === 401 && (await auth.onUnauthorized(credential).catch(asThisAttempt))) {
          this.logger.info(
            { path: request.path, requestId: raw.requestId },
            'credential refused (401); renewed it, sending again',
          );
          hold.reset();
          raw = await this.exchange(request, hold, await auth.headers().catch(asThisAttempt), ctx, signal);
        }
        const answered = { ...ctx, ...(raw.requestId === undefined ? {} : { requestId: raw.requestId }) };
        return interpret(raw, answered, auth);
      } catch (error) {
        // The failed attempt's bytes go back; the hold keeps what it held before it.
        hold.reset();
        throw error;
      } finally {
        if (request.hold === undefined) hold.release();
      }
    }, this.runtime, signal);
  }

  private exchange(
    request: Outgoing,
    hold: BudgetHold,
    credential: Record<string, string>,
    ctx: RequestContext,
    signal?: AbortSignal,
  ): Promise<RawResponse> {
    this.stats.requests++;
    const headers: Record<string, string> = {
      'accept': 'application/json',
      'user-agent': USER_AGENT,
      ...this.identification,
      ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...credential,
    };
    return this.limiter.run(
      async (permit) => {
        if (signal?.aborted === true) throw new AbortedError('Stopped before sending', ctx);
        hold.sent();
        const raw = await this.transport
          .request(request.method, request.path, headers, ctx, request.body, signal, request.limit, hold)
          .catch((error: unknown) => {
            if (!(error instanceof AbortedError)) this.countAnswer('none');
            throw error;
          });
        this.countAnswer(statusClass(raw.status));
        this.stats.responseBytes += raw.body.length;
        if (raw.status === 429) this.stats.throttled++;
        this.limiter.onResponse(permit, raw.status, raw.status === 429 ? errorMessage(raw) : undefined);
        return raw;
      },
      { signal, abortError: () => new AbortedError('Stopped while waiting for a request slot', ctx) },
    );
  }
}
