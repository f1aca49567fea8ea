import pLimit, { type LimitFunction } from 'p-limit';
import { type Logger, silentLogger } from '../log.js';
import { type Clock, systemClock } from '../util/clock.js';
import { Pacer } from './pacer.js';
import { classifyThrottle, RecentAnswers, type ThrottleSignal } from './throttle-signal.js';

/** Handed to a task when it may send; passed back with the answer so the limiter knows its age. */
export interface RequestPermit {
  /** Decreases made before this request started: a 429 for an older request is old news. */
  readonly epoch: number;
  /** Requests in flight when it started, itself included. */
  readonly inFlight: number;
  /** Clock ms when it was sent. */
  readonly startedAtMs: number;
}

interface Start extends RequestPermit {
  throttled: boolean;
  /** Concurrency changes made before it started: its answer describes the concurrency of then. */
  readonly steps: number;
}

export interface SlotOptions {
  /** Aborting it while the request waits for a pacing slot rejects with `abortError()`. */
  signal?: AbortSignal | undefined;
  abortError?: () => Error;
}

/** A limiter that learns from the answers; PlatformClient reports every HTTP status to it. */
export interface RequestLimiter {
  run<T>(task: (permit: RequestPermit) => Promise<T>, options?: SlotOptions): Promise<T>;
  onResponse(permit: RequestPermit, status: number, message?: string): void;
  state?(): LimiterState;
}

/** For the run summary and the manifest. */
export interface LimiterState {
  /** Request starts per second allowed now; undefined while unpaced. */
  ratePerSecond: number | undefined;
  concurrency: number;
  /** Requests sent and not answered yet. */
  inFlight: number;
  /** HTTP 429 answers seen. */
  throttled: number;
  /** Backoffs made (at most one per congestion event). */
  decreases: number;
}

export interface AdaptiveLimiterOptions {
  /** Most requests in flight (`source.concurrency`); the adaptive concurrency stays in [1, this]. */
  maxConcurrency: number;
  /** Static cap on request starts per second (`source.maxRequestsPerSecond`). Default: none. */
  maxRequestsPerSecond?: number | undefined;
  clock?: Clock;
  logger?: Logger;
}

/** Requests started this long ago or less show the rate the server grants, in ms. */
const WINDOW_MS = 1000;
/** A rate 429 sets the start rate to this share of the rate granted over the last WINDOW_MS. */
const RATE_DECREASE = 0.8;
/** A concurrency step down multiplies it by this (and a step up divides by it), never below 1. */
const CONCURRENCY_STEP = 0.75;
/** 429s are sustained, not random, when at least SUSTAINED_429S of the last RECENT_ANSWERS were 429. */
const RECENT_ANSWERS = 40;
const SUSTAINED_429S = 10;
/** The concurrency goes back up one step after this long without sustained 429s, in ms. */
const QUIET_MS = 30_000;
/** While no 429 comes, the start rate grows by this share of itself per second. */
const RATE_INCREASE_PER_S = 0.02;
/** Pacing never goes below this (or below maxRequestsPerSecond when that is lower), requests/s. */
const MIN_RATE = 0.5;
/** Pacing is lifted when the allowed rate is LIFT_RATIO x the rate used, LIFT_AFTER_MS after a decrease. */
const LIFT_RATIO = 2;
const LIFT_AFTER_MS = 30_000;

