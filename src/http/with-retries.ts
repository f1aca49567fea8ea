import type { Clock } from '../util/clock.js';
import { RequestError } from './errors.js';
import { decideRetry, type RetryOptions } from './retry-policy.js';

export interface RetryRuntime {
  retry: RetryOptions;
  clock: Clock;
  /** Uniform in [0, 1); injected so tests can pin the jitter. */
  random: () => number;
  /** Called before each wait, for logging and counting. */
  onRetry: (error: RequestError, delayMs: number, reason: string) => void;
}

/**
 * Runs `attempt(n)` for n = 1, 2, ... until it succeeds or the retry policy gives up, waiting the
 * policy's delay between attempts. Only RequestErrors are retried; anything else is a bug and is
 * thrown at once.
 */
export async function withRetries<T>(attempt: (n: number) => Promise<T>, runtime: RetryRuntime): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (error) {
      if (!(error instanceof RequestError)) throw error;
      const decision = decideRetry(error, n, runtime.retry, { random: runtime.random, nowMs: runtime.clock.now() });
      if (!decision.retry) throw error;
      runtime.onRetry(error, decision.delayMs, decision.reason);
      await runtime.clock.sleep(decision.delayMs);
    }
  }
}
