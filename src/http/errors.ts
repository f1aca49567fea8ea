import { BulkExtractError } from '../errors.js';

/** Where a failed request went: enough to find it in the platform's logs, never a credential. */
export interface RequestContext {
  method: string;
  /** Path and query, e.g. `/api/v1/projects/acme/events?limit=1000&partition=1/10`. */
  path: string;
  /** The platform's `X-Request-Id`, when a response arrived. */
  requestId?: string;
  /** Attempts made, the failed one included. */
  attempts?: number;
  /**
   * The origin, for a request that did not go to the platform (the token URL's): retry warnings
   * show it before the path.
   */
  origin?: string;
}

function where(ctx: RequestContext): string {
  const parts = [`${ctx.method} ${ctx.path}`];
  if (ctx.requestId !== undefined) parts.push(`request id ${ctx.requestId}`);
  if (ctx.attempts !== undefined) parts.push(`after ${ctx.attempts} attempt${ctx.attempts === 1 ? '' : 's'}`);
  return parts.join(', ');
}

/** A request that failed; `retryable` says whether trying again may help. */
export abstract class RequestError extends BulkExtractError {
  abstract readonly retryable: boolean;
  readonly method: string;
  readonly path: string;
  readonly requestId: string | undefined;
  readonly attempts: number | undefined;
  /** Set for a request that did not go to the platform: the token URL's origin. */
  readonly origin: string | undefined;
  /** What went wrong, without where: to say it again of another attempt (asAttempt), or after a stop. */
  declare readonly what: string;

  /** `what` says what went wrong; the message appends where: method, path, request id, attempts. */
  constructor(what: string, ctx: RequestContext, options?: { cause?: unknown }) {
    super(`${what} (${where(ctx)})`, options);
    this.method = ctx.method;
    this.path = ctx.path;
    this.requestId = ctx.requestId;
    this.attempts = ctx.attempts;
    this.origin = ctx.origin;
    // Not enumerable: it repeats the message, and would in every JSON form and log record.
    Object.defineProperty(this, 'what', { value: what, enumerable: false });
  }

  /**
   * The same failure as attempt `attempts` of a request, its message saying so: a token renewal
   * fails every request waiting for it, each at its own attempt. `this` when the count is right.
   */
  asAttempt(attempts: number): this {
    if (this.attempts === attempts) return this;
    const copy = Object.create(Object.getPrototypeOf(this) as object) as this;
    Object.defineProperties(copy, Object.getOwnPropertyDescriptors(this));
    const ctx: RequestContext = {
      method: this.method,
      path: this.path,
      attempts,
      ...(this.requestId === undefined ? {} : { requestId: this.requestId }),
    };
    const message = `${this.what} (${where(ctx)})`;
    Object.defineProperty(copy, 'attempts', { value: attempts, enumerable: true });
    Object.defineProperty(copy, 'message', { value: message, enumerable: false, writable: true, configurable: true });
    // A data property: on Node 24 (not on 20) an error's own `stack` is an accessor that answers
    // only for the error it was made on, so a copy of it reads undefined on the copy.
    if (this.stack !== undefined) {
      Object.defineProperty(copy, 'stack', { value: this.stack.replace(this.message, message), writable: true, configurable: true });
    }
    return copy;
  }
}

/** The platform answered with an error status. */
export class HttpStatusError extends RequestError {
  readonly code = 'E_HTTP_STATUS';
  readonly status: number;
  /** `error.message` of the platform's error body, when it had one. */
  readonly platformMessage: string | undefined;
  readonly retryAfter: string | undefined;
  /**
   * `error.missing` of the platform's error body, as sent: the identifiers a request named that
   * the platform does not know (`{id}`, `{externalId}`), when it listed them.
   */
  readonly missing: readonly unknown[] | undefined;

  /** `answeredBy` names a server other than the platform: `The identity provider at https://login.example.com`. */
  constructor(
    status: number,
    platformMessage: string | undefined,
    retryAfter: string | undefined,
    ctx: RequestContext,
    answeredBy?: string,
    missing?: readonly unknown[],
  ) {
    const what = `HTTP ${status}${platformMessage === undefined ? '' : `: ${platformMessage}`}`;
    super(answeredBy === undefined ? what : `${answeredBy} answered ${what}`, ctx);
    this.status = status;
    this.platformMessage = platformMessage;
    this.retryAfter = retryAfter;
    this.missing = missing;
  }

  get retryable(): boolean {
    return RETRYABLE_STATUSES.has(this.status);
  }
}