/**
 * The one shared request limiter, adaptive (AIMD-like, as TCP congestion control): a p-limit whose
 * concurrency moves within [1, maxConcurrency], plus a pacer that spaces request starts.
 *
 * Why both: the platform throttles by requests per second and by requests in flight, and answers
 * 429 without Retry-After. A fixed concurrency cannot be polite and fast at once: at 5 ms per
 * request even one request in flight sends 200/s, far past a cap of 20/s. So it starts unpaced at
 * full concurrency. On a 429 it paces starts at RATE_DECREASE x the rate the server let through over
 * the last second. While no 429 comes the rate grows by RATE_INCREASE_PER_S of itself per second. A
 * 429 for a request sent before the last decrease belongs to the same congestion event and changes
 * nothing: otherwise the burst of 429s that one overshoot causes would collapse the rate.
 *
 * The concurrency moves in steps (x CONCURRENCY_STEP down, back up by the same factor). A
 * "concurrent requests" 429 naming a limit this process reached on its own (as many requests in
 * flight as the limit) steps it down at once, below what was in flight, and cuts the rate too. The
 * platform's limit is per project, though (e.g. 50, shared with other clients), and such 429s also
 * come at random, far below it (the simulator's `rate429` fault): cut on each of them, 5% of random
 * 429s held the concurrency at 1 or 2. So a 429 naming a limit this process did not reach, or none,
 * steps the concurrency down only when 429s are sustained: SUSTAINED_429S of the last RECENT_ANSWERS
 * answers (25%, where 5% random 429s reach 10 of 40 about once in 200,000 answers), one step at a
 * time (the answers before a step are forgotten, so the next needs 429s at the new concurrency). It
 * leaves the pace alone: the pace of this process is not what overflowed. The concurrency goes back
 * up one step after QUIET_MS without sustained 429s, step by step to `maxConcurrency`.
 *
 * The sawtooth against a token bucket of rate R and burst R (the platform's and the simulator's
 * shape). After a decrease to r0 < R the bucket refills at R - r0 while the rate climbs back to R,
 * then drains as the rate passes R; the next 429 comes when it is empty. With growth a = 0.02 R per
 * second the climb and the drain take (R - r0) / a each, and r0 settles where 0.8 x the peak
 * (2R - r0) equals r0: r0 = 0.89 R. A cycle then lasts 2 x 0.11 / 0.02 = ~11 s at any R and holds
 * ~11 R requests and one 429 (the pacer sends one request at a time, so the first 429 stops the
 * climb): ~1.8% 429s at R = 5, ~0.5% at 20, ~0.2% at 50. The bucket gains at most
 * (0.11 R)^2 / 2a = 0.3 R tokens during the climb, below its size R, so none is wasted and the
 * average is R. A growth fixed in requests/s instead would give 429s in proportion to a / R^2:
 * too many at small caps or minutes of recovery at large ones. The first decrease, from unpaced,
 * lands near 0.8 R (the initial burst empties the bucket; 429s still on their way may make it
 * higher, and the next event corrects that); the climb back takes 0.2 / 0.02 = 10 s at ~90% of R.
 *
 * Pacing is lifted (back to full speed) when the allowed rate has grown to LIFT_RATIO x the rate
 * actually used and no decrease came for LIFT_AFTER_MS: the throttling is over, or demand has dropped.
 */
export class AdaptiveLimiter implements RequestLimiter {
  private readonly limit: LimitFunction;
  private readonly pacer: Pacer;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly maxConcurrency: number;
  private readonly cap: number;
  private readonly floor: number;
  private rate = Number.POSITIVE_INFINITY;
  private epoch = 0;
  private throttled = 0;
  private inFlight = 0;
  private lastDecreaseMs: number;
  private lastIncreaseMs: number;
  /** Requests started within WINDOW_MS, oldest first. */
  private readonly starts: Start[] = [];
  /** Answers to requests started since the last concurrency change. */
  private readonly recent = new RecentAnswers(RECENT_ANSWERS);
  private steps = 0;
  /** Since when no 429 found the answers sustained and the concurrency did not change. */
  private quietSinceMs: number;
  /** A shared-limit 429 that changes nothing is explained at info once, then at debug. */
  private explainedRandom = false;

  constructor(options: AdaptiveLimiterOptions) {
    this.maxConcurrency = options.maxConcurrency;
    this.cap = options.maxRequestsPerSecond ?? Number.POSITIVE_INFINITY;
    this.floor = Math.min(MIN_RATE, this.cap);
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.limit = pLimit(options.maxConcurrency);
    this.pacer = new Pacer(this.clock, () => Math.min(this.rate, this.cap));
    this.lastDecreaseMs = this.clock.now();
    this.lastIncreaseMs = this.lastDecreaseMs;
    this.quietSinceMs = this.lastDecreaseMs;
  }

