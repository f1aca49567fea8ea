import type { Logger } from '../log.js';
import { HttpStatusError, InvalidJsonError, NetworkError, type RequestError, TimeoutError } from './errors.js';
import { UNREACHABLE } from './first-contact.js';

/** Where a retried request went, as a person reads it in one line. */
export interface RetryTarget {
  /** Attempts in all (`retry.maxAttempts`), for `attempt k/max`. */
  maxAttempts: number;
  /** Stripped from the front of paths (the base URL's path), so that `/events` shows, not `/api/v1/...`. */
  basePath?: string;
  /** Put before the path when the error names no origin of its own. Default none. */
  origin?: string;
}

/**
 * Logs one retry as a warning whose message says everything in one short line, e.g.
 * `GET /events partition 3/10: HTTP 503 Service unavailable; attempt 3/10 in 1.2 s (request id abc-1)`:
 * the request (without its query but the partition), what failed, the next attempt of how many,
 * the wait and the request id. The record keeps the same facts as fields for JSON logs.
 */
export function logRetry(
  logger: Logger,
  error: RequestError,
  retry: { delayMs: number; reason: string; attempt: number },
  target: RetryTarget,
): void {
  const { delayMs, reason, attempt } = retry;
  logger.warn(
    {
      method: error.method,
      path: error.path,
      requestId: error.requestId,
      attempt,
      maxAttempts: target.maxAttempts,
      delayMs,
      reason,
    },
    retryMessage(error, delayMs, target, attempt),
  );
}

/**
 * `failed` is the attempt that failed, as the retry loop counts it (the next is `failed + 1`);
 * default the error's own count.
 */
export function retryMessage(
  error: RequestError,
  delayMs: number,
  target: RetryTarget,
  failed = error.attempts ?? 1,
): string {
  const where = `${error.method} ${error.origin ?? target.origin ?? ''}${shownPath(error.path, target.basePath)}`;
  const next = `attempt ${failed + 1}/${target.maxAttempts} in ${seconds(delayMs)} s`;
  const id = error.requestId === undefined ? '' : ` (request id ${error.requestId})`;
  return `${where}: ${failureSummary(error)}; ${next}${id}`;
}

/** The path relative to `basePath`, without its query except `partition`: `/events partition 3/10`. */
export function shownPath(path: string, basePath = ''): string {
  const [pathname = '', query = ''] = path.split('?', 2);
  const relative = basePath !== '' && pathname.startsWith(`${basePath}/`) ? pathname.slice(basePath.length) : pathname;
  const partition = new URLSearchParams(query).get('partition');
  return partition === null ? relative : `${relative} partition ${partition}`;
}

/** What failed, short: `HTTP 503 Service unavailable`, `connection failed (ECONNRESET)`, ... */
export function failureSummary(error: RequestError): string {
  if (error instanceof HttpStatusError) {
    return error.platformMessage === undefined ? `HTTP ${error.status}` : `HTTP ${error.status} ${short(error.platformMessage)}`;
  }
  const code = causeCode(error);
  if (error instanceof TimeoutError) return `timed out (${code ?? error.code})`;
  if (error instanceof InvalidJsonError) return `body not JSON (${error.code})`;
  if (error instanceof NetworkError) {
    const unreachable = code === undefined ? undefined : UNREACHABLE[code];
    return `${unreachable?.what ?? 'connection failed'} (${code ?? error.code})`;
  }
  return error.code;
}

/** The code of what undici, the socket or zlib threw, e.g. `ECONNRESET`. */
export function causeCode(error: Error): string | undefined {
  const code = (error.cause as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The first sentence of a long platform message, at most 100 characters. */
function short(message: string): string {
  const first = message.length > 60 ? (message.split(/(?<=\.)\s/)[0] ?? message) : message;
  return first.length > 100 ? `${first.slice(0, 97)}...` : first.replace(/\.$/, '');
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(ms < 100 ? 2 : 1);
}
