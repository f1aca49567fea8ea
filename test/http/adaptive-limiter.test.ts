import { describe, expect, it } from 'vitest';
import {
  AdaptiveLimiter,
  type AdaptiveLimiterOptions,
  type RequestPermit,
} from '../../src/http/adaptive-limiter.js';
import { classifyThrottle } from '../../src/http/throttle-signal.js';
import type { Clock } from '../../src/util/clock.js';
import { captureLogger } from '../support/log-capture.js';
import { seededRandom } from '../support/seeded-random.js';
import { EventClock, simulateExport } from './throttle-model.js';

const RATE_429 = "Project exceeded maximum number='20' of requests per second. Please try again later.";
const concurrent429 = (limit: number) =>
  `Project exceeded maximum number='${limit}' of concurrent requests. Please try again later.`;

interface Answer {
  status?: number;
  message?: string;
  /** Fake ms the request takes. Default 5. */
  latencyMs?: number;
}

/** A limiter on discrete-event time, with helpers to send requests through it and see when they started. */
function harness(options: Omit<AdaptiveLimiterOptions, 'clock' | 'logger'> = { maxConcurrency: 10 }) {
  const clock = new EventClock();
  const log = captureLogger('info');
  const limiter = new AdaptiveLimiter({ ...options, clock, logger: log.logger });
  const t0 = clock.now();
  const starts: number[] = [];
  const send = (answer: Answer = {}, signal?: AbortSignal): Promise<RequestPermit> =>
    limiter.run(
      async (permit) => {
        starts.push(clock.now() - t0);
        await clock.sleep(answer.latencyMs ?? 5);
        limiter.onResponse(permit, answer.status ?? 200, answer.message);
        return permit;
      },
      { signal, abortError: () => new Error('aborted while waiting') },
    );
  /** Sends `count` requests one after another, each answered by `answer`. */
  const sequence = async (count: number, answer: Answer = {}) => {
    for (let i = 0; i < count; i++) await send(answer);
  };
  const messages = () => log.records().map((record) => String(record.msg));
  return { clock, limiter, starts, send, sequence, messages, t0 };
}

/** Runs `work` while the fake clock advances by `ms`, and on until `work` is done. */
async function during<T>(clock: EventClock, ms: number, work: Promise<T>): Promise<T> {
  let done = false;
  const watched = work.finally(() => {
    done = true;
  });
  await clock.run(ms);
  for (let i = 0; !done && i < 1000; i++) await clock.run(100);
  return watched;
}

