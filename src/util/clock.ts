/** Time as a dependency: production uses the system clock, tests pass a fake one and never sleep. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /**
   * Resolves after `ms`, or as soon as `signal` aborts (it resolves then too: the caller checks the
   * signal). The abort also clears the timer, so that a stopped wait does not hold the process open.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      if (signal?.aborted === true) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
    }),
};

/**
 * The system clock moved so that it reads `startMs` first and runs on from there in real time: a
 * simulator whose data is drawn around a given time (`simulate --start-time`), so that another
 * process can compute the same data set.
 */
export function startingClock(startMs: number): Clock {
  // Set at the first reading, which is then exactly `startMs`: the time the data is drawn around.
  let offset: number | undefined;
  const now = () => {
    const real = Date.now();
    offset ??= startMs - real;
    return real + offset;
  };
  return { now, sleep: (ms, signal) => systemClock.sleep(ms, signal) };
}
