import type { PointStatus, PointValue, Quality } from './point-values.js';

/**
 * One aggregate bucket [a, b) of one series, computed in one pass over its points, with the
 * platform's meanings (docs.cognite.com/dev/concepts/aggregation, "Aggregation functions", and
 * .../reference/status_codes, "Aggregate behavior"). What the simulator implements, exactly:
 *
 * - Counted points: Good, and uncertain ones with `treatUncertainAsBad: false`; bad ones never.
 *   `count`, `sum`, `min`, `max`, `discreteVariance` (population variance) and `minDatapoint` /
 *   `maxDatapoint` (the first point of the extreme value) are of the counted points in [a, b).
 * - The interpolated function f, from the counted points: a step series (`isStep`) keeps a point's
 *   value until the next point; another series is linear between two points. With
 *   `ignoreBadDataPoints` (default true) the other points are not there at all, so f bridges
 *   them; with `ignoreBadDataPoints: false` "interpolation stops at the beginning of each bad
 *   period": the last counted point's value holds (stepped, as OPC UA Part 13 extrapolates by
 *   default) until the next point that is not counted, and f is undefined from there to the next
 *   counted point. f is undefined before the series' first point and after its last ("we do not
 *   extrapolate backward from the first point or forward from the last").
 * - Edges: f uses the points just outside the bucket (the last before a, the first at or after
 *   b); for a series that is not a step series only when they lie at most one hour from the
 *   bucket ("CDF doesn't use the previous and next data points if they're more than one hour
 *   away from the time range"); a step series uses them at any distance. Inside the bucket f joins
 *   its points however far apart they are.
 * - `average`: the integral of f over where it is defined in [a, b), divided by the length of
 *   that part (a time-weighted average: the status-codes page's worked example, averages 2.0 and
 *   2.5 of points 1 ms apart in a 1 s bucket, divides by that part, not by the bucket's length);
 *   `continuousVariance`: the variance of f over that part;
 *   both of a bucket where f is defined at a single point only (a lone point) are its value and
 *   0. `totalVariation`: |f(t1) - f(a)| + sum |f(ti+1) - f(ti)| + |f(b-) - f(tn)|, the total
 *   change of f along where it is defined (a stretch where it is undefined adds nothing; a jump
 *   exactly at b belongs to the next bucket).
 * - `interpolation`: f(a); `stepInterpolation`: the last counted point's value at or before a (f
 *   of the series taken as a step series, at any distance); each undefined (left out of the
 *   answer) where f is.
 * - `countGood`, `countUncertain`, `countBad`: the points of each status in [a, b), whatever
 *   `treatUncertainAsBad` and `ignoreBadDataPoints`. `durationGood`, `durationUncertain`,
 *   `durationBad` (ms): "the duration that the previous data point has the given status, and is in
 *   range" (the aggregation page; the SDKs' "equivalent to duration that the previous data point
 *   is good and in range"): each point of the bucket holds its status from its timestamp to the
 *   next point of the series, cut at b; the time before the bucket's first point counts for none.
 */
export interface SourcePoint {
  timestamp: number;
  value: PointValue;
  quality: Quality;
  status?: PointStatus | undefined;
}

/** The flags of a query that change its aggregates, and the series' kind. */
export interface AggregateRules {
  isStep: boolean;
  ignoreBadDataPoints: boolean;
  treatUncertainAsBad: boolean;
}

/** An extreme point of a bucket: `{timestamp, value, status?}` (a status only when not Good). */
export interface ExtremePoint {
  timestamp: number;
  value: number;
  status: PointStatus | undefined;
}

/** A bucket's aggregates; undefined where the platform has none (no counted point, f undefined). */
export interface BucketValues {
  timestamp: number;
  average: number | undefined;
  max: number | undefined;
  min: number | undefined;
  count: number | undefined;
  sum: number | undefined;
  interpolation: number | undefined;
  stepInterpolation: number | undefined;
  totalVariation: number | undefined;
  continuousVariance: number | undefined;
  discreteVariance: number | undefined;
  countGood: number;
  countUncertain: number;
  countBad: number;
  durationGood: number;
  durationUncertain: number;
  durationBad: number;
  maxDatapoint: ExtremePoint | undefined;
  minDatapoint: ExtremePoint | undefined;
}