describe('AdaptiveLimiter: decrease', () => {
  it('starts unpaced at full concurrency: 10 requests start at once', async () => {
    const { clock, limiter, starts, send } = harness();
    await during(clock, 10, Promise.all(Array.from({ length: 10 }, () => send())));
    expect(starts).toEqual(Array.from({ length: 10 }, () => 0));
    expect(limiter.state()).toEqual({
      ratePerSecond: undefined,
      concurrency: 10,
      inFlight: 0,
      throttled: 0,
      decreases: 0,
    });
  });

  it('a 429 paces starts at 0.8 x the rate granted over the last second, and logs it once', async () => {
    const { clock, limiter, starts, sequence, messages } = harness();
    // 20 successes in 100 ms, then a 429: the server granted 20 requests in the last second.
    await during(clock, 200, sequence(20).then(() => sequence(1, { status: 429, message: RATE_429 })));
    expect(limiter.state()).toMatchObject({ ratePerSecond: 16, throttled: 1, decreases: 1 });
    expect(messages()).toEqual(['throttled by the platform (HTTP 429): pacing requests at 16/s, concurrency 10']);
    starts.length = 0;
    await during(clock, 1000, sequence(5));
    const gaps = starts.slice(1).map((start, i) => start - (starts[i] ?? 0));
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(1000 / 16.1);
    expect(gaps.every((gap) => gap < 1000 / 15)).toBe(true);
  });

  it('one decrease per congestion event: ten 429s for requests sent together cut once', async () => {
    const { clock, limiter, send, messages } = harness();
    await during(clock, 10, Promise.all(Array.from({ length: 10 }, () => send({ status: 429, message: RATE_429 }))));
    expect(limiter.state()).toMatchObject({ throttled: 10, decreases: 1 });
    expect(messages()).toHaveLength(1);
    // A 429 for a request sent after the decrease is a new event.
    await during(clock, 5000, send({ status: 429, message: RATE_429 }));
    expect(limiter.state()).toMatchObject({ throttled: 11, decreases: 2 });
    expect(messages()).toHaveLength(2);
  });

  it('the rate never falls below 0.5/s, however many events', async () => {
    const { clock, limiter, sequence } = harness();
    await during(clock, 200_000, sequence(30, { status: 429, message: RATE_429 }));
    expect(limiter.state()).toMatchObject({ decreases: 30, ratePerSecond: 0.5 });
  });

  it('a "concurrent requests" 429 this worker caused cuts the concurrency to 0.75 x in flight, and the rate', async () => {
    const { clock, limiter, send } = harness();
    const answers: Answer[] = Array.from({ length: 8 }, (_, i) =>
      i === 7 ? { status: 429, message: concurrent429(8), latencyMs: 1 } : {});
    await during(clock, 10, Promise.all(answers.map((answer) => send(answer))));
    expect(limiter.state()).toMatchObject({ concurrency: 6, decreases: 1 });
    expect(limiter.state().ratePerSecond).toBeDefined();
  });

  it('one "concurrent requests" 429 naming a limit far above what this worker had in flight changes nothing', async () => {
    const { clock, limiter, send, messages } = harness();
    const answers: Answer[] = Array.from({ length: 4 }, (_, i) =>
      i === 3 ? { status: 429, message: concurrent429(50), latencyMs: 1 } : {});
    await during(clock, 10, Promise.all(answers.map((answer) => send(answer))));
    expect(limiter.state()).toEqual({
      ratePerSecond: undefined,
      concurrency: 10,
      inFlight: 0,
      throttled: 1,
      decreases: 0,
    });
    expect(messages()).toEqual([
      '1 of the last 1 answers were HTTP 429 (concurrent requests, a limit of 50 shared with other clients): ' +
      'keeping concurrency at 10; it is lowered only when at least 10 of the last 40 answers are 429',
    ]);
  });

  it('the concurrency never falls below 1', async () => {
    const { clock, limiter, sequence } = harness();
    await during(clock, 600_000, sequence(20, { status: 429, message: concurrent429(1) }));
    expect(limiter.state()).toMatchObject({ concurrency: 1, decreases: 20 });
  });
});

describe('AdaptiveLimiter: increase', () => {
  it('while no 429 comes the rate grows by 2% of itself per second (compounded)', async () => {
    const { clock, limiter, sequence } = harness();
    await during(clock, 200, sequence(20).then(() => sequence(1, { status: 429, message: RATE_429 })));
    expect(limiter.state().ratePerSecond).toBe(16);
    await clock.run(0);
    const start = clock.now();
    // Two request chains keep the pacer busy for 10 s.
    const chain = async () => {
      while (clock.now() - start < 10_000) await sequence(1);
    };
    await during(clock, 10_000, Promise.all([chain(), chain()]));
    const rate = limiter.state().ratePerSecond ?? 0;
    expect(rate).toBeGreaterThan(16 * Math.exp(0.02 * 9.8));
    expect(rate).toBeLessThan(16 * Math.exp(0.02 * 10.5));
  });

  it('the concurrency grows back one step per 30 s without sustained 429s, up to the maximum and no further', async () => {
    const { clock, limiter, send, sequence, messages } = harness({ maxConcurrency: 6 });
    const answers: Answer[] = Array.from({ length: 4 }, (_, i) =>
      i === 3 ? { status: 429, message: concurrent429(4), latencyMs: 1 } : {});
    await during(clock, 10, Promise.all(answers.map((answer) => send(answer))));
    expect(limiter.state().concurrency).toBe(3);
    // One request every 100 ms: the concurrency steps up on the first answer 30 s after the last change.
    const steady = async (ms: number) => {
      const until = clock.now() + ms;
      while (clock.now() < until) {
        await sequence(1);
        await clock.sleep(95);
      }
    };
    await during(clock, 29_800, steady(29_800));
    expect(limiter.state().concurrency).toBe(3);
    await during(clock, 300, steady(300));
    expect(limiter.state().concurrency).toBe(4);
    await during(clock, 29_500, steady(29_500));
    expect(limiter.state().concurrency).toBe(4);
    await during(clock, 120_000, steady(120_000));
    expect(limiter.state().concurrency).toBe(6);
    expect(messages().filter((message) => /raising|back at/.test(message))).toEqual([
      'no sustained HTTP 429 for 30 s: raising concurrency from 3 to 4',
      'no sustained HTTP 429 for 30 s: raising concurrency from 4 to 5',
      'no sustained HTTP 429 for 30 s: raising concurrency from 5 to 6',
      'back at the configured concurrency (source.concurrency: 6)',
    ]);
  });

  it('the concurrency it grants is the concurrency in force: never more tasks running at once', async () => {
    const { clock, limiter, send } = harness({ maxConcurrency: 4 });
    let running = 0;
    let peak = 0;
    const task = () =>
      limiter.run(async () => {
        peak = Math.max(peak, ++running);
        await clock.sleep(5);
        running--;
      });
    await during(clock, 10, send({ status: 429, message: concurrent429(1), latencyMs: 1 }));
    expect(limiter.state().concurrency).toBe(1);
    await during(clock, 60_000, Promise.all(Array.from({ length: 20 }, task)));
    expect(peak).toBe(1);
  });

  it('pacing is lifted when the allowed rate is twice the rate used and 30 s passed without a decrease', async () => {
    const { clock, limiter, sequence, messages } = harness();
    await during(clock, 200, sequence(20).then(() => sequence(1, { status: 429, message: RATE_429 })));
    // Demand drops to one request every 2 s: the allowed rate (16/s and growing) goes unused.
    const slow = async () => {
      for (let i = 0; i < 16; i++) {
        await sequence(1);
        await clock.sleep(2000);
      }
    };
    await during(clock, 40_000, slow());
    expect(limiter.state()).toMatchObject({ ratePerSecond: undefined, decreases: 1 });
    expect(messages().filter((message) => message.includes('pacing lifted'))).toHaveLength(1);
  });
});