export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/** The credential was refused (401, or 403 on the token endpoint) and a refresh could not fix it. */
export class AuthError extends RequestError {
  readonly code = 'E_AUTH';
  readonly retryable = false;
}

/**
 * The platform refused a request for good, for a reason that is not the credential: the project
 * does not exist, the credential lacks a capability, or nothing is at the path (404). Found on a
 * run's first contact (access-refused.ts), it refuses the run before anything is written.
 */
export class AccessError extends RequestError {
  readonly code = 'E_ACCESS';
  readonly retryable = false;
}

/**
 * The platform refused a stream's query itself (400 on a chain's first request, before any cursor):
 * a filter, a series or a setting it will never accept. It does not pass by itself: exit 2, fix the
 * job file. The message names the stream, the platform's words and what to change.
 */
export class QueryRefusedError extends RequestError {
  readonly code = 'E_QUERY_REFUSED';
  readonly retryable = false;
  constructor(what: string, ctx: RequestContext, readonly stream: string, options?: { cause?: unknown }) {
    super(what, ctx, options);
  }
}

/**
 * The connection failed or broke: reset, refused, closed mid-body, body shorter than announced.
 * Retryable, except a host name that does not resolve, and an origin never reached once its
 * first-contact budget is spent (first-contact.ts).
 */
export class NetworkError extends RequestError {
  readonly code = 'E_NETWORK';
  readonly retryable: boolean;
  /** Set for an origin not reached yet: retry only if the next attempt starts within this many ms. */
  readonly retryWithinMs: number | undefined;

  constructor(
    what: string,
    ctx: RequestContext,
    options: { cause?: unknown; retryable?: boolean; retryWithinMs?: number } = {},
  ) {
    super(what, ctx, { cause: options.cause });
    this.retryable = options.retryable ?? true;
    this.retryWithinMs = options.retryWithinMs;
  }
}

/** The server's certificate did not verify; retrying cannot help. */
export class TlsError extends RequestError {
  readonly code = 'E_TLS';
  readonly retryable = false;
}

/** Connecting, waiting for headers, or waiting for body data took longer than its timeout. */
export class TimeoutError extends RequestError {
  readonly code = 'E_TIMEOUT';
  readonly retryable = true;
}

/**
 * A 2xx whose body is not JSON: usually cut short on the way (a proxy, a broken connection), so it
 * is retried; it fails after the last attempt.
 */
export class InvalidJsonError extends RequestError {
  readonly code = 'E_INVALID_JSON';
  readonly retryable = true;
}

/** A response that is JSON but breaks the platform's contract (wrong shape, cursor loop, huge page). */
export class BadResponseError extends RequestError {
  readonly code = 'E_BAD_RESPONSE';
  readonly retryable = false;
}

/**
 * A response body larger than its limit once decoded (`source.maxResponseBytes`, or the fixed limit
 * of an endpoint whose answers are small): reading it on would only exhaust memory. Not retried, as
 * the same page would be as large again.
 */
export class ResponseTooLargeError extends RequestError {
  readonly code = 'E_RESPONSE_TOO_LARGE';
  readonly retryable = false;
  /** The limit it passed, in bytes. */
  readonly limitBytes: number;

  constructor(what: string, ctx: RequestContext, options: { limitBytes: number; cause?: unknown }) {
    super(what, ctx, { cause: options.cause });
    this.limitBytes = options.limitBytes;
  }
}

/**
 * The responses in flight needed more than the process's budget of response bytes at once
 * (`source.maxBufferedBytes`) and could not all go on: this one gave its bytes back, or waited for
 * room until its deadline. Retried: the others finish meanwhile.
 */
export class MemoryBudgetError extends RequestError {
  readonly code = 'E_MEMORY_BUDGET';
  readonly retryable = true;
}

/** The chain handed back a cursor it had handed out before: following it would never end. */
export class CursorLoopError extends RequestError {
  readonly code = 'E_CURSOR_LOOP';
  readonly retryable = false;
}

/** The chain answered a page with the same items as an earlier page: following it would repeat rows. */
export class RepeatedPageError extends RequestError {
  readonly code = 'E_REPEATED_PAGE';
  readonly retryable = false;
}

/** The caller aborted the request (SIGINT/SIGTERM): not a failure of the platform, never retried. */
export class AbortedError extends RequestError {
  readonly code = 'E_ABORTED';
  readonly retryable = false;
}

/** Credentials would travel in clear text to a host that is not this machine. */
export class InsecureTransportError extends BulkExtractError {
  readonly code = 'E_INSECURE_TRANSPORT';
}
