import type { Clock } from '../../src/util/clock.js';

export interface FakeClock extends Clock {
  advance(ms: number): void;
  /** Every delay passed to sleep(), in order. */
  readonly sleeps: number[];
}

/** A clock that only moves when told; sleep() advances it at once instead of waiting. */
export function createFakeClock(startMs = Date.UTC(2026, 0, 1)): FakeClock {
  let now = startMs;
  const sleeps: number[] = [];
  return {
    now: () => now,
    advance: (ms) => {
      now += ms;
    },
    sleep: (ms) => {
      sleeps.push(ms);
      now += ms;
      return Promise.resolve();
    },
    sleeps,
  };
}
