import { AdaptiveLimiter, type AdaptiveLimiterOptions } from '../../src/http/adaptive-limiter.js';
import { backoffDelay, DEFAULT_RETRY } from '../../src/http/retry-policy.js';
import type { Clock } from '../../src/util/clock.js';
import { seededRandom } from '../support/seeded-random.js';

/** Lets every promise chain that can move, move: setImmediate runs after the microtask queue drains. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Discrete-event time: sleep() resolves when run() reaches its deadline, in deadline order, and
 * every consequence of one wake-up settles before the next. Many sleepers overlap as in real time.
 */
export class EventClock implements Clock {
  private nowMs = Date.UTC(2026, 0, 1);
  private seq = 0;
  private timers: { at: number; seq: number; resolve: () => void }[] = [];

  now = (): number => this.nowMs;

  sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      this.timers.push({ at: this.nowMs + Math.max(0, ms), seq: this.seq++, resolve });
    });

  /** Sleepers waiting. */
  get sleepers(): number {
    return this.timers.length;
  }

  /** Advances to `ms` from now, waking the sleepers on the way. */
  async run(ms: number): Promise<void> {
    const end = this.nowMs + ms;
    for (;;) {
      await settle();
      let first: (typeof this.timers)[number] | undefined;
      for (const timer of this.timers) {
        const earlier = first === undefined || timer.at < first.at || (timer.at === first.at && timer.seq < first.seq);
        if (earlier) first = timer;
      }
      if (first === undefined || first.at > end) break;
      this.timers.splice(this.timers.indexOf(first), 1);
      this.nowMs = first.at;
      first.resolve();
    }
    this.nowMs = end;
  }
}

export interface ServerModel {
  /** Requests per second of the token bucket; its burst is one second of it (as the simulator's RateGate). */
  rate: number;
  maxConcurrent: number;
  /** Time to answer a request that passed, in ms (a 429 takes 1 ms). */
  latencyMs: number;
  /** Share of the admitted requests answered 429 at random anyway, as the simulator's `rate429` fault. */
  randomThrottle?: number;
}

export interface Figures {
  seconds: number;
  successes: number;
  throttled: number;
  requests: number;
  /** Successes per second over the allowed rate. */
  rateShare: number;
  /** 429s over all requests. */
  throttledShare: number;
  maxInFlight: number;
  limiter: ReturnType<AdaptiveLimiter['state']>;
}

/**
 * `workers` cursor chains drain pages as fast as the limiter lets them for `seconds` of fake time
 * against a token-bucket server; a 429 is retried after the worker's full-jitter backoff, through
 * the limiter again, as PlatformClient does.
 */
export async function simulateExport(
  server: ServerModel,
  limiterOptions: Omit<AdaptiveLimiterOptions, 'clock'>,
  options: { workers: number; seconds: number; seed?: number },
): Promise<Figures> {
  const clock = new EventClock();
  const limiter = new AdaptiveLimiter({ ...limiterOptions, clock });
  const random = seededRandom(options.seed ?? 1);
  const start = clock.now();
  const end = start + options.seconds * 1000;
  let tokens = server.rate;
  let refilledAt = start;
  let inFlight = 0;
  let maxInFlight = 0;
  let successes = 0;
  let throttled = 0;

  const arrive = (): { status: number; message?: string } => {
    if (inFlight >= server.maxConcurrent) return { status: 429, message: "maximum number='N' of concurrent requests" };
    const now = clock.now();
    tokens = Math.min(server.rate, tokens + ((now - refilledAt) / 1000) * server.rate);
    refilledAt = now;
    if (tokens < 1) return { status: 429, message: "maximum number='N' of requests per second" };
    tokens -= 1;
    if (random() < (server.randomThrottle ?? 0)) return { status: 429, message: "maximum number='50' of concurrent requests" };
    return { status: 200 };
  };

  const send = () =>
    limiter.run(async (permit) => {
      const answer = arrive();
      if (answer.status === 200) {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await clock.sleep(server.latencyMs);
        inFlight--;
        if (clock.now() <= end) successes++;
      } else {
        await clock.sleep(1);
        if (clock.now() <= end) throttled++;
      }
      limiter.onResponse(permit, answer.status, answer.message);
      return answer.status;
    });

  const worker = async () => {
    while (clock.now() < end) {
      for (let attempt = 1; clock.now() < end; attempt++) {
        if ((await send()) === 200) break;
        await clock.sleep(backoffDelay(attempt, DEFAULT_RETRY, random));
      }
    }
  };

  const workers = Array.from({ length: options.workers }, worker);
  await clock.run(options.seconds * 1000 + 60_000);
  await Promise.all(workers);
  const requests = successes + throttled;
  return {
    seconds: options.seconds,
    successes,
    throttled,
    requests,
    rateShare: successes / (server.rate * options.seconds),
    throttledShare: throttled / requests,
    maxInFlight,
    limiter: limiter.state(),
  };
}
