/**
 * What a 429 says was exceeded; for concurrency, `limit` is the most requests in flight the project
 * may have, when the message names it.
 */
export type ThrottleSignal = { kind: 'rate' } | { kind: 'concurrency'; limit: number | undefined };

/**
 * Reads the platform's 429 message, e.g. "Project exceeded maximum number='50' of concurrent
 * requests. Please try again later." A 429 that does not mention concurrent requests (the rate
 * cap's "... requests per second ...", no message at all, a proxy's page) counts as a rate signal:
 * slowing down is the safe reading of an unknown throttle.
 */
export function classifyThrottle(message: string | undefined): ThrottleSignal {
  if (message === undefined || !/concurrent/i.test(message)) return { kind: 'rate' };
  const limit = /(\d+)\D{0,3}of concurrent/i.exec(message)?.[1];
  return { kind: 'concurrency', limit: limit === undefined ? undefined : Number(limit) };
}

/**
 * The last `size` answers (2xx or 429), to tell 429s that come in a run from 429s that come at
 * random: the platform (and the simulator's `rate429` fault) answers some requests 429 now and then
 * even far below any limit, and those say nothing about how many requests this process may send.
 */
export class RecentAnswers {
  private readonly throttled: boolean[] = [];
  private count429 = 0;

  constructor(private readonly size: number) {}

  record(throttled: boolean): void {
    this.throttled.push(throttled);
    if (throttled) this.count429++;
    if (this.throttled.length > this.size && this.throttled.shift() === true) this.count429--;
  }

  /** Answers held, at most `size`. */
  get answers(): number {
    return this.throttled.length;
  }

  /** 429s among them. */
  get throttledAnswers(): number {
    return this.count429;
  }

  /** After a change of concurrency: the answers before it describe the old one. */
  clear(): void {
    this.throttled.length = 0;
    this.count429 = 0;
  }
}
