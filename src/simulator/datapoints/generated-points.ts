import {
  jitterOf,
  type PointStatus,
  type PointValue,
  type Quality,
  qualityOf,
  statusOf,
  valueOf,
  type ValueShape,
} from './point-values.js';

/** A raw point as the platform sends it: `status` only for a point that is not Good. */
export interface Datapoint {
  timestamp: number;
  value?: number | string;
  status?: PointStatus;
}

/**
 * The points of one time series as generated, before any change `--churn` made: point k lies at
 * `first + k * step + jitter(k)` with `0 <= jitter(k) < step`. So timestamps are irregular yet
 * strictly increasing and unique, and the first point at or after any time is found in O(1):
 * reading any window costs only the points in it, whatever the length of the series.
 *
 * A stopped series holds its `count` points and no more. A live one goes on: its points from
 * `count` on lie at or after the simulator's start (the slot of point `count` begins there), and
 * a point exists once the clock has passed its timestamp.
 */
export class GeneratedPoints {
  constructor(
    /** Points before the simulator's start; 0 for an empty series. */
    readonly count: number,
    /** No point lies before this time (epoch ms; before 1970 for the few series that cross it). */
    readonly first: number,
    /** Each point lies in its own slot of this many ms. */
    readonly step: number,
    readonly shape: ValueShape,
    /** Whether points keep arriving after the simulator's start. */
    readonly live: boolean,
  ) {}

  /** The points that exist at `nowMs` (the clock never goes back before the start): those before it. */
  countAt(nowMs: number): number {
    if (!this.live) return this.count;
    return Math.max(this.count, this.slotIndexAtOrAfter(nowMs));
  }

  timestampOf(k: number): number {
    return this.first + k * this.step + jitterOf(this.shape, k, this.step);
  }

  /** The index of the first point at or after `time` among the first `limit`; `limit` when there is none. */
  indexAtOrAfter(time: number, limit: number): number {
    return Math.min(limit, this.slotIndexAtOrAfter(time));
  }

  qualityOf(k: number): Quality {
    return qualityOf(this.shape, k);
  }

  statusOf(k: number): PointStatus | undefined {
    return statusOf(this.shape, k);
  }

  valueOf(k: number): PointValue {
    return valueOf(this.shape, k);
  }

  /** Point k as the platform sends it with includeStatus (the status of a Good point left out). */
  point(k: number): Datapoint {
    const point: Datapoint = { timestamp: this.timestampOf(k) };
    const value = this.valueOf(k);
    if (value !== undefined) point.value = value;
    const status = this.statusOf(k);
    if (status !== undefined) point.status = status;
    return point;
  }

  /** The first k whose point lies at or after `time`, as if the series had no end. */
  private slotIndexAtOrAfter(time: number): number {
    if (time <= this.first) return 0;
    // Points before slot k all lie before `time`; the slot's own point may lie on either side.
    const k = Math.floor((time - this.first) / this.step);
    return this.timestampOf(k) >= time ? k : k + 1;
  }
}
