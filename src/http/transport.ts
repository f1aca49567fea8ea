import type { IncomingHttpHeaders } from 'node:http';
import { Pool } from 'undici';
import { type Clock, systemClock } from '../util/clock.js';
import {
  AbortedError,
  BadResponseError,
  InsecureTransportError,
  MemoryBudgetError,
  NetworkError,
  type RequestContext,
  RequestError,
  TimeoutError,
  TlsError,
} from './errors.js';
import { type ContactDecision, type ContactState, decideFirstContact, UNREACHABLE } from './first-contact.js';
import { type BodyFraming, type BodyRoom, readBody, type ResponseLimit } from './read-body.js';
import { startDeadline } from './request-deadline.js';

export { type BodyRoom, type ResponseLimit, SMALL_ANSWER_LIMIT } from './read-body.js';

export interface TransportOptions {
  /** Most connections open to the origin at once. Default 32. */
  connections: number;
  /** Time to establish a connection (TCP and TLS), ms. Default 10,000. */
  connectTimeoutMs: number;
  /** Time from sending a request to receiving the response headers, ms. Default 60,000. */
  headersTimeoutMs: number;
  /** Longest pause between two chunks of a response body, ms. Default 60,000. */
  bodyTimeoutMs: number;
  /**
   * Longest time from sending a request to the last byte of its body (decoded), ms: a body that
   * trickles in, each pause shorter than `bodyTimeoutMs`, would otherwise hold the request forever.
   * Default 300,000 (5 minutes).
   */
  requestTimeoutMs: number;
  /**
   * Most bytes of one response body once decoded (gzip and deflate): a larger one is cut off as it
   * arrives and fails with E_RESPONSE_TOO_LARGE (`source.maxResponseBytes`). Default 256 MiB.
   */
  maxResponseBytes: number;
  /** PEM certificates to trust in addition to the system's (a private CA). TLS verification stays on. */
  ca?: string | undefined;
}

export const DEFAULT_TRANSPORT: TransportOptions = {
  connections: 32,
  connectTimeoutMs: 10_000,
  headersTimeoutMs: 60_000,
  bodyTimeoutMs: 60_000,
  requestTimeoutMs: 300_000,
  // Twice a page of 1000 items with 128 KB of metadata each, the largest the platform serves.
  maxResponseBytes: 256 * 1024 * 1024,
};

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body, already decompressed when the server compressed it. */
  body: Buffer;
  requestId: string | undefined;
}

/** Where an origin came from, for errors that tell what to check; and the clock of its first-contact budget. */
export interface TransportTarget {
  /** The config key that holds the origin's URL: `source.baseUrl`, `source.auth.tokenUrl`. */
  setting: string;
  clock: Clock;
}

/**
 * Keep-alive connections to one origin. gzip and deflate bodies are decoded on zlib's thread pool,
 * never past the response limit (read-body.ts); failures come out as typed errors: a body cut short
 * fails to decode and is a NetworkError. Until the origin has answered once, failing to reach it is
 * retried only within the first-contact budget.
 */
export class Transport {
  private readonly pool: Pool;
  private contact: ContactState | undefined;
  private readonly limit: ResponseLimit;
  private readonly requestTimeoutMs: number;

  constructor(
    readonly origin: string,
    options: TransportOptions,
    private readonly target: TransportTarget = { setting: 'source.baseUrl', clock: systemClock },
  ) {
    this.limit = { bytes: options.maxResponseBytes, setting: 'source.maxResponseBytes' };
    this.requestTimeoutMs = options.requestTimeoutMs;
    this.pool = new Pool(origin, {
      connections: options.connections,
      headersTimeout: options.headersTimeoutMs,
      bodyTimeout: options.bodyTimeoutMs,
      connect: { timeout: options.connectTimeoutMs, ...(options.ca === undefined ? {} : { ca: options.ca }) },
    });
  }

