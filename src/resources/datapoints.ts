import { column, type ColumnSpec, EXTRA_COLUMN } from './resource.js';

/**
 * What bulk-extract knows of the datapoints inside time series (PLATFORM.md, datapoints): the
 * aggregates, the times a query takes, and the Parquet columns of a datapoints stream.
 */

/** Aggregates that count points or milliseconds (INT64 columns). */
const COUNT_AGGREGATES = [
  'count',
  'countGood',
  'countUncertain',
  'countBad',
  'durationGood',
  'durationUncertain',
  'durationBad',
] as const;

/** Aggregates that are values of the series (DOUBLE columns). */
const VALUE_AGGREGATES = [
  'average',
  'min',
  'max',
  'sum',
  'interpolation',
  'stepInterpolation',
  'totalVariation',
  'continuousVariance',
  'discreteVariance',
] as const;

/**
 * The aggregates bulk-extract exports (a stream's columns follow the order its job file lists
 * them in): the platform's, but the two that are a point per bucket (PLATFORM_AGGREGATES).
 */
export const AGGREGATES = [...VALUE_AGGREGATES, ...COUNT_AGGREGATES] as const;
export type Aggregate = (typeof AGGREGATES)[number];

/** Every aggregate the platform computes (PLATFORM.md, datapoints). */
export const PLATFORM_AGGREGATES: readonly string[] = [...AGGREGATES, 'maxDatapoint', 'minDatapoint'];

const COUNTS: ReadonlySet<Aggregate> = new Set(COUNT_AGGREGATES);

/** Whether an aggregate is a count or a duration in milliseconds (INT64), not a value (DOUBLE). */
export function isCountAggregate(name: Aggregate): boolean {
  return COUNTS.has(name);
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** The longest one unit of a granularity lasts, in UTC or at a fixed offset: a month of 31 days. */
const LONGEST_UNIT_MS: Readonly<Record<string, number>> = {
  s: 1000,
  m: 60_000,
  h: HOUR_MS,
  d: DAY_MS,
  mo: 31 * DAY_MS,
};
/** The widest change of a UTC offset: offsets lie between -12:00 and +14:00. */
const WIDEST_OFFSET_CHANGE_MS = 26 * HOUR_MS;

/**
 * How far before its query's `start` an aggregate bucket may start, in ms: less than this. The
 * platform aligns `start` down to a whole unit of the granularity (a unit, not N units), so the
 * first bucket is the one that holds `start`. Bounded by the longest unit rather than computed:
 * a month lasts up to 31 days, and with a time zone name (`Europe/Oslo`) a local hour, day or
 * month may also hold a change of the zone's UTC offset (daylight saving time, or the zone moving
 * to another offset), at most 26 hours. A fixed offset (`UTC+05:30`) changes nothing.
 */
export function bucketReachMs(granularity: string, timeZone?: string): number {
  const unit = /^\d+(s|m|h|d|mo)$/.exec(granularity)?.[1];
  const longest = unit === undefined ? undefined : LONGEST_UNIT_MS[unit];
  if (longest === undefined) throw new RangeError(`not a granularity: ${JSON.stringify(granularity)}`);
  const named = timeZone !== undefined && !/^UTC([+-]\d{2}:\d{2})?$/.test(timeZone);
  return named && unit !== 's' && unit !== 'm' ? longest + WIDEST_OFFSET_CHANGE_MS : longest;
}

/** The platform keeps timestamps from 1900-01-01 up to, not including, 2100-01-01. */
export const MIN_POINT_TIME = Date.UTC(1900, 0, 1);
export const MAX_POINT_TIME = Date.UTC(2100, 0, 1);

/** A time of the window as the job file gives it: fixed (epoch ms) or relative to the run's start. */
export type PointTime = { at: number } | { agoMs: number };

/** `time` resolved when a run starts (`nowMs`). */
export function resolvePointTime(time: PointTime, nowMs: number): number {
  return 'at' in time ? time.at : nowMs - time.agoMs;
}

/** The shape of a datapoints stream's shards: which value columns they have. */
export interface PointsShape {
  aggregates?: readonly Aggregate[] | undefined;
  /** With aggregates: written in every row, part of the row's key. */
  granularity?: string | undefined;
  includeStatus: boolean;
  /**
   * The series are data-model nodes (`instanceIds`, or a `view`): each row carries its node's key
   * as `instanceSpace` and `instanceExternalId`. Absent for a stream of ids, externalIds or
   * filters, whose rows keep the columns they always had (tables already written keep their schema).
   */
  instanceColumns?: true | undefined;
}

/** A stream's shard shape from its recorded parameters (pointsParams): for the manifest and verify. */
export function shapeFromParams(params: readonly (readonly [string, string])[]): PointsShape {
  const value = (key: string) => params.find(([name]) => name === key)?.[1];
  const aggregates = value('aggregates');
  // The series of a stream by instanceIds or of a view are data-model nodes (pointsParams records both).
  const nodes = value('instanceIds') !== undefined || value('view') !== undefined;
  return {
    aggregates: aggregates === undefined ? undefined : (aggregates.split(',') as Aggregate[]),
    granularity: value('granularity'),
    includeStatus: value('includeStatus') === 'true',
    ...(nodes ? { instanceColumns: true as const } : {}),
  };
}

/**
 * The Parquet columns of a datapoints stream, long format, one row per point (or aggregate
 * bucket): the series (and its node's key, for data-model series), the time, then the values:
 * `value` (numeric series) or `valueString` (string series), and the status when asked; or one
 * column per aggregate, counts and durations INT64, the rest DOUBLE. `extra` holds any field of a
 * point outside these, as JSON.
 */
export function pointColumns(shape: PointsShape): ColumnSpec[] {
  const node = shape.instanceColumns === true ? INSTANCE_COLUMNS.map((name) => column(name, 'string')) : [];
  const series = [column('timeseriesId', 'int64', true), column('externalId', 'string'), ...node];
  const extra = column(EXTRA_COLUMN, 'unknown-fields');
  if (shape.aggregates !== undefined) {
    const values = shape.aggregates.map((name) => column(name, isCountAggregate(name) ? 'int64' : 'double'));
    return [...series, column('granularity', 'string', true), column('timestamp', 'timestamp', true), ...values, extra];
  }
  const status = shape.includeStatus ? [column('statusCode', 'int64'), column('statusSymbol', 'string')] : [];
  const values = [column('value', 'double'), column('valueString', 'string')];
  return [...series, column('timestamp', 'timestamp', true), ...values, ...status, extra];
}

/** The columns of a data-model series' node key, as the change rows of a subscription name them too. */
export const INSTANCE_COLUMNS = ['instanceSpace', 'instanceExternalId'] as const;

/** The columns that identify a row: a series' point at a time (aggregates: of a granularity). */
export function pointKey(shape: PointsShape): string[] {
  return shape.aggregates === undefined ? ['timeseriesId', 'timestamp'] : ['timeseriesId', 'granularity', 'timestamp'];
}
