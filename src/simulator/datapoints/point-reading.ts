import type { Quality } from './point-values.js';
import type { SeriesPoint, SeriesPoints } from './series-points.js';
import { readBuckets } from './aggregates.js';
import { aggregatePointJson, rawPointJson } from './datapoint-json.js';
import { STATUS_AGGREGATES } from './datapoints-fields.js';
import type { PointQuery } from './datapoints-query.js';
import { bucketGrid, type Granularity } from './granularity.js';
import { seriesSource } from './series-source.js';

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
 * Up to `limit` aggregate points of the query's buckets from `origin` (the first bucket's start),
 * with the platform's meanings (aggregate-bucket.ts); buckets without a point the asked aggregates
 * count are left out, as the platform leaves them out.
 */
export function readAggregates(
  series: SeriesPoints,
  isStep: boolean,
  query: PointQuery,
  origin: number,
  limit: number,
): Reading {
  const grid = bucketGrid(query.granularity as Granularity, query.timeZone);
  const { ignoreBadDataPoints, treatUncertainAsBad } = query;
  const rules = { isStep, ignoreBadDataPoints, treatUncertainAsBad };
  const byStatus = query.aggregates.some((name) => STATUS_AGGREGATES.includes(name));
  const reading = readBuckets(seriesSource(series), { ...rules, end: query.end, byStatus }, grid, origin, limit);
  const points = reading.buckets.map((bucket) => aggregatePointJson(bucket, query.aggregates, query.includeStatus));
  return { points, next: reading.next };
}
