import type { Clock } from '../util/clock.js';
import type { FaultOptions } from './options.js';
import { hash3, hashString, Rng } from './random.js';

export type StatusFault = '429' | '429-retry-after' | '500' | '502' | '503' | '504';
export type BodyFault = 'reset' | 'truncate' | 'malformed';
export type FaultKind = StatusFault | BodyFault;

/** What happens to one list request, decided before it is served. */
export interface FaultPlan {
  fault: FaultKind | undefined;
  /** Items to serve at most on this page when a short page was drawn, else undefined. */
  shortLimit: number | undefined;
  delayMs: number;
}

/** Picks at most one fault for a uniform draw in [0, 1), by the cumulative rates. */
export function decideFault(draw: number, f: FaultOptions): FaultKind | undefined {
  const quarter = f.rate5xx / 4;
  const table: [FaultKind, number][] = [
    ['429', f.rate429],
    ['429-retry-after', f.rate429RetryAfter],
    ['500', f.rate500 + quarter],
    ['502', f.rate502 + quarter],
    ['503', f.rate503 + quarter],
    ['504', f.rate504 + quarter],
    ['reset', f.resetRate],
    ['truncate', f.truncateRate],
    ['malformed', f.malformedRate],
  ];
  let bound = 0;
  for (const [kind, share] of table) {
    bound += share;
    if (draw < bound) return kind;
  }
  return undefined;
}

/**
 * Draws fault plans deterministically: the k-th time a given request (same parameters, same cursor
 * position) arrives, it meets the same fate in every run with the same seed, whatever order
 * concurrent requests arrive in.
 */
export class FaultPlanner {
  private readonly seen = new Map<string, number>();
  private readonly rng = new Rng();

  constructor(
    private readonly seed: number,
    private readonly faults: FaultOptions,
  ) {}

  plan(binding: string, position: number, limit: number): FaultPlan {
    const key = `${binding}@${position}`;
    const occurrence = this.seen.get(key) ?? 0;
    if (this.seen.size >= 1_000_000) this.seen.clear();
    this.seen.set(key, occurrence + 1);
    const rng = this.rng.reset(hash3(this.seed, hashString(key), occurrence));
    const fault = decideFault(rng.next(), this.faults);
    // A short page may be empty, but only the first time a position is served: the chain always
    // progresses, even with shortPageRate 1 and limit 1.
    const shortLimit =
      rng.next() < this.faults.shortPageRate ? Math.max(occurrence === 0 ? 0 : 1, rng.int(limit)) : undefined;
    const delayMs = this.faults.latencyMs + rng.next() * this.faults.jitterMs;
    return { fault, shortLimit, delayMs };
  }
}

/**
 * Token bucket for the request-rate cap: holds one second of requests (at least one, so a rate
 * below 1/s still admits a request every 1/rate seconds), refilled continuously.
 */
export class RateGate {
  private readonly capacity: number;
  private tokens: number;
  private lastMs: number;

  constructor(
    private readonly ratePerSecond: number,
    private readonly clock: Clock,
  ) {
    this.capacity = Math.max(1, ratePerSecond);
    this.tokens = this.capacity;
    this.lastMs = clock.now();
  }

  tryTake(): boolean {
    const now = this.clock.now();
    const refill = ((now - this.lastMs) / 1000) * this.ratePerSecond;
    this.tokens = Math.min(this.capacity, this.tokens + refill);
    this.lastMs = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
