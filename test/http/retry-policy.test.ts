import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AuthError,
  BadResponseError,
  CursorLoopError,
  HttpStatusError,
  InvalidJsonError,
  NetworkError,
  type RequestContext,
  type RequestError,
  TimeoutError,
  TlsError,
} from '../../src/http/errors.js';
import {
  backoffDelay,
  decideRetry,
  DEFAULT_RETRY,
  parseRetryAfter,
  type RetryOptions,
} from '../../src/http/retry-policy.js';

const CTX: RequestContext = { method: 'GET', path: '/api/v1/projects/p/events?limit=10', requestId: 'req-1', attempts: 1 };
const NOW_MS = Date.UTC(2026, 0, 1);
const HALF = { random: () => 0.5, nowMs: NOW_MS };

function status(code: number, retryAfter?: string): HttpStatusError {
  return new HttpStatusError(code, `platform says ${code}`, retryAfter, CTX);
}

/** Backoff ceiling of attempt k: min(cap, base * 2^(k-1)). */
function ceiling(attempt: number, options: RetryOptions): number {
  return Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (attempt - 1));
}

describe('which failures are retried', () => {
  const retryable: [string, RequestError][] = [
    ['HTTP 429', status(429)],
    ['HTTP 500', status(500)],
    ['HTTP 502', status(502)],
    ['HTTP 503', status(503)],
    ['HTTP 504', status(504)],
    ['NetworkError (reset)', new NetworkError('Connection failed: other side closed', CTX)],
    ['TimeoutError', new TimeoutError('Timed out', CTX)],
    ['InvalidJsonError (body cut short)', new InvalidJsonError('HTTP 200 with a body that is not JSON', CTX)],
  ];
  const never: [string, RequestError][] = [
    ['HTTP 400', status(400)],
    ['AuthError (401)', new AuthError('The platform refused the api-key credential: HTTP 401', CTX)],
    ['HTTP 401 as a status error', status(401)],
    ['HTTP 403', status(403)],
    ['HTTP 404', status(404)],
    ['HTTP 405', status(405)],
    ['HTTP 409', status(409)],
    ['HTTP 422', status(422)],
    ['HTTP 501', status(501)],
    ['BadResponseError', new BadResponseError("The page has no 'items'", CTX)],
    ['CursorLoopError', new CursorLoopError('cursor seen before', CTX)],
    ['TlsError', new TlsError('TLS verification failed', CTX)],
    ['NetworkError with retryable false (host not found)', new NetworkError('Host not found', CTX, { retryable: false })],
  ];

  it.each(retryable)('%s is retried on the first attempt, with a backoff delay', (_name, error) => {
    expect(error.retryable).toBe(true);
    const decision = decideRetry(error, 1, DEFAULT_RETRY, HALF);
    expect(decision).toEqual({ retry: true, delayMs: 250, reason: expect.any(String) });
  });

  it.each(never)('%s is never retried, whatever the attempt', (_name, error) => {
    expect(error.retryable).toBe(false);
    for (const attempt of [1, 2, 5, 9]) {
      expect(decideRetry(error, attempt, DEFAULT_RETRY, HALF)).toEqual({ retry: false });
    }
  });

  it('the reason names the HTTP status, or the error code for other failures', () => {
    expect(decideRetry(status(503), 1, DEFAULT_RETRY, HALF)).toMatchObject({ reason: 'HTTP 503' });
    expect(decideRetry(new TimeoutError('t', CTX), 1, DEFAULT_RETRY, HALF)).toMatchObject({ reason: 'E_TIMEOUT' });
    expect(decideRetry(new NetworkError('n', CTX), 1, DEFAULT_RETRY, HALF)).toMatchObject({ reason: 'E_NETWORK' });
  });
});

describe('attempt budget', () => {
  it('stops once attempt >= maxAttempts and retries below it (property over maxAttempts 1..20)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 40 }), (maxAttempts, attempt) => {
        const decision = decideRetry(status(503), attempt, { ...DEFAULT_RETRY, maxAttempts }, HALF);
        expect(decision.retry).toBe(attempt < maxAttempts);
      }),
    );
  });

  it('maxAttempts 1 means no retry at all', () => {
    expect(decideRetry(status(429), 1, { ...DEFAULT_RETRY, maxAttempts: 1 }, HALF)).toEqual({ retry: false });
  });
});