  run<T>(task: (permit: RequestPermit) => Promise<T>, options: SlotOptions = {}): Promise<T> {
    return this.limit(async () => {
      await this.pacer.acquire(options.signal, options.abortError);
      this.inFlight++;
      const start: Start = {
        epoch: this.epoch,
        inFlight: this.inFlight,
        startedAtMs: this.clock.now(),
        throttled: false,
        steps: this.steps,
      };
      this.starts.push(start);
      this.forgetOldStarts();
      try {
        return await task(start);
      } finally {
        this.inFlight--;
      }
    });
  }

  onResponse(permit: RequestPermit, status: number, message?: string): void {
    const start = permit as Start;
    const ok = status >= 200 && status < 300;
    if (status === 429 || ok) {
      if (start.steps === this.steps) this.recent.record(status === 429);
    }
    if (status === 429) {
      this.throttled++;
      start.throttled = true;
      this.throttle(start, classifyThrottle(message));
    } else if (ok && permit.epoch === this.epoch) {
      this.increase();
    }
    this.recover();
  }

  state(): LimiterState {
    const rate = Math.min(this.rate, this.cap);
    return {
      ratePerSecond: rate === Number.POSITIVE_INFINITY ? undefined : rate,
      concurrency: this.limit.concurrency,
      inFlight: this.inFlight,
      throttled: this.throttled,
      decreases: this.epoch,
    };
  }

  /**
   * Requests per second the server let through lately: those started within WINDOW_MS that were
   * not answered 429. Counted by start, not by answer, so that the latency of the answers does
   * not hide the requests of the last moments (at the first 429 the successes of the initial burst
   * may all still be in flight). It overestimates while 429s are still on their way; the next
   * congestion event then corrects it.
   */
  private grantedRate(): number {
    this.forgetOldStarts();
    return (this.starts.filter((start) => !start.throttled).length * 1000) / WINDOW_MS;
  }

  private forgetOldStarts(): void {
    const since = this.clock.now() - WINDOW_MS;
    while ((this.starts[0]?.startedAtMs ?? since + 1) <= since) this.starts.shift();
  }

  private throttle(start: Start, signal: ThrottleSignal): void {
    if (signal.kind === 'rate') {
      if (start.epoch !== this.epoch) return;
      const pace = this.decreaseRate();
      this.logger.info(
        this.fields(),
        `throttled by the platform (HTTP 429): ${pace}, concurrency ${this.limit.concurrency}`,
      );
      return;
    }
    if (signal.limit !== undefined && start.inFlight >= signal.limit) {
      if (start.epoch === this.epoch) this.decreaseOwn(start, signal.limit);
      return;
    }
    const shared = signal.limit === undefined ? '' : `, a limit of ${signal.limit} shared with other clients`;
    const seen = `${this.recent.throttledAnswers} of the last ${this.recent.answers} answers were HTTP 429 ` +
      `(concurrent requests${shared})`;
    if (this.recent.throttledAnswers < SUSTAINED_429S) {
      this.logger[this.explainedRandom ? 'debug' : 'info'](
        this.fields(),
        `${seen}: keeping concurrency at ${this.limit.concurrency}; it is lowered only when at least ` +
        `${SUSTAINED_429S} of the last ${RECENT_ANSWERS} answers are 429`,
      );
      this.explainedRandom = true;
      return;
    }
    this.quietSinceMs = this.clock.now();
    const from = this.limit.concurrency;
    if (from === 1) return;
    this.epoch++;
    this.setConcurrency(Math.max(1, Math.floor(from * CONCURRENCY_STEP)));
    this.logger.info(
      this.fields(),
      `${seen}: lowering concurrency from ${from} to ${this.limit.concurrency}; ${this.recovery()}`,
    );
  }

