import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AbortedError, HttpStatusError, NetworkError, type RequestError } from '../../src/http/errors.js';
import { DEFAULT_RETRY } from '../../src/http/retry-policy.js';
import { retryMessage } from '../../src/http/retry-warning.js';
import { withRetries } from '../../src/http/with-retries.js';
import { createFakeClock } from '../support/fake-clock.js';

describe('withRetries counts the attempts itself', () => {
  it('the attempt it reports is its own count, whatever the error says; the next never passes maxAttempts', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.integer({ min: 1, max: 100 }), { minLength: 1, maxLength: 15 }),
        async (maxAttempts, claimed) => {
          const reported: number[] = [];
          const messages: string[] = [];
          let calls = 0;
          const runtime = {
            retry: { ...DEFAULT_RETRY, maxAttempts },
            clock: createFakeClock(),
            random: () => 0.5,
            onRetry: (error: RequestError, delayMs: number, _reason: string, attempt: number) => {
              reported.push(attempt);
              messages.push(retryMessage(error, delayMs, { maxAttempts }, attempt));
            },
          };
          // Each failure claims an attempt count of its own, as a shared token renewal's may.
          const failure = (n: number) => {
            const attempts = claimed[n % claimed.length] ?? 1;
            return new HttpStatusError(500, 'oops', undefined, { method: 'POST', path: '/oauth2/token', attempts });
          };
          const attempt = async () => Promise.reject(failure(calls++));
          await expect(withRetries(attempt, runtime)).rejects.toThrow(HttpStatusError);
          expect(calls).toBe(maxAttempts);
          expect(reported).toEqual(Array.from({ length: maxAttempts - 1 }, (_, i) => i + 1));
          for (const message of messages) {
            const next = Number(/attempt (\d+)\//.exec(message)?.[1]);
            expect(next).toBeLessThanOrEqual(maxAttempts);
          }
        },
      ),
    );
  });
});

describe('withRetries when the run is stopping', () => {
  const runtime = { retry: DEFAULT_RETRY, clock: createFakeClock(), random: () => 0.5, onRetry: () => {} };
  const throttled = () => new HttpStatusError(429, 'too many', undefined, { method: 'GET', path: '/events', attempts: 1 });

  it('a failure it would retry, met once the stop came: an AbortedError (the run is interrupted), not the failure', async () => {
    const stop = new AbortController();
    let calls = 0;
    const attempt = async () => {
      calls++;
      stop.abort();
      return Promise.reject(throttled());
    };
    const error: unknown = await withRetries(attempt, runtime, stop.signal).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortedError);
    expect(error).toMatchObject({ code: 'E_ABORTED', method: 'GET', path: '/events' });
    expect((error as Error).message).toBe('Stopped while waiting to retry after: HTTP 429: too many (GET /events, after 1 attempt)');
    expect(calls).toBe(1);
  });

  it('a failure it would not retry stays that failure, stop or no stop', async () => {
    const stop = new AbortController();
    stop.abort();
    const refused = new HttpStatusError(400, 'bad filter', undefined, { method: 'GET', path: '/events', attempts: 1 });
    await expect(withRetries(async () => Promise.reject(refused), runtime, stop.signal)).rejects.toBe(refused);
  });
});

describe('RequestError.asAttempt', () => {
  const ctx = { method: 'POST', path: '/oauth2/token', requestId: 'idp-1', origin: 'https://login.example.com' };

  it('a copy of the same class and fields whose message and attempts say the new count', () => {
    const error = new HttpStatusError(503, 'busy', '3', ctx, 'The identity provider at https://login.example.com');
    const third = error.asAttempt(3);
    expect(third).toBeInstanceOf(HttpStatusError);
    expect(third).not.toBe(error);
    expect(third).toMatchObject({ code: 'E_HTTP_STATUS', status: 503, retryAfter: '3', retryable: true, attempts: 3 });
    expect(third.origin).toBe('https://login.example.com');
    expect(third.message).toBe(
      'The identity provider at https://login.example.com answered HTTP 503: busy (POST /oauth2/token, request id idp-1, after 3 attempts)',
    );
    expect(third.stack).toContain(third.message);
    expect(error.attempts).toBeUndefined();
    expect(error.message).toBe('The identity provider at https://login.example.com answered HTTP 503: busy (POST /oauth2/token, request id idp-1)');
  });

  it('keeps what decides a retry (a first-contact budget) and the cause; the same error when the count is right', () => {
    const cause = Object.assign(new Error('refused'), { code: 'ECONNREFUSED' });
    const error = new NetworkError('Cannot reach it', { ...ctx, attempts: 2 }, { cause, retryable: true, retryWithinMs: 700 });
    expect(error.asAttempt(2)).toBe(error);
    const fourth = error.asAttempt(4);
    expect(fourth).toMatchObject({ retryable: true, retryWithinMs: 700, attempts: 4, cause });
    expect(fourth.message).toBe('Cannot reach it (POST /oauth2/token, request id idp-1, after 4 attempts)');
    expect(JSON.stringify(fourth)).not.toContain('"what"');
  });
});