/**
 * `chains` request loops through the limiter for `ms` of fake time; `answer(inFlight)` decides each
 * answer from the requests of this process in flight. Returns the concurrency after every answer,
 * with the fake ms it came at.
 */
async function drive(
  { clock, limiter }: ReturnType<typeof harness>,
  options: { chains: number; ms: number; answer: (inFlight: number) => Answer },
): Promise<{ at: number; concurrency: number }[]> {
  const seen: { at: number; concurrency: number }[] = [];
  let inFlight = 0;
  const until = clock.now() + options.ms;
  const chain = async () => {
    while (clock.now() < until) {
      await limiter.run(async (permit) => {
        const answer = options.answer(++inFlight);
        await clock.sleep(answer.latencyMs ?? 5);
        inFlight--;
        limiter.onResponse(permit, answer.status ?? 200, answer.message);
        seen.push({ at: clock.now(), concurrency: limiter.state().concurrency });
      });
      await clock.sleep(1);
    }
  };
  await during(clock, options.ms, Promise.all(Array.from({ length: options.chains }, chain)));
  return seen;
}

describe('AdaptiveLimiter: 429s at random and sustained (a limit shared with other clients)', () => {
  it('5% of answers 429 at random: the concurrency stays at the configured 8 throughout, one line explains', async () => {
    const h = harness({ maxConcurrency: 8 });
    const random = seededRandom(47);
    const seen = await drive(h, {
      chains: 8,
      ms: 30_000,
      answer: () => (random() < 0.05 ? { status: 429, message: concurrent429(50) } : {}),
    });
    expect(seen.length).toBeGreaterThan(30_000);
    expect(h.limiter.state().throttled).toBeGreaterThan(1000);
    expect(Math.min(...seen.map((sample) => sample.concurrency))).toBe(8);
    expect(h.limiter.state()).toMatchObject({ concurrency: 8, decreases: 0, ratePerSecond: undefined });
    expect(h.messages()).toHaveLength(1);
    expect(h.messages()[0]).toMatch(/^1 of the last \d+ answers were HTTP 429 .*: keeping concurrency at 8;/);
  });

  it('sustained 429s lower it one step (x0.75) per 10 429s of the last 40 answers, never below 1', async () => {
    const { clock, limiter, sequence, messages } = harness({ maxConcurrency: 8 });
    const throttled = { status: 429, message: concurrent429(50) };
    await during(clock, 1000, sequence(9, throttled));
    expect(limiter.state()).toMatchObject({ concurrency: 8, decreases: 0 });
    await during(clock, 1000, sequence(1, throttled));
    expect(limiter.state()).toMatchObject({ concurrency: 6, decreases: 1 });
    expect(messages().at(-1)).toBe(
      '10 of the last 10 answers were HTTP 429 (concurrent requests, a limit of 50 shared with other clients): ' +
      'lowering concurrency from 8 to 6; back up one step after 30 s without sustained 429s (10 of 40 answers)',
    );
    // The answers before a step are forgotten: the next step needs ten more 429s, at the new concurrency.
    const steps: number[] = [];
    for (let i = 0; i < 6; i++) {
      await during(clock, 1000, sequence(10, throttled));
      steps.push(limiter.state().concurrency);
    }
    expect(steps).toEqual([4, 3, 2, 1, 1, 1]);
    expect(limiter.state().ratePerSecond).toBeUndefined();
  });

  it('a "concurrent requests" 429 naming no limit counts as shared: the 10th of 10 steps down, the pace stays', async () => {
    const { clock, limiter, sequence } = harness({ maxConcurrency: 8 });
    const throttled = { status: 429, message: 'Too many concurrent requests' };
    await during(clock, 1000, sequence(9, throttled));
    expect(limiter.state()).toMatchObject({ concurrency: 8, decreases: 0, ratePerSecond: undefined });
    await during(clock, 1000, sequence(1, throttled));
    expect(limiter.state()).toMatchObject({ concurrency: 6, decreases: 1, ratePerSecond: undefined });
  });

  it('a shared limit that leaves 4 requests to this process: it steps down to them, then back up to 8', async () => {
    const h = harness({ maxConcurrency: 8 });
    let free = 4;
    const answer = (inFlight: number): Answer =>
      inFlight > free ? { status: 429, message: concurrent429(50), latencyMs: 1 } : { latencyMs: 20 };
    const crowded = await drive(h, { chains: 8, ms: 5000, answer });
    expect(h.limiter.state().concurrency, JSON.stringify(h.messages())).toBeLessThanOrEqual(4);
    const lowered = h.messages().filter((message) => message.includes('lowering concurrency'));
    expect(lowered.map((message) => /from (\d+) to (\d+)/.exec(message)?.slice(1).map(Number))).toEqual(
      [[8, 6], [6, 4], [4, 3]].slice(0, lowered.length),
    );
    // The steps come within the first second; from then on every answer is a success.
    const lastCut = crowded.findLast((sample, i) => sample.concurrency < (crowded[i - 1]?.concurrency ?? 8));
    expect((lastCut?.at ?? 0) - h.t0).toBeLessThan(1000);
    // The other clients leave: one step back up per 30 s without sustained 429s, counted from the last cut.
    free = 50;
    const recovering = await drive(h, { chains: 8, ms: 180_000, answer });
    const ups = recovering.filter((sample, i) => sample.concurrency > (recovering[i - 1]?.concurrency ?? 0)).slice(1);
    const gaps = [lastCut?.at ?? 0, ...ups.map((sample) => sample.at)].map((at, i, all) => at - (all[i - 1] ?? 0));
    expect(ups.length).toBeGreaterThanOrEqual(2);
    for (const gap of gaps.slice(1)) {
      expect(gap).toBeGreaterThanOrEqual(30_000);
      expect(gap).toBeLessThan(30_100);
    }
    expect(h.limiter.state().concurrency).toBe(8);
    expect(h.messages().slice(-2)).toEqual([
      expect.stringMatching(/^no sustained HTTP 429 for 30 s: raising concurrency from \d to 8$/),
      'back at the configured concurrency (source.concurrency: 8)',
    ]);
  });
});

