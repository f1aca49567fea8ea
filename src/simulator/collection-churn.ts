import { RESOURCES } from '../resources/index.js';
import type { Dataset } from './dataset/dataset.js';
import { hash3, Rng } from './random.js';

const SALT = 0xc011;
/** Share of the changes that are updates; the others are inserts. */
const UPDATE_SHARE = 0.8;

/**
 * Changes the collections while the simulator runs (`--churn RATE`), as clients of the platform
 * would: change k (1, 2, ...) is due at `startMs + k / rate` seconds and is drawn from (seed, k): a
 * collection with items, then an update (80%: an item gets a new version, `lastUpdatedTime` = the
 * time it is due, its description changed; relationships, their confidence) or an insert (20%: a new
 * item, new id, created then). Nothing runs in the background: every request to the collections'
 * routes first applies the changes due by the clock's now, so the same seed, rate and times give the
 * same changes, and a fake clock drives them in tests.
 */
export class CollectionChurn {
  private applied = 0;
  private readonly rng = new Rng();

  constructor(
    private readonly dataset: Dataset,
    private readonly seed: number,
    private readonly ratePerSecond: number,
    private readonly startMs: number,
  ) {}

  /** Applies the changes due at or before `nowMs`; returns how many it applied. */
  catchUp(nowMs: number): number {
    if (this.ratePerSecond <= 0) return 0;
    let count = 0;
    for (let due = this.dueAt(this.applied + 1); due <= nowMs; due = this.dueAt(this.applied + 1)) {
      this.apply(++this.applied, due);
      count++;
    }
    return count;
  }

  private dueAt(k: number): number {
    return this.startMs + Math.ceil((k * 1000) / this.ratePerSecond);
  }

  private apply(k: number, due: number): void {
    const rng = this.rng.reset(hash3(this.seed, k, SALT));
    const resources = RESOURCES.filter((name) => this.dataset[name].count > 0);
    if (resources.length === 0) return;
    const set = this.dataset[rng.pick(resources)];
    if (rng.next() >= UPDATE_SHARE) {
      set.insert(due);
      return;
    }
    const index = rng.int(set.count);
    // An item the sim API changed later than `due` keeps its lastUpdatedTime from going back.
    set.update(index, Math.max(due, set.item(index, false).lastUpdatedTime));
  }
}
