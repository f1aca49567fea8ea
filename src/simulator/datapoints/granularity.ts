import { shown } from '../filter-object.js';
import { localDayOf, startOfLocalDay, startOfLocalHour, type TimeZone } from './time-zone.js';

/**
 * The `granularity` of an aggregate query, `N` + unit, and the buckets it cuts time into.
 *
 * Alignment, as the platform documents it: `start` is rounded down to a whole *unit* (second,
 * minute, hour, day, or the first of the month), not to a whole multiple of N; buckets of N units
 * follow from there. So `3h` from 10:20 gives buckets at 10:00, 13:00, 16:00... A bucket is
 * answered when it starts before `end`, and holds every point of its whole span (the last one may
 * reach past `end`, as the platform's does).
 *
 * With a `timeZone` (docs.cognite.com/dev/concepts/aggregation/calendar): days start at local
 * midnight and months on the local first of the month, so a day across a daylight-saving change
 * lasts 23 or 25 hours; hours are rounded down to a whole local hour (30 minutes off UTC's in a
 * half-hour zone) and then last 3,600,000 ms each, daylight saving or not; seconds and minutes do
 * not change with the zone. Without one, every unit is UTC's.
 */
export type GranularityUnit = 's' | 'm' | 'h' | 'd' | 'mo';

export interface Granularity {
  count: number;
  unit: GranularityUnit;
  /** As given, e.g. `15m`: for the cursor binding. */
  text: string;
}

const UNIT_MS: Record<Exclude<GranularityUnit, 'mo'>, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DAY_MS = UNIT_MS.d;
/** The platform's bounds of N per unit. */
const MAX_COUNT: Record<GranularityUnit, number> = { s: 120, m: 120, h: 100_000, d: 100_000, mo: 100_000 };
const FORM = /^([0-9]{1,6})(s|m|h|d|mo)$/;

export const GRANULARITY_EXPECTED = 'expected N followed by s, m, h, d or mo (s, m: N in 1..120; h, d, mo: N in 1..100000)';

export type GranularityParse = { ok: true; value: Granularity } | { ok: false; message: string };

export function parseGranularity(given: unknown, field: string): GranularityParse {
  const match = typeof given === 'string' ? FORM.exec(given) : null;
  const unit = match?.[2] as GranularityUnit | undefined;
  const count = Number(match?.[1]);
  if (match === null || unit === undefined || count < 1 || count > MAX_COUNT[unit]) {
    return { ok: false, message: `Invalid property '${field}': ${GRANULARITY_EXPECTED}, got ${shown(given)}.` };
  }
  return { ok: true, value: { count, unit, text: `${count}${unit}` } };
}

/** The buckets of one query: where the first starts, which holds a time, where the next starts. */
export interface BucketGrid {
  /** `time` rounded down to a whole unit of the granularity: where the first bucket starts. */
  align(time: number): number;
  /** The start of the bucket after the one starting at `bucketStart`. */
  next(bucketStart: number): number;
  /** The start of the bucket holding `time` (>= origin), on the grid of buckets from `origin`. */
  bucketOf(time: number, origin: number): number;
}

/** The grid of `granularity` in `zone` (undefined: UTC). */
export function bucketGrid(granularity: Granularity, zone: TimeZone | undefined): BucketGrid {
  const { count, unit } = granularity;
  if (unit === 'mo') return monthGrid(count, zone);
  if (unit === 'd' && zone !== undefined) return localDayGrid(count, zone);
  const width = count * UNIT_MS[unit];
  const align =
    unit === 'h' && zone !== undefined
      ? (time: number) => startOfLocalHour(zone, time)
      : (time: number) => Math.floor(time / UNIT_MS[unit]) * UNIT_MS[unit];
  return {
    align,
    next: (bucketStart) => bucketStart + width,
    bucketOf: (time, origin) => origin + Math.floor((time - origin) / width) * width,
  };
}

/** Days of local time: N calendar days from the origin's, each from its first instant. */
function localDayGrid(count: number, zone: TimeZone): BucketGrid {
  const dayOf = (time: number) => localDayOf(zone, time);
  return {
    align: (time) => startOfLocalDay(zone, dayOf(time)),
    next: (bucketStart) => startOfLocalDay(zone, dayOf(bucketStart) + count),
    bucketOf: (time, origin) => {
      const first = dayOf(origin);
      return startOfLocalDay(zone, first + Math.floor((dayOf(time) - first) / count) * count);
    },
  };
}

/** Calendar months, UTC's or the zone's: each starts on the first of the month at 00:00. */
function monthGrid(count: number, zone: TimeZone | undefined): BucketGrid {
  // A month as year * 12 + month (0-based), of the date in UTC or in the zone.
  const monthOf = (time: number) => {
    const date = new Date(zone === undefined ? time : localDayOf(zone, time) * DAY_MS);
    return date.getUTCFullYear() * 12 + date.getUTCMonth();
  };
  const startOf = (month: number) => {
    const first = Date.UTC(Math.floor(month / 12), month % 12, 1);
    return zone === undefined ? first : startOfLocalDay(zone, first / DAY_MS);
  };
  return {
    align: (time) => startOf(monthOf(time)),
    next: (bucketStart) => startOf(monthOf(bucketStart) + count),
    bucketOf: (time, origin) => {
      const first = monthOf(origin);
      return startOf(first + Math.floor((monthOf(time) - first) / count) * count);
    },
  };
}