describe('AdaptiveLimiter: static cap and abort', () => {
  it('maxRequestsPerSecond is never exceeded: not unpaced, not after growth, not in any one-second window', async () => {
    const { clock, limiter, starts, t0 } = harness({ maxConcurrency: 10, maxRequestsPerSecond: 5 });
    const chain = async () => {
      while (clock.now() - t0 < 60_000) {
        await limiter.run(async (permit) => {
          starts.push(clock.now() - t0);
          await clock.sleep(5);
          limiter.onResponse(permit, 200);
        });
      }
    };
    await during(clock, 61_000, Promise.all(Array.from({ length: 10 }, chain)));
    expect(starts.length).toBeGreaterThan(295);
    // Six starts within one second would break the cap: every start is >= 1 s after the fifth before it.
    const tooClose = starts.filter((start, i) => i >= 5 && start - (starts[i - 5] ?? 0) < 1000);
    expect(tooClose).toEqual([]);
    expect(limiter.state().ratePerSecond).toBe(5);
  });

  it('after a 429 under maxRequestsPerSecond, the rate grows back to the cap and stops there', async () => {
    const { clock, limiter, sequence } = harness({ maxConcurrency: 10, maxRequestsPerSecond: 5 });
    await during(clock, 2000, sequence(4).then(() => sequence(1, { status: 429, message: RATE_429 })));
    expect(limiter.state().ratePerSecond).toBeLessThanOrEqual(4);
    await during(clock, 200_000, sequence(600));
    expect(limiter.state().ratePerSecond).toBe(5);
  });

  it('an abort while waiting for a pacing slot rejects with the abort error; the slot goes to the next waiter', async () => {
    const { clock, limiter, starts, send } = harness({ maxConcurrency: 10, maxRequestsPerSecond: 1 });
    await during(clock, 10, send());
    const stop = new AbortController();
    let ran = false;
    const waiting = limiter.run(
      () => {
        ran = true;
        return Promise.resolve();
      },
      { signal: stop.signal, abortError: () => new Error('aborted while waiting') },
    );
    const next = send();
    await clock.run(500);
    stop.abort();
    await expect(waiting).rejects.toThrow('aborted while waiting');
    await during(clock, 1000, next);
    expect(ran).toBe(false);
    expect(starts).toEqual([0, 1000]);
  });

  it('when the last waiter aborts, the pacer\'s own sleep is ended too (no timer outlives the queue)', async () => {
    const sleeps: AbortSignal[] = [];
    const clock = new EventClock();
    const watching: Clock = {
      now: clock.now,
      sleep: (ms, signal) => {
        if (signal !== undefined) sleeps.push(signal);
        return clock.sleep(ms);
      },
    };
    const limiter = new AdaptiveLimiter({ maxConcurrency: 4, maxRequestsPerSecond: 0.5, clock: watching });
    const task = () => Promise.resolve();
    await limiter.run(task);
    const stop = new AbortController();
    const waiting = limiter.run(task, { signal: stop.signal, abortError: () => new Error('stopped') });
    await clock.run(0);
    expect(sleeps.map((signal) => signal.aborted)).toEqual([false]);
    stop.abort();
    await expect(waiting).rejects.toThrow('stopped');
    expect(sleeps.map((signal) => signal.aborted)).toEqual([true]);
  });

  it('an abort before the request reaches the pacer rejects at once', async () => {
    const { limiter } = harness();
    const task = () => Promise.resolve('sent');
    await expect(limiter.run(task, { signal: AbortSignal.abort(), abortError: () => new Error('stopped') })).rejects.toThrow('stopped');
  });
});

