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
 * The points of one time series, generated on demand: point k (0 <= k < count) lies at
 * `first + k * step + jitter(k)` with `0 <= jitter(k) < step`. So timestamps are irregular yet
 * strictly increasing and unique, and the first point at or after any time is found in O(1):
 * reading any window costs only the points in it, whatever the length of the series.
 */
export class SeriesPoints {
  constructor(
    /** Points in the series; 0 for an empty one. */
    readonly count: number,
    /** No point lies before this time (epoch ms; before 1970 for the few series that cross it). */
    readonly first: number,
    /** Each point lies in its own slot of this many ms. */
    readonly step: number,
    readonly shape: ValueShape,
  ) {}

  get isString(): boolean {
    return this.shape.isString;
  }

  timestampOf(k: number): number {
    return this.first + k * this.step + jitterOf(this.shape, k, this.step);
  }

  /** The index of the first point at or after `time`; `count` when there is none. */
  indexAtOrAfter(time: number): number {
    if (time <= this.first) return 0;
    // Points before slot k all lie before `time`; the slot's own point may lie on either side.
    const k = Math.floor((time - this.first) / this.step);
    if (k >= this.count) return this.count;
    return this.timestampOf(k) >= time ? k : Math.min(k + 1, this.count);
  }

  /** The index range [from, to) of the points with start <= timestamp < end. */
  window(start: number, end: number): { from: number; to: number } {
    const from = this.indexAtOrAfter(start);
    return { from, to: Math.max(from, this.indexAtOrAfter(end)) };
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
}
