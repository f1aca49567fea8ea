import { RESOURCES } from '../resources/index.js';
import type { Dataset } from './dataset/dataset.js';
import { ChangeSchedule } from './change-schedule.js';
import type { Rng } from './random.js';

const SALT = 0xc011;
/** Share of the changes that are updates; the others are inserts. */
const UPDATE_SHARE = 0.8;

/**
 * Changes the collections while the simulator runs (`--churn RATE`), as clients of the platform
 * would, on a ChangeSchedule: each change draws a collection with items, then an update (80%: an
 * item gets a new version, `lastUpdatedTime` = the time it is due, its description changed;
 * relationships, their confidence) or an insert (20%: a new item, new id, created then). Every
 * request to the collections' routes first applies the changes due by the clock's now.
 */
export class CollectionChurn {
  private readonly schedule: ChangeSchedule;

  constructor(private readonly dataset: Dataset, seed: number, ratePerSecond: number, startMs: number) {
    this.schedule = new ChangeSchedule(seed, SALT, ratePerSecond, startMs, (due, rng) => this.apply(due, rng));
  }

  /** Applies the changes due at or before `nowMs`; returns how many it applied. */
  catchUp(nowMs: number): number {
    return this.schedule.catchUp(nowMs);
  }

  private apply(due: number, rng: Rng): void {
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
