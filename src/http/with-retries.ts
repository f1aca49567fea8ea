import type { Clock } from '../util/clock.js';
import { AbortedError, RequestError } from './errors.js';
import { decideRetry, type RetryOptions } from './retry-policy.js';

export interface RetryRuntime {
  retry: RetryOptions;
  clock: Clock;
  /** Uniform in [0, 1); injected so tests can pin the jitter. */
  random: () => number;
  /**
   * Called before each wait, for logging and counting. `attempt` is the attempt that failed, counted
   * here (never by the error, which may come from a token renewal shared with other requests); the
   * next one, `attempt + 1`, is at most `retry.maxAttempts`.
   */
  onRetry: (error: RequestError, delayMs: number, reason: string, attempt: number) => void;
}

/**
 * Runs `attempt(n)` for n = 1, 2, ... until it succeeds or the retry policy gives up, waiting the
 * policy's delay between attempts. Only RequestErrors are retried; anything else is a bug and is
 * thrown at once.
 */
export async function withRetries<T>(
  attempt: (n: number) => Promise<T>,
  runtime: RetryRuntime,
  signal?: AbortSignal,
): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (error) {
      if (!(error instanceof RequestError)) throw error;
      const decision = decideRetry(error, n, runtime.retry, { random: runtime.random, nowMs: runtime.clock.now() });
      if (!decision.retry) throw error;
      // Stopping (SIGINT/SIGTERM, or the partition's lanes cancelled): a failure the policy would
      // retry is not the partition's failure, only an attempt the stop cut short.
      if (signal?.aborted === true) throw stoppedAfter(error);
      runtime.onRetry(error, decision.delayMs, decision.reason, n);
      await sleepUnlessAborted(runtime.clock, decision.delayMs, signal, error);
    }
  }
}

/** The backoff wait, cut short by an abort (which ends the retries with an AbortedError). */
async function sleepUnlessAborted(clock: Clock, ms: number, signal: AbortSignal | undefined, last: RequestError) {
  if (signal === undefined) return clock.sleep(ms);
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(stoppedAfter(last));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([clock.sleep(ms, signal), aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** The end of the retries of a request whose last failure would have been retried had the run not been stopped. */
function stoppedAfter(last: RequestError): AbortedError {
  return new AbortedError(`Stopped while waiting to retry after: ${last.what}`, {
    method: last.method,
    path: last.path,
    ...(last.requestId === undefined ? {} : { requestId: last.requestId }),
    ...(last.attempts === undefined ? {} : { attempts: last.attempts }),
  });
}
