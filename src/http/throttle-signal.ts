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