  /**
   * `limit` caps the decoded body; default `maxResponseBytes` (`source.maxResponseBytes`). `room`,
   * when given, counts the body's bytes as they arrive and are decoded (the process's budget: readBody).
   */
  async request(
    method: 'GET' | 'POST',
    path: string,
    headers: Record<string, string>,
    ctx: RequestContext,
    body?: string,
    signal?: AbortSignal,
    limit: ResponseLimit = this.limit,
    room?: BodyRoom,
  ): Promise<RawResponse> {
    const contact = (this.contact ??= { answered: false, firstAttemptAtMs: this.target.clock.now() });
    const deadline = startDeadline(this.requestTimeoutMs, signal);
    let answered = ctx;
    try {
      const response = await this.pool.request({
        origin: this.origin,
        method,
        path,
        headers: { ...headers, 'accept-encoding': 'gzip, deflate' },
        ...(body === undefined ? {} : { body }),
        signal: deadline.signal,
      });
      contact.answered = true;
      const requestId = firstHeader(response.headers, 'x-request-id');
      if (requestId !== undefined) answered = { ...ctx, requestId };
      const bytes = await readBody(response.body, framing(response.headers), limit, answered, room, deadline.signal);
      return { status: response.statusCode, headers: response.headers, body: bytes, requestId };
    } catch (error) {
      if (signal?.aborted === true) throw new AbortedError('Stopped before the answer arrived', ctx, { cause: error });
      if (deadline.expired() && (error as { waitingForRoom?: unknown } | null)?.waitingForRoom === true) {
        throw new MemoryBudgetError(
          'Waited for room in the memory budget (source.maxBufferedBytes) until the request\'s deadline, ' +
          `${seconds(this.requestTimeoutMs)} s (source.timeouts.requestMs): the responses held did not give it back. ` +
          'Raise source.maxBufferedBytes, or lower source.concurrency',
          answered,
          { cause: error },
        );
      }
      if (deadline.expired()) {
        throw new TimeoutError(
          `No complete answer within ${seconds(this.requestTimeoutMs)} s (source.timeouts.requestMs): the server ` +
          'answered too slowly or sent a body without end; raise source.timeouts.requestMs if answers this slow are expected',
          answered,
          { cause: error },
        );
      }
      if (error instanceof RequestError) throw error;
      const code = (error as { code?: unknown } | null)?.code;
      const decision = decideFirstContact(typeof code === 'string' ? code : undefined, contact, this.target.clock.now());
      throw classifyTransportError(error, ctx, { url: `${this.origin}${path}`, setting: this.target.setting, decision });
    } finally {
      deadline.clear();
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** `ms` in seconds, one decimal at most: 300000 is "300", 300 is "0.3". */
function seconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}

function framing(headers: IncomingHttpHeaders): BodyFraming {
  const length = firstHeader(headers, 'content-length');
  return {
    encoding: firstHeader(headers, 'content-encoding')?.toLowerCase(),
    length: length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined,
  };
}

const TLS_CODE = /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ERR_TLS|ERR_SSL/;
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** The request that failed: its full URL, the setting it came from, and the first-contact decision. */
export interface FailedTarget {
  url: string;
  setting: string;
  decision: ContactDecision;
}

/**
 * Maps what undici, the socket or zlib threw onto the typed errors the retry policy knows. An origin
 * not reached yet gets a message naming the URL and the setting to check, retryable while its
 * first-contact budget lasts.
 */
export function classifyTransportError(
  error: unknown,
  ctx: RequestContext,
  target: FailedTarget = { url: ctx.path, setting: 'source.baseUrl', decision: { firstContact: false } },
): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return error;
  const unreachable = UNREACHABLE[code];
  if (unreachable !== undefined && target.decision.firstContact) {
    const { retryWithinMs } = target.decision;
    return new NetworkError(
      `Cannot reach ${target.url}: ${unreachable.what} (${code}), ${unreachable.hint}. Check ${target.setting}`,
      ctx,
      { cause: error, retryable: retryWithinMs > 0, retryWithinMs },
    );
  }
  const detail = `${(error as Error).message} [${code}]`;
  if (TIMEOUT_CODES.has(code)) return new TimeoutError(`Timed out: ${detail}`, ctx, { cause: error });
  if (TLS_CODE.test(code)) {
    return new TlsError(
      `TLS verification failed: ${detail}. If the server uses a private CA, set source.caFile to its PEM file`,
      ctx,
      { cause: error },
    );
  }
  if (code === 'E_UNSUPPORTED_ENCODING') return new BadResponseError(detail, ctx, { cause: error });
  if (code === 'ENOTFOUND') {
    return new NetworkError(`Host not found: ${detail}. Check ${target.setting}`, ctx, { cause: error, retryable: false });
  }
  if (code.startsWith('UND_ERR_') || code.startsWith('Z_') || /^E[A-Z]+$/.test(code)) {
    return new NetworkError(`Connection failed: ${detail}`, ctx, { cause: error });
  }
  return error;
}

/** The first value of a response header, or undefined. */
export function firstHeader(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value: unknown = headers[name];
  if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** 127.0.0.0/8, ::1 and localhost: traffic that never leaves this machine. */
export function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Refuses plain http:// to another machine unless the user opted in. */
export function assertSecureTransport(url: URL, allowInsecureHttp: boolean, setting: string): void {
  if (url.protocol === 'https:' || allowInsecureHttp || isLoopback(url.hostname)) return;
  throw new InsecureTransportError(
    `Refusing to send credentials over plain http:// to ${url.host} (${setting}): use https://, or set source.allowInsecureHttp: true if this network is trusted.`,
  );
}