/** A point f is built from: a counted point's value, or (undefined) a point that stops it. */
export interface Element {
  timestamp: number;
  value: number | undefined;
}

const HOUR_MS = 3_600_000;

/** Whether a point counts in the value aggregates under the query's flags. */
export function isCountedPoint(point: SourcePoint, rules: AggregateRules): boolean {
  const counted = point.quality === 'good' || (point.quality === 'uncertain' && !rules.treatUncertainAsBad);
  return counted && typeof point.value === 'number';
}

/** The element f sees for a point: its value, a stop (undefined), or nothing (a point f ignores). */
export function elementOf(point: SourcePoint, rules: AggregateRules): Element | undefined {
  if (isCountedPoint(point, rules)) return { timestamp: point.timestamp, value: point.value as number };
  return rules.ignoreBadDataPoints ? undefined : { timestamp: point.timestamp, value: undefined };
}

/**
 * Feed it the element before the bucket, then the bucket's points in order, then the first
 * element at or after its end: `finish` gives the bucket's aggregates.
 */
export class BucketAccumulator {
  /** Of the counted points: how many, their sum, and Welford's running mean and sum of squared deviations. */
  private count = 0;
  private sum = 0;
  private mean = 0;
  private squares = 0;
  private min: ExtremePoint | undefined;
  private max: ExtremePoint | undefined;
  private readonly statusCounts = { good: 0, uncertain: 0, bad: 0 };
  private readonly durations = { good: 0, uncertain: 0, bad: 0 };
  /** The last point's status and time (undefined: no point yet), which holds until the next point. */
  private statusQuality: Quality | undefined;
  private statusAt = 0;

  /** Over where f is defined: its length, the integrals of f and of (f - shift)^2, its variation. */
  private length = 0;
  private integral = 0;
  private shift: number | undefined;
  private shifted = 0;
  private shiftedSquares = 0;
  private variation = 0;
  /** Where f was last defined up to, and its value there: a piece or a point starting there joins it. */
  private lastEnd: { at: number; value: number } | undefined;
  /** The first counted point's value: the average of a bucket where f is defined at that point only. */
  private lone: number | undefined;
  /** f(a), when defined. */
  private atStart: number | undefined;

  /** The last element fed (the one before the bucket at first), and the bucket's first. */
  private previous: Element | undefined;
  private firstInside: Element | undefined;

  constructor(
    private readonly a: number,
    private readonly b: number,
    private readonly rules: AggregateRules,
    /** The last element before a (undefined: none). */
    private readonly before: Element | undefined,
  ) {
    this.previous = before;
  }

  /** The next point of the bucket (a <= timestamp < b), in order. */
  add(point: SourcePoint): void {
    this.statusCounts[point.quality]++;
    if (this.statusQuality !== undefined) this.durations[this.statusQuality] += point.timestamp - this.statusAt;
    this.statusQuality = point.quality;
    this.statusAt = point.timestamp;
    const element = elementOf(point, this.rules);
    if (element === undefined) return;
    this.firstInside ??= element;
    this.segment(this.previous, element);
    if (element.value !== undefined) {
      this.counted(point, element.value);
      this.knot(element.timestamp, element.value);
    }
    this.previous = element;
  }

