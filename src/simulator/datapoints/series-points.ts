import type { Datapoint, GeneratedPoints } from './generated-points.js';
import { type PointStatus, type PointValue, type Quality, qualityOfStatus, type ValueShape } from './point-values.js';
import type { SeriesChanges } from './series-changes.js';

export type { Datapoint } from './generated-points.js';

/** A point as the readers take it: its value as it travels in JSON, its quality, its status unless Good. */
export interface SeriesPoint {
  timestamp: number;
  value: PointValue;
  quality: Quality;
  status?: PointStatus;
}

/**
 * One time series as it is at one time (`nowMs`): its generated points that exist by then (a live
 * series' up to now), with the changes `--churn` made by then over them. The readers walk it by
 * time (`pointsFrom`, `pointBefore`), at the cost of the points walked plus O(log changes); the
 * points by index (`count`, `point(k)`, ...) are for tests: O(1) on a series never changed, and on
 * a changed one its points listed once, on the first such call.
 */
export class SeriesPoints {
  private listed: SeriesPoint[] | undefined;
  /** The generated points that exist at `nowMs`. */
  private readonly generatedCount: number;

  constructor(
    private readonly generated: GeneratedPoints,
    /** Undefined for a series `--churn` never changed. */
    private readonly changes: SeriesChanges | undefined,
    nowMs: number,
  ) {
    this.generatedCount = generated.countAt(nowMs);
  }

  get isString(): boolean {
    return this.generated.shape.isString;
  }

  get shape(): ValueShape {
    return this.generated.shape;
  }

  /** No generated point lies before this time, and no point is written before the first. */
  get first(): number {
    return this.generated.first;
  }

  /** Each generated point lies in its own slot of this many ms: the series' rate. */
  get step(): number {
    return this.generated.step;
  }

  /** Whether points keep arriving as the clock moves on. */
  get live(): boolean {
    return this.generated.live;
  }

  /** Every point at or after `time`, ascending, whatever its quality. */
  * pointsFrom(time: number): Generator<SeriesPoint, void, undefined> {
    const { generated, changes, generatedCount: limit } = this;
    let k = generated.indexAtOrAfter(time, limit);
    if (changes === undefined) {
      for (; k < limit; k++) yield this.generatedPoint(k);
      return;
    }
    let w = changes.writtenFrom(time);
    let d = changes.deletedFrom(time);
    for (;;) {
      // The next generated point outside every deleted range (a deleted range is skipped whole).
      let timestamp = k < limit ? generated.timestampOf(k) : Infinity;
      for (let range = changes.deletedAt(d); k < limit && range !== undefined; range = changes.deletedAt(d)) {
        if (range.inclusiveBegin > timestamp) break;
        if (range.exclusiveEnd > timestamp) {
          k = generated.indexAtOrAfter(range.exclusiveEnd, limit);
          timestamp = k < limit ? generated.timestampOf(k) : Infinity;
        }
        d++;
      }
      const written = changes.writtenAt(w);
      if (written === undefined && k >= limit) return;
      if (written !== undefined && written.timestamp <= timestamp) {
        yield writtenPoint(written);
        w++;
        // A written point replaces the generated one at its timestamp.
        if (written.timestamp === timestamp) k++;
      } else {
        yield this.generatedPoint(k);
        k++;
      }
    }
  }

  /** The last point before `time`, whatever its quality; undefined when there is none. */
  pointBefore(time: number): SeriesPoint | undefined {
    const { generated, changes, generatedCount: limit } = this;
    let k = generated.indexAtOrAfter(time, limit) - 1;
    if (changes === undefined) return k >= 0 ? this.generatedPoint(k) : undefined;
    while (k >= 0) {
      const range = changes.deletedAt(changes.deletedFrom(generated.timestampOf(k)));
      if (range === undefined || range.inclusiveBegin > generated.timestampOf(k)) break;
      k = generated.indexAtOrAfter(range.inclusiveBegin, limit) - 1;
    }
    // A written point at the generated one's timestamp replaces it, so the later of the two wins.
    const written = changes.writtenAt(changes.writtenFrom(time) - 1);
    if (written !== undefined && (k < 0 || written.timestamp >= generated.timestampOf(k))) return writtenPoint(written);
    return k >= 0 ? this.generatedPoint(k) : undefined;
  }

  /** Points in the series now. */
  get count(): number {
    return this.changes === undefined ? this.generatedCount : this.list().length;
  }

  timestampOf(k: number): number {
    return this.changes === undefined ? this.generated.timestampOf(k) : this.at(k).timestamp;
  }

  /** The index of the first point at or after `time`; `count` when there is none. */
  indexAtOrAfter(time: number): number {
    if (this.changes === undefined) return this.generated.indexAtOrAfter(time, this.generatedCount);
    const list = this.list();
    let low = 0;
    let high = list.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((list[middle]?.timestamp ?? Infinity) < time) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** The index range [from, to) of the points with start <= timestamp < end. */
  window(start: number, end: number): { from: number; to: number } {
    const from = this.indexAtOrAfter(start);
    return { from, to: Math.max(from, this.indexAtOrAfter(end)) };
  }

  qualityOf(k: number): Quality {
    return this.changes === undefined ? this.generated.qualityOf(k) : this.at(k).quality;
  }

  statusOf(k: number): PointStatus | undefined {
    return this.changes === undefined ? this.generated.statusOf(k) : this.at(k).status;
  }

  valueOf(k: number): PointValue {
    return this.changes === undefined ? this.generated.valueOf(k) : this.at(k).value;
  }

  /** Point k as the platform sends it with includeStatus (the status of a Good point left out). */
  point(k: number): Datapoint {
    if (this.changes === undefined) return this.generated.point(k);
    const { timestamp, value, status } = this.at(k);
    const point: Datapoint = { timestamp };
    if (value !== undefined) point.value = value;
    if (status !== undefined) point.status = status;
    return point;
  }

  private generatedPoint(k: number): SeriesPoint {
    const { generated } = this;
    const point: SeriesPoint = {
      timestamp: generated.timestampOf(k),
      value: generated.valueOf(k),
      quality: generated.qualityOf(k),
    };
    const status = generated.statusOf(k);
    if (status !== undefined) point.status = status;
    return point;
  }

  private at(k: number): SeriesPoint {
    const point = this.list()[k];
    if (point === undefined) throw new RangeError(`no point ${k} in a series of ${this.count}`);
    return point;
  }

  private list(): SeriesPoint[] {
    this.listed ??= [...this.pointsFrom(-Infinity)];
    return this.listed;
  }
}

/** A point as the platform sends it, as the readers take it: its quality read from its status. */
export function writtenPoint({ timestamp, value, status }: Datapoint): SeriesPoint {
  const point: SeriesPoint = { timestamp, value, quality: qualityOfStatus(status) };
  if (status !== undefined) point.status = status;
  return point;
}
