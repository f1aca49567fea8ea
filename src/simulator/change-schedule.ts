import { hash3, Rng } from './random.js';

/**
 * When the simulator's changes (`--churn RATE`) are due, and the random draws of each: change k
 * (1, 2, ...) is due at `startMs + k / rate` seconds and draws from (seed, k, salt). Nothing runs
 * in the background: `catchUp(now)` applies the changes due by then, so the same seed, rate and
 * times give the same changes, and a fake clock drives them in tests.
 */
export class ChangeSchedule {
  private applied = 0;
  private readonly rng = new Rng();

  constructor(
    private readonly seed: number,
    private readonly salt: number,
    private readonly ratePerSecond: number,
    private readonly startMs: number,
    /** Makes a change due at `dueMs` from its draws. */
    private readonly apply: (dueMs: number, rng: Rng) => void,
  ) {}

  /** Applies the changes due at or before `nowMs`; returns how many it applied. */
  catchUp(nowMs: number): number {
    if (this.ratePerSecond <= 0) return 0;
    let count = 0;
    for (let due = this.dueAt(this.applied + 1); due <= nowMs; due = this.dueAt(this.applied + 1)) {
      const k = ++this.applied;
      this.apply(due, this.rng.reset(hash3(this.seed, k, this.salt)));
      count++;
    }
    return count;
  }

  private dueAt(k: number): number {
    return this.startMs + Math.ceil((k * 1000) / this.ratePerSecond);
  }
}