  /** The bucket's aggregates, given the first element at or after b (undefined: none). */
  finish(after: Element | undefined): BucketValues {
    if (after !== undefined) this.segment(this.previous, after);
    if (this.statusQuality !== undefined) this.durations[this.statusQuality] += this.b - this.statusAt;
    const { count, length } = this;
    const defined = length > 0 || this.lone !== undefined;
    const average = length > 0 ? this.integral / length : this.lone;
    const spread = length > 0 ? Math.max(0, this.shiftedSquares / length - (this.shifted / length) ** 2) : 0;
    return {
      timestamp: this.a,
      average,
      max: this.max?.value,
      min: this.min?.value,
      count: count > 0 ? count : undefined,
      sum: count > 0 ? this.sum : undefined,
      interpolation: this.atStart,
      stepInterpolation: this.stepValue(after),
      totalVariation: defined ? this.variation : undefined,
      continuousVariance: defined ? spread : undefined,
      discreteVariance: count > 0 ? this.squares / count : undefined,
      countGood: this.statusCounts.good,
      countUncertain: this.statusCounts.uncertain,
      countBad: this.statusCounts.bad,
      durationGood: this.durations.good,
      durationUncertain: this.durations.uncertain,
      durationBad: this.durations.bad,
      maxDatapoint: this.max,
      minDatapoint: this.min,
    };
  }

  /** A counted point: the discrete aggregates (Welford's running variance, exact enough for any level). */
  private counted(point: SourcePoint, value: number): void {
    this.count++;
    this.sum += value;
    const delta = value - this.mean;
    this.mean += delta / this.count;
    this.squares += delta * (value - this.mean);
    const extreme = () => ({ timestamp: point.timestamp, value, status: point.quality === 'good' ? undefined : point.status });
    if (this.min === undefined || value < this.min.value) this.min = extreme();
    if (this.max === undefined || value > this.max.value) this.max = extreme();
  }

  /** f between two elements, the part of it inside [a, b). */
  private segment(from: Element | undefined, to: Element): void {
    if (from?.value === undefined) return;
    const { a, b, rules } = this;
    if (!rules.isStep && from.timestamp < a && a - from.timestamp > HOUR_MS) return;
    if (!rules.isStep && to.timestamp >= b && to.timestamp - b > HOUR_MS) return;
    const low = Math.max(from.timestamp, a);
    const high = Math.min(to.timestamp, b);
    if (high <= low) return;
    const v0 = from.value;
    const v1 = to.value;
    const valueAt =
      rules.isStep || v1 === undefined
        ? () => v0
        : (t: number) => v0 + (v1 - v0) * ((t - from.timestamp) / (to.timestamp - from.timestamp));
    this.piece(low, high, valueAt(low), valueAt(high));
  }

  /** f on [low, high), from f(low) to f(high-), linear between. */
  private piece(low: number, high: number, f0: number, f1: number): void {
    this.join(low, f0);
    this.variation += Math.abs(f1 - f0);
    const length = high - low;
    this.length += length;
    this.integral += (length * (f0 + f1)) / 2;
    // Squares about the first value, so that a series far from 0 keeps its variance's digits.
    this.shift ??= f0;
    const g0 = f0 - this.shift;
    const g1 = f1 - this.shift;
    this.shifted += (length * (g0 + g1)) / 2;
    this.shiftedSquares += (length * (g0 * g0 + g0 * g1 + g1 * g1)) / 3;
    this.lastEnd = { at: high, value: f1 };
  }

  /** A counted point inside the bucket: f is defined there, whatever the segments around it. */
  private knot(at: number, value: number): void {
    this.join(at, value);
    this.lone ??= value;
    this.lastEnd = { at, value };
  }

  /** Where f goes on at `at` with `value`: the jump from where it was, when it was defined up to there. */
  private join(at: number, value: number): void {
    if (this.lastEnd?.at === at) this.variation += Math.abs(value - this.lastEnd.value);
    if (at === this.a) this.atStart ??= value;
  }

  /** The last counted value at or before a, when f taken as a step series is defined at a. */
  private stepValue(after: Element | undefined): number | undefined {
    const first = this.firstInside;
    if (first?.timestamp === this.a) return first.value;
    if (this.before?.value === undefined || (first ?? after) === undefined) return undefined;
    return this.before.value;
  }
}
