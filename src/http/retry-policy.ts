import { HttpStatusError, NetworkError, type RequestError } from './errors.js';

export interface RetryOptions {
  /** Attempts in all, the first one included. Default 10. */
  maxAttempts: number;
  /** Backoff base in ms: attempt k waits up to baseDelayMs * 2^(k-1). Default 500. */
  baseDelayMs: number;
  /** Backoff cap in ms. Default 30,000. */
  maxDelayMs: number;
  /** Longest `Retry-After` honoured, in ms; a longer one is cut to this. Default 120,000. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryOptions = {
  maxAttempts: 10,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 120_000,
};

export type RetryDecision = { retry: false } | { retry: true; delayMs: number; reason: string };

/**
 * Whether to try a failed request again, and after how long. Retries what may pass on its own
 * (429, 500, 502, 503, 504, timeouts, network errors, bodies cut short), never another 4xx, and
 * at most `maxAttempts` attempts in all. The delay is the server's `Retry-After` when it sent one
 * (capped), otherwise full-jitter exponential backoff: uniform in [0, min(cap, base * 2^(attempt-1))),
 * cut to what is left of the first-contact budget of an origin never reached (`retryWithinMs`).
 */
export function decideRetry(
  error: RequestError,
  attempt: number,
  options: RetryOptions,
  env: { random: () => number; nowMs: number },
): RetryDecision {
  if (!error.retryable || attempt >= options.maxAttempts) return { retry: false };
  const reason = error instanceof HttpStatusError ? `HTTP ${error.status}` : error.code;
  const retryAfterMs =
    error instanceof HttpStatusError && error.retryAfter !== undefined
      ? parseRetryAfter(error.retryAfter, env.nowMs)
      : undefined;
  if (retryAfterMs !== undefined) {
    return { retry: true, delayMs: Math.min(retryAfterMs, options.maxRetryAfterMs), reason: `${reason}, Retry-After` };
  }
  const delayMs = backoffDelay(attempt, options, env.random);
  const within = error instanceof NetworkError ? error.retryWithinMs : undefined;
  return { retry: true, delayMs: within === undefined ? delayMs : Math.min(delayMs, within), reason };
}

/** Full jitter (AWS architecture blog, "Exponential Backoff and Jitter"). */
export function backoffDelay(attempt: number, options: RetryOptions, random: () => number): number {
  // The exponent is clamped so that base 0 at a huge attempt stays 0 rather than 0 * Infinity = NaN.
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.min(52, Math.max(0, attempt - 1)));
  return Math.floor(random() * ceiling);
}

/** `Retry-After` as delay-seconds or an HTTP date (RFC 9110 section 10.2.3), in ms from now. */
export function parseRetryAfter(value: string, nowMs: number): number | undefined {
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date) || !/[a-z]/i.test(text)) return undefined;
  return Math.max(0, date - nowMs);
}
