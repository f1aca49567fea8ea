import { setTimeout as sleepFor } from 'node:timers/promises';
import type { Logger } from '../log.js';
import { errorCode, isTransient } from './azure-errors.js';

/** How an Azure request that may pass (throttling, a 5xx, a broken connection) is sent again. */
export interface AzureRetryOptions {
  /** Attempts in all, the first included. Default 6. */
  maxAttempts?: number | undefined;
  /** Backoff base in ms: attempt k waits up to baseDelayMs * 2^(k-1). Default 500. */
  baseDelayMs?: number | undefined;
  /** Backoff cap in ms. Default 30,000. */
  maxDelayMs?: number | undefined;
  /** Tests replace the waiting. */
  sleep?: ((ms: number) => Promise<void>) | undefined;
  random?: (() => number) | undefined;
}

/**
 * The wait before attempt `attempt + 1`, or undefined for no more attempts: full-jitter exponential
 * backoff, uniform in [0, min(cap, base * 2^(attempt-1))), for errors that may pass.
 */
export function retryDelay(
  error: unknown,
  attempt: number,
  options: AzureRetryOptions,
  random: () => number,
): number | undefined {
  const { maxAttempts = 6, baseDelayMs = 500, maxDelayMs = 30_000 } = options;
  if (!isTransient(error) || attempt >= maxAttempts) return undefined;
  return Math.floor(random() * Math.min(maxDelayMs, baseDelayMs * 2 ** Math.min(52, attempt - 1)));
}

/**
 * Sends `send` until it succeeds, fails for good, or its attempts are spent (then its last error
 * is thrown). Only idempotent requests come here: every write of the store names its blob and
 * writes it whole, so sending it twice leaves what sending it once would.
 */
export async function withRetries<T>(
  send: () => Promise<T>,
  options: AzureRetryOptions,
  log: Logger,
  fields: Record<string, string>,
): Promise<T> {
  const sleep = options.sleep ?? ((ms: number) => sleepFor(ms));
  const random = options.random ?? Math.random;
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (error) {
      const delayMs = retryDelay(error, attempt, options, random);
      if (delayMs === undefined) throw error;
      log.debug({ ...fields, azureCode: errorCode(error), attempt, delayMs }, 'Azure request retried');
      await sleep(delayMs);
    }
  }
}