  /** A "concurrent requests" 429 at a limit this process reached alone: its own overshoot. */
  private decreaseOwn(start: Start, limit: number): void {
    const from = this.limit.concurrency;
    const to = Math.max(1, Math.min(from, Math.floor(start.inFlight * CONCURRENCY_STEP)));
    if (to !== from) this.setConcurrency(to);
    this.quietSinceMs = this.clock.now();
    const lowered = from === to ? `concurrency stays at ${from}` : `lowering concurrency from ${from} to ${to}`;
    const pace = this.decreaseRate();
    this.logger.info(
      this.fields(),
      `throttled by the platform (HTTP 429, concurrent requests): ${start.inFlight} requests were in flight ` +
      `against a limit of ${limit}: ${lowered}, ${pace}; ${this.recovery()}`,
    );
  }

  /** Paces starts at RATE_DECREASE x the rate granted lately; says the pace in words. */
  private decreaseRate(): string {
    const now = this.clock.now();
    this.epoch++;
    this.lastDecreaseMs = now;
    this.lastIncreaseMs = now;
    const base = Math.min(this.rate, this.cap, Math.max(this.grantedRate(), this.floor));
    this.rate = Math.max(this.floor, base * RATE_DECREASE);
    const rate = this.state().ratePerSecond;
    return rate === undefined ? 'requests unpaced' : `pacing requests at ${round(rate)}/s`;
  }

  /** The log fields of a change: the bench and dashboards read the concurrency from them. */
  private fields(): { ratePerSecond: number | undefined; concurrency: number; throttled: number } {
    const { ratePerSecond, concurrency, throttled } = this.state();
    return { ratePerSecond: round(ratePerSecond), concurrency, throttled };
  }

  private setConcurrency(value: number): void {
    this.limit.concurrency = value;
    this.steps++;
    this.recent.clear();
  }

  private recovery(): string {
    return (
      `back up one step after ${QUIET_MS / 1000} s without sustained 429s ` +
      `(${SUSTAINED_429S} of ${RECENT_ANSWERS} answers)`
    );
  }

  /** One step back up per QUIET_MS without sustained 429s. */
  private recover(): void {
    const now = this.clock.now();
    const from = this.limit.concurrency;
    if (from >= this.maxConcurrency || now - this.quietSinceMs < QUIET_MS) return;
    this.quietSinceMs = now;
    this.setConcurrency(Math.min(this.maxConcurrency, Math.max(from + 1, Math.round(from / CONCURRENCY_STEP))));
    const to = this.limit.concurrency;
    this.logger.info(
      this.fields(),
      `no sustained HTTP 429 for ${QUIET_MS / 1000} s: raising concurrency from ${from} to ${to}`,
    );
    if (to === this.maxConcurrency) {
      this.logger.info(this.fields(), `back at the configured concurrency (source.concurrency: ${to})`);
    }
  }

  private increase(): void {
    const now = this.clock.now();
    // Capped so that a long idle spell does not turn into one big step.
    const seconds = Math.min(1, (now - this.lastIncreaseMs) / 1000);
    this.lastIncreaseMs = now;
    if (this.rate !== Number.POSITIVE_INFINITY) {
      this.rate = Math.min(this.cap, this.rate * (1 + RATE_INCREASE_PER_S * seconds));
      if (now - this.lastDecreaseMs >= LIFT_AFTER_MS && this.rate >= LIFT_RATIO * this.grantedRate()) {
        this.rate = Number.POSITIVE_INFINITY;
        this.logger.info(
          { concurrency: this.limit.concurrency, maxRequestsPerSecond: finite(this.cap) },
          `no throttling for ${LIFT_AFTER_MS / 1000} s and the allowed rate is unused: request pacing lifted`,
        );
      }
    }
  }
}

function round(rate: number | undefined): number | undefined {
  return rate === undefined ? undefined : Math.round(rate * 100) / 100;
}

function finite(value: number): number | undefined {
  return value === Number.POSITIVE_INFINITY ? undefined : value;
}
