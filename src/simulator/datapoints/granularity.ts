import { shown } from '../filter-object.js';

/**
 * The `granularity` of an aggregate query, `N` + unit, and the buckets it cuts time into.
 *
 * Alignment, as the platform documents it: `start` is rounded down to a whole *unit* (second,
 * minute, hour, day in UTC, or the first of the month), not to a whole multiple of N; buckets of
 * N units follow from there. So `3h` from 10:20 gives buckets at 10:00, 13:00, 16:00... A bucket
 * is answered when it starts before `end`, and holds every point of its whole span (the last one
 * may reach past `end`, as the platform's does). Months are calendar months in UTC.
 */
export type GranularityUnit = 's' | 'm' | 'h' | 'd' | 'mo';

export interface Granularity {
  count: number;
  unit: GranularityUnit;
  /** As given, e.g. `15m`: for the cursor binding. */
  text: string;
}

const UNIT_MS: Record<Exclude<GranularityUnit, 'mo'>, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
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

/** `time` rounded down to a whole unit of the granularity: where the first bucket starts. */
export function alignToUnit(time: number, { unit }: Granularity): number {
  if (unit === 'mo') {
    const date = new Date(time);
    return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  }
  return Math.floor(time / UNIT_MS[unit]) * UNIT_MS[unit];
}

/** The start of the bucket after the one starting at `bucketStart`. */
export function nextBucket(bucketStart: number, { count, unit }: Granularity): number {
  if (unit !== 'mo') return bucketStart + count * UNIT_MS[unit];
  const date = new Date(bucketStart);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + count, 1);
}

/** The start of the bucket holding `time` (>= origin), on the grid of buckets from `origin`. */
export function bucketOf(time: number, origin: number, granularity: Granularity): number {
  const { count, unit } = granularity;
  if (unit !== 'mo') {
    const width = count * UNIT_MS[unit];
    return origin + Math.floor((time - origin) / width) * width;
  }
  const from = new Date(origin);
  const at = new Date(time);
  const months = (at.getUTCFullYear() - from.getUTCFullYear()) * 12 + at.getUTCMonth() - from.getUTCMonth();
  return Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + Math.floor(months / count) * count, 1);
}