describe('full-jitter backoff', () => {
  it('defaults: base 500 ms, cap 30 s, 10 attempts, Retry-After cut at 120 s', () => {
    expect(DEFAULT_RETRY).toEqual({ maxAttempts: 10, baseDelayMs: 500, maxDelayMs: 30_000, maxRetryAfterMs: 120_000 });
  });

  const options = fc.record({
    maxAttempts: fc.constant(100),
    baseDelayMs: fc.integer({ min: 0, max: 10_000 }),
    maxDelayMs: fc.integer({ min: 0, max: 120_000 }),
    maxRetryAfterMs: fc.constant(120_000),
  });
  const unit = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

  it('0 <= delay < min(cap, base * 2^(attempt-1)), or 0 when that ceiling is 0, and never above the cap', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100 }), options, unit, (attempt, opts, r) => {
        const delay = backoffDelay(attempt, opts, () => r);
        const top = ceiling(attempt, opts);
        expect(Number.isInteger(delay)).toBe(true);
        expect(delay).toBeGreaterThanOrEqual(0);
        if (top === 0) expect(delay).toBe(0);
        else expect(delay).toBeLessThan(top);
        expect(delay).toBeLessThanOrEqual(opts.maxDelayMs);
      }),
    );
  });

  it('decideRetry uses the same bounds when the server sent no Retry-After', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 99 }), options, unit, (attempt, opts, r) => {
        const decision = decideRetry(status(502), attempt, opts, { random: () => r, nowMs: NOW_MS });
        if (!decision.retry) throw new Error('expected a retry');
        const top = ceiling(attempt, opts);
        expect(decision.delayMs).toBeGreaterThanOrEqual(0);
        expect(decision.delayMs).toBeLessThanOrEqual(Math.max(0, top - 1));
        expect(decision.reason).not.toContain('Retry-After');
      }),
    );
  });

  it('with random -> 1 the delay reaches the ceiling minus at most 1 ms', () => {
    const almostOne = () => 1 - Number.EPSILON;
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100 }), options, (attempt, opts) => {
        const top = ceiling(attempt, opts);
        const delay = backoffDelay(attempt, opts, almostOne);
        expect(delay).toBeGreaterThanOrEqual(Math.max(0, top - 1));
        expect(delay).toBeLessThanOrEqual(top);
      }),
    );
  });

  it('with random 0 the delay is 0', () => {
    expect(backoffDelay(7, DEFAULT_RETRY, () => 0)).toBe(0);
  });

  it('the ceiling doubles per attempt from the base and stops at the cap (defaults)', () => {
    const upTo = (attempt: number) => backoffDelay(attempt, DEFAULT_RETRY, () => 1 - Number.EPSILON) + 1;
    const ceilings = [500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000];
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9].map(upTo)).toEqual(ceilings);
  });

  it('stays a finite number within the cap for very high attempts, even with base 0', () => {
    for (const attempt of [1_000, 1_100, 5_000]) {
      for (const baseDelayMs of [0, 500]) {
        const delay = backoffDelay(attempt, { ...DEFAULT_RETRY, baseDelayMs }, () => 0.5);
        expect(Number.isFinite(delay), `attempt ${attempt}, base ${baseDelayMs}: ${delay}`).toBe(true);
        expect(delay).toBeLessThanOrEqual(DEFAULT_RETRY.maxDelayMs);
      }
    }
  });
});

describe('Retry-After', () => {
  it('delay-seconds: "7" is 7000 ms, surrounding blanks ignored', () => {
    expect(parseRetryAfter('7', NOW_MS)).toBe(7000);
    expect(parseRetryAfter(' 7 ', NOW_MS)).toBe(7000);
    expect(parseRetryAfter('0', NOW_MS)).toBe(0);
  });

  it('an HTTP date 5 s after now is 5000 ms; a past date is 0', () => {
    expect(parseRetryAfter(new Date(NOW_MS + 5000).toUTCString(), NOW_MS)).toBe(5000);
    expect(parseRetryAfter(new Date(NOW_MS - 60_000).toUTCString(), NOW_MS)).toBe(0);
  });

  it.each(['soon', '', '-5', '1.5', '7s', 'Tomorrowday'])('garbage %j is ignored', (value) => {
    expect(parseRetryAfter(value, NOW_MS)).toBeUndefined();
  });

  it('a garbage Retry-After falls back to the backoff delay', () => {
    const decision = decideRetry(status(429, 'soon'), 3, DEFAULT_RETRY, HALF);
    expect(decision).toEqual({ retry: true, delayMs: 1000, reason: 'HTTP 429' });
  });

  it('a valid Retry-After replaces the backoff and the reason mentions Retry-After', () => {
    expect(decideRetry(status(429, '7'), 1, DEFAULT_RETRY, HALF)).toEqual({
      retry: true,
      delayMs: 7000,
      reason: 'HTTP 429, Retry-After',
    });
    const dated = decideRetry(status(503, new Date(NOW_MS + 5000).toUTCString()), 2, DEFAULT_RETRY, HALF);
    expect(dated).toMatchObject({ retry: true, delayMs: 5000 });
    if (dated.retry) expect(dated.reason).toContain('Retry-After');
  });

  it('a Retry-After never makes a non-retryable status retryable, nor extends the attempt budget', () => {
    expect(decideRetry(status(400, '1'), 1, DEFAULT_RETRY, HALF)).toEqual({ retry: false });
    expect(decideRetry(status(429, '1'), 10, DEFAULT_RETRY, HALF)).toEqual({ retry: false });
  });

  it('is capped at maxRetryAfterMs (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: 0, max: 600_000 }),
        (seconds, maxRetryAfterMs) => {
          const decision = decideRetry(status(429, String(seconds)), 1, { ...DEFAULT_RETRY, maxRetryAfterMs }, HALF);
          expect(decision).toEqual({
            retry: true,
            delayMs: Math.min(seconds * 1000, maxRetryAfterMs),
            reason: 'HTTP 429, Retry-After',
          });
        },
      ),
    );
  });

  it('a date Retry-After is capped at maxRetryAfterMs too', () => {
    const far = new Date(NOW_MS + 3_600_000).toUTCString();
    expect(decideRetry(status(503, far), 1, DEFAULT_RETRY, HALF)).toMatchObject({ retry: true, delayMs: 120_000 });
  });
});