describe('classifyThrottle', () => {
  it.each([
    ["Project exceeded maximum number='50' of concurrent requests. Please try again later.", { kind: 'concurrency', limit: 50 }],
    ['Too many concurrent requests', { kind: 'concurrency', limit: undefined }],
    ["Project exceeded maximum number='20' of requests per second. Please try again later.", { kind: 'rate' }],
    ['(HTML page: 429 Too Many Requests)', { kind: 'rate' }],
    [undefined, { kind: 'rate' }],
  ])('%s', (message, expected) => {
    expect(classifyThrottle(message)).toEqual(expected);
  });
});

/**
 * The limiter against a model of the platform's throttle: a token bucket (burst = one second of
 * its rate), 10 concurrent requests at most, 5 ms per request, 10 partitions draining as fast as
 * they are let, 429s retried after the default full-jitter backoff. 120 s of fake time each.
 */
describe('simulation: polite at the platform\'s limits', () => {
  it.each([5, 20, 50])('a cap of %i requests/s: at least 0.9 of it achieved, at most 0.05 of requests answered 429', async (rate) => {
    const figures = await simulateExport(
      { rate, maxConcurrent: 10, latencyMs: 5 },
      { maxConcurrency: 10 },
      { workers: 10, seconds: 120 },
    );
    const summary = JSON.stringify(figures);
    expect(figures.rateShare, summary).toBeGreaterThanOrEqual(0.9);
    expect(figures.throttledShare, summary).toBeLessThanOrEqual(0.05);
  });

  it('with maxRequestsPerSecond below the cap no 429 comes at all', async () => {
    const figures = await simulateExport(
      { rate: 20, maxConcurrent: 10, latencyMs: 5 },
      { maxConcurrency: 10, maxRequestsPerSecond: 15 },
      { workers: 10, seconds: 60 },
    );
    expect(figures.throttled).toBe(0);
    expect(figures.successes / figures.seconds).toBeGreaterThan(14.9);
  });

  it('429s at random ("concurrent requests", limit 50) do not collapse the pace: it stays unpaced', async () => {
    const figures = await simulateExport(
      { rate: 1e6, maxConcurrent: 1000, latencyMs: 5, randomThrottle: 0.1 },
      { maxConcurrency: 8 },
      { workers: 10, seconds: 60 },
    );
    expect(figures.limiter.ratePerSecond).toBeUndefined();
    expect(figures.successes / figures.seconds).toBeGreaterThan(100);
  });
});
