import { ChangeSchedule } from '../change-schedule.js';
import type { Rng } from '../random.js';
import type { InstanceStore } from './instance-store.js';
import { type InstanceKind, KINDS } from './node-links.js';

const SALT = 0xc4a2;
/** A deleted or missing instance is passed over for the next index, at most this many times. */
const PROBES = 8;

/**
 * Changes instances while the simulator runs (`--churn RATE`), on a ChangeSchedule: each change is
 * an update (60%), an insert (20%) or a soft delete (20%) of an instance of a kind drawn at random.
 * Every request to the instances routes first applies the changes due by the clock's now.
 */
export class Churn {
  private readonly schedule: ChangeSchedule;

  constructor(private readonly store: InstanceStore, seed: number, ratePerSecond: number, startMs: number) {
    this.schedule = new ChangeSchedule(seed, SALT, ratePerSecond, startMs, (due, rng) => this.apply(due, rng));
  }

  /** Applies the changes due at or before `nowMs`; returns how many it applied. */
  catchUp(nowMs: number): number {
    return this.schedule.catchUp(nowMs);
  }

  private apply(due: number, rng: Rng): void {
    const op = rng.next();
    const kinds = KINDS.filter((kind) => this.store.count(kind) > 0);
    if (kinds.length === 0) return;
    const kind = rng.pick(kinds);
    if (op >= 0.6 && op < 0.8) {
      this.store.insert(kind, 1, due);
      return;
    }
    const index = this.liveIndex(kind, rng.int(this.store.count(kind)));
    if (index === undefined) return;
    const { instanceType, space, externalId, lastUpdatedTime } = this.store.instance(kind, index);
    // An instance the sim API changed later than `due` keeps its lastUpdatedTime from going back.
    const at = Math.max(due, lastUpdatedTime);
    if (op < 0.6) this.store.update([{ instanceType, space, externalId }], at);
    else this.store.delete([{ instanceType, space, externalId }], at);
  }

  /** The first instance from `start` on (wrapping around) that is not deleted. */
  private liveIndex(kind: InstanceKind, start: number): number | undefined {
    const count = this.store.count(kind);
    for (let probe = 0; probe < Math.min(PROBES, count); probe++) {
      const index = (start + probe) % count;
      if (!this.store.isDeleted(kind, index)) return index;
    }
    return undefined;
  }
}
