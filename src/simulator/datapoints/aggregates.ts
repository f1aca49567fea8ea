import {
  type AggregateRules,
  BucketAccumulator,
  type BucketValues,
  type Element,
  elementOf,
  isCountedPoint,
  type SourcePoint,
} from './aggregate-bucket.js';
import type { BucketGrid } from './granularity.js';

/**
 * The aggregate buckets of one query, read from a series through two questions only (PointSource),
 * so that where the points come from (generated, live, changed) is the adapter's business.
 */
export interface PointSource {
  /** The points at or after `time`, ascending by timestamp. */
  from(time: number): Iterable<SourcePoint>;
  /** The last point before `time`; undefined when there is none. */
  before(time: number): SourcePoint | undefined;
}

export interface BucketQuery extends AggregateRules {
  /** Exclusive: a bucket is answered when it starts before it. */
  end: number;
  /** Whether a status aggregate (count or duration by status) is asked: then every point makes its bucket answered. */
  byStatus: boolean;
}

export interface BucketReading {
  buckets: BucketValues[];
  /** The start of the next bucket to answer; undefined: none before `end`. */
  next: number | undefined;
}

/**
 * Up to `limit` buckets from `origin` (a bucket start), each computed from its points and the
 * elements just outside it (aggregate-bucket.ts). A bucket is answered when it holds a point that
 * an asked aggregate counts (a counted point; any point when a status aggregate is asked); the
 * others are left out, as the platform leaves out "time ranges that have no data points, even if
 * there are previous and next data points".
 */
export function readBuckets(
  source: PointSource,
  query: BucketQuery,
  grid: BucketGrid,
  origin: number,
  limit: number,
): BucketReading {
  const answering = (point: SourcePoint) => query.byStatus || isCountedPoint(point, query);
  const nextBucket = (from: number): number | undefined => {
    for (const point of source.from(from)) {
      if (!answering(point)) continue;
      const bucket = grid.bucketOf(point.timestamp, origin);
      return bucket < query.end ? bucket : undefined;
    }
    return undefined;
  };
  const buckets: BucketValues[] = [];
  let next = nextBucket(origin);
  while (next !== undefined && buckets.length < limit) {
    const end = grid.next(next);
    buckets.push(bucketValues(source, query, next, end));
    next = nextBucket(end);
  }
  return { buckets, next };
}

function bucketValues(source: PointSource, rules: AggregateRules, a: number, b: number): BucketValues {
  const bucket = new BucketAccumulator(a, b, rules, elementBefore(source, rules, a));
  for (const point of source.from(a)) {
    if (point.timestamp >= b) break;
    bucket.add(point);
  }
  return bucket.finish(elementFrom(source, rules, b));
}

/** The last element f sees before `time` (points it ignores passed over). */
function elementBefore(source: PointSource, rules: AggregateRules, time: number): Element | undefined {
  for (let point = source.before(time); point !== undefined; point = source.before(point.timestamp)) {
    const element = elementOf(point, rules);
    if (element !== undefined) return element;
  }
  return undefined;
}

/** The first element f sees at or after `time`. */
function elementFrom(source: PointSource, rules: AggregateRules, time: number): Element | undefined {
  for (const point of source.from(time)) {
    const element = elementOf(point, rules);
    if (element !== undefined) return element;
  }
  return undefined;
}
