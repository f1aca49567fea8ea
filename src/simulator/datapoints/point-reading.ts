import type { Quality } from './point-values.js';
import type { SeriesPoints } from './series-points.js';
import { aggregatePointJson, type BucketSums, rawPointJson } from './datapoint-json.js';
import type { PointQuery } from './datapoints-query.js';
import { bucketOf, type Granularity, nextBucket } from './granularity.js';

/** One item's page: its points as JSON texts, and where the next page starts (undefined: none). */
export interface Reading {
  points: string[];
  /** Raw: the timestamp of the next point to serve. Aggregates: the start of the next bucket. */
  next: number | undefined;
}

/**
 * Which raw points a query sees, by the platform's defaults and flags: Good always; with
 * `ignoreBadDataPoints` (default true) bad points are left out, and uncertain ones too unless
 * `treatUncertainAsBad` is false; with `ignoreBadDataPoints: false` every point is there.
 */
export function isVisible(quality: Quality, query: PointQuery): boolean {
  if (quality === 'good' || !query.ignoreBadDataPoints) return true;
  return quality === 'uncertain' && !query.treatUncertainAsBad;
}

/**
 * The raw points of the query from time `from` on, at most `limit` of them. A cursor is due only
 * when a visible point remains before `end`. With `includeOutsidePoints`, the first page also
 * holds the last visible point before `start` and the last page the first one at or after `end`;
 * like the platform's, they do not count against `limit`.
 */
export function readRawPoints(
  series: SeriesPoints,
  query: PointQuery,
  from: number,
  limit: number,
  first: boolean,
): Reading {
  const visible = (k: number) => isVisible(series.qualityOf(k), query);
  const json = (k: number) => rawPointJson(series, k, query.includeStatus);
  const end = series.indexAtOrAfter(query.end);
  const points: string[] = [];
  if (first && query.includeOutsidePoints) {
    let before = series.indexAtOrAfter(query.start) - 1;
    while (before >= 0 && !visible(before)) before--;
    if (before >= 0) points.push(json(before));
  }
  let k = series.indexAtOrAfter(from);
  let served = 0;
  for (; k < end && served < limit; k++) {
    if (!visible(k)) continue;
    points.push(json(k));
    served++;
  }
  while (k < end && !visible(k)) k++;
  if (k < end) return { points, next: series.timestampOf(k) };
  if (query.includeOutsidePoints) {
    let after = end;
    while (after < series.count && !visible(after)) after++;
    if (after < series.count) points.push(json(after));
  }
  return { points, next: undefined };
}

/**
 * Which points the five served aggregates are computed from. Bad points never: they are left out
 * as the platform leaves them out by default. Uncertain points only with `treatUncertainAsBad:
 * false` (the platform's default, true, treats them as bad). `ignoreBadDataPoints` changes nothing
 * here: on the platform it decides how interpolating aggregates bridge a bad stretch, and the
 * simulator serves none of those.
 */
export function isCounted(quality: Quality, query: PointQuery): boolean {
  return quality === 'good' || (quality === 'uncertain' && !query.treatUncertainAsBad);
}

/**
 * Up to `limit` aggregate points of the query's buckets from `origin` (the first bucket's start),
 * each computed exactly from its raw points in their order; buckets without a counted point are
 * left out, as the platform leaves them out. NOTE: `average` is the plain mean of the raw values;
 * the platform's is time-weighted (an integral over the interpolated series). The simulator serves
 * the mean so that an export can be checked against the raw points independently.
 */
export function readAggregates(series: SeriesPoints, query: PointQuery, origin: number, limit: number): Reading {
  const granularity = query.granularity as Granularity;
  const counted = (k: number) => isCounted(series.qualityOf(k), query);
  const nextCounted = (from: number) => {
    let k = from;
    while (k < series.count && !counted(k)) k++;
    return k;
  };
  const points: string[] = [];
  let k = nextCounted(series.indexAtOrAfter(origin));
  while (k < series.count && points.length < limit) {
    const bucket = bucketOf(series.timestampOf(k), origin, granularity);
    if (bucket >= query.end) break;
    const stop = series.indexAtOrAfter(nextBucket(bucket, granularity));
    const sums: BucketSums = { count: 0, sum: 0, min: Infinity, max: -Infinity };
    for (; k < stop; k++) {
      const value = counted(k) ? series.valueOf(k) : undefined;
      if (typeof value !== 'number') continue;
      sums.count++;
      sums.sum += value;
      sums.min = Math.min(sums.min, value);
      sums.max = Math.max(sums.max, value);
    }
    points.push(aggregatePointJson(bucket, sums, query.aggregates));
    k = nextCounted(k);
  }
  const next = k < series.count ? bucketOf(series.timestampOf(k), origin, granularity) : undefined;
  return { points, next: next !== undefined && next < query.end ? next : undefined };
}
