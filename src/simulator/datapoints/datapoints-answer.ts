import type { CursorCodec } from '../cursor.js';
import type { SeriesPoints } from './series-points.js';
import type { GeneratedTimeseries } from '../dataset/timeseries.js';
import { answerItemJson } from './datapoint-json.js';
import type { PointQuery } from './datapoints-query.js';
import { bucketGrid, type Granularity } from './granularity.js';
import { readAggregates, readRawPoints, type Reading } from './point-reading.js';

/** A query whose series was found, with what its cursor says (undefined: the first page). */
export interface ServedQuery {
  query: PointQuery;
  /** The time series item (its identity and kind head the answer's item). */
  timeseries: GeneratedTimeseries;
  series: SeriesPoints;
  position: number | undefined;
}

/** The answer's JSON text and the points in it. */
export interface Answer {
  text: string;
  points: number;
}

/**
 * `{"items":[...]}` in the order of the queries, each page read from its cursor's position (or
 * the query's start) with at most `limitOf(query)` points, and a cursor bound to the query when
 * more remain before `end`.
 */
export function answerOf(
  served: readonly ServedQuery[],
  cursors: CursorCodec,
  nowMs: number,
  limitOf: (query: PointQuery) => number,
): Answer {
  let points = 0;
  const items = served.map((one) => {
    const reading = readingOf(one, limitOf(one.query));
    points += reading.points.length;
    const { next } = reading;
    const cursor =
      next === undefined ? undefined : cursors.encode(one.query.binding, { position: next, issuedAtMs: nowMs });
    return answerItemJson(one.timeseries, reading.points, cursor);
  });
  return { text: `{"items":[${items.join(',')}]}`, points };
}

/** One query's page: raw points from its position (or start), or buckets from its position (or aligned start). */
function readingOf({ query, timeseries, series, position }: ServedQuery, limit: number): Reading {
  if (query.aggregates.length === 0) {
    return readRawPoints(series, query, position ?? query.start, limit, position === undefined);
  }
  const origin = position ?? bucketGrid(query.granularity as Granularity, query.timeZone).align(query.start);
  return readAggregates(series, timeseries.isStep, query, origin, limit);
}
