import type { Datapoint } from './generated-points.js';

/** A range of time `[inclusiveBegin, exclusiveEnd)` whose points were deleted. */
export interface DeletedRange {
  inclusiveBegin: number;
  exclusiveEnd: number;
}

/**
 * What `--churn` changed in one series, kept apart from its generated points: the points written
 * (late ones and corrected ones, by timestamp, each replacing a generated point at the same
 * timestamp) and the ranges of time whose generated points are gone. Memory follows the changes,
 * not the points. Applied in order, a delete also removes the points written before it in its
 * range, and a point written later inside a deleted range is there again.
 */
export class SeriesChanges {
  /** Written points, by ascending timestamp, one per timestamp. */
  private readonly written: Datapoint[] = [];
  /** Ranges without generated points, ascending, disjoint and not touching. */
  private readonly deleted: DeletedRange[] = [];

  upsert(point: Datapoint): void {
    const at = firstAtOrAfter(this.written, point.timestamp);
    const replaces = this.written[at]?.timestamp === point.timestamp;
    this.written.splice(at, replaces ? 1 : 0, point);
  }

  delete(range: DeletedRange): void {
    const { inclusiveBegin: begin, exclusiveEnd: end } = range;
    if (end <= begin) return;
    const from = firstAtOrAfter(this.written, begin);
    this.written.splice(from, firstAtOrAfter(this.written, end) - from);
    // Ranges that overlap or touch the new one merge with it.
    let low = 0;
    while (low < this.deleted.length && (this.deleted[low]?.exclusiveEnd ?? 0) < begin) low++;
    let high = low;
    let merged: DeletedRange = { inclusiveBegin: begin, exclusiveEnd: end };
    let next = this.deleted[high];
    while (next !== undefined && next.inclusiveBegin <= end) {
      merged = {
        inclusiveBegin: Math.min(merged.inclusiveBegin, next.inclusiveBegin),
        exclusiveEnd: Math.max(merged.exclusiveEnd, next.exclusiveEnd),
      };
      next = this.deleted[++high];
    }
    this.deleted.splice(low, high - low, merged);
  }

  /** The position among the written points of the first at or after `time`. */
  writtenFrom(time: number): number {
    return firstAtOrAfter(this.written, time);
  }

  writtenAt(position: number): Datapoint | undefined {
    return this.written[position];
  }

  /** The position among the deleted ranges of the first that ends after `time`. */
  deletedFrom(time: number): number {
    let low = 0;
    let high = this.deleted.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.deleted[middle]?.exclusiveEnd ?? Infinity) <= time) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  deletedAt(position: number): DeletedRange | undefined {
    return this.deleted[position];
  }
}

/** The position of the first point at or after `time` in points sorted by timestamp. */
function firstAtOrAfter(points: readonly Datapoint[], time: number): number {
  let low = 0;
  let high = points.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((points[middle]?.timestamp ?? Infinity) < time) low = middle + 1;
    else high = middle;
  }
  return low;
}
