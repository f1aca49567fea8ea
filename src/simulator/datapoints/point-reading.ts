import type { Quality } from './point-values.js';
import type { SeriesPoint, SeriesPoints } from './series-points.js';
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
export function isVisible(
  quality: Quality,
  query: Pick<PointQuery, 'ignoreBadDataPoints' | 'treatUncertainAsBad'>,
): boolean {
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
  const visible = (point: SeriesPoint) => isVisible(point.quality, query);
  const json = (point: SeriesPoint) => rawPointJson(point, query.includeStatus);
  const points: string[] = [];
  if (first && query.includeOutsidePoints) {
    let before = series.pointBefore(query.start);
    while (before !== undefined && !visible(before)) before = series.pointBefore(before.timestamp);
    if (before !== undefined) points.push(json(before));
  }
  const walk = series.pointsFrom(from);
  let served = 0;
  let point = walk.next();
  for (; !point.done && point.value.timestamp < query.end; point = walk.next()) {
    if (!visible(point.value)) continue;
    if (served === limit) return { points, next: point.value.timestamp };
    points.push(json(point.value));
    served++;
  }
  if (query.includeOutsidePoints) {
    while (!point.done && !visible(point.value)) point = walk.next();
    if (!point.done) points.push(json(point.value));
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
  const walk = series.pointsFrom(origin);
  const nextCounted = () => {
    let point = walk.next();
    while (!point.done && !isCounted(point.value.quality, query)) point = walk.next();
    return point.done ? undefined : point.value;
  };
  const points: string[] = [];
  let point = nextCounted();
  while (point !== undefined && points.length < limit) {
    const bucket = bucketOf(point.timestamp, origin, granularity);
    if (bucket >= query.end) break;
    const stop = nextBucket(bucket, granularity);
    const sums: BucketSums = { count: 0, sum: 0, min: Infinity, max: -Infinity };
    for (; point !== undefined && point.timestamp < stop; point = nextCounted()) {
      const { value } = point;
      if (typeof value !== 'number') continue;
      sums.count++;
      sums.sum += value;
      sums.min = Math.min(sums.min, value);
      sums.max = Math.max(sums.max, value);
    }
    points.push(aggregatePointJson(bucket, sums, query.aggregates));
  }
  const next = point === undefined ? undefined : bucketOf(point.timestamp, origin, granularity);
  return { points, next: next !== undefined && next < query.end ? next : undefined };
}
