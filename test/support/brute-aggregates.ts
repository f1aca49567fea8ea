import { expect } from 'vitest';

/**
 * The platform's aggregates recomputed the long way from a series' raw points (every point, its
 * status included), written apart from the simulator's aggregate-bucket.ts: buckets found by
 * walking time in quarter hours and reading the local date with Intl, the interpolated function
 * evaluated afresh at every time it is needed (a binary search for the points around it), its
 * integrals by the trapezoid and Simpson's rules piece by piece, variances in two passes.
 *
 * The meanings (docs/simulator.md, Aggregates): counted points are Good ones, and uncertain ones
 * with `treatUncertainAsBad: false`; f joins counted points (steps for a step series, lines
 * otherwise); with `ignoreBadDataPoints: false` a point that is not counted stops f (the last
 * counted value holds up to it, f is undefined after it until the next counted point); f is
 * undefined before the first point and after the last; across a bucket's edge a series that is
 * not a step series uses a point outside only within an hour of the edge.
 */
export interface RawPoint {
  timestamp: number;
  value?: number | string;
  status?: { code: number; symbol: string };
}

export interface BruteQuery {
  start: number;
  end: number;
  granularity: string;
  timeZone?: string;
  isStep: boolean;
  aggregates: readonly string[];
  ignoreBadDataPoints?: boolean;
  treatUncertainAsBad?: boolean;
  includeStatus?: boolean;
}

export type Bucket = Record<string, unknown> & { timestamp: number };

const HOUR = 3_600_000;
const QUARTER = 900_000;
const STATUS_NAMES = ['countGood', 'countUncertain', 'countBad', 'durationGood', 'durationUncertain', 'durationBad'];

function categoryOf(point: RawPoint): 'good' | 'uncertain' | 'bad' {
  const code = point.status?.code ?? 0;
  if (code >= 0x80000000) return 'bad';
  return code >= 0x40000000 ? 'uncertain' : 'good';
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** The local date (YYYY-MM-DD) and minute of `utc` in `zone` (a `UTC±HH:MM` zone by hand, an IANA one by Intl). */
function localParts(utc: number, zone: string): { date: string; minute: number } {
  const fixed = /^UTC([+-])(\d\d):(\d\d)$/.exec(zone);
  if (fixed !== null) {
    const offset = (fixed[1] === '-' ? -1 : 1) * (Number(fixed[2]) * HOUR + Number(fixed[3]) * 60_000);
    const iso = new Date(utc + offset).toISOString();
    return { date: iso.slice(0, 10), minute: Number(iso.slice(14, 16)) };
  }
  let format = formats.get(zone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('sv-SE', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formats.set(zone, format);
  }
  // sv-SE writes "2024-03-31 02:00".
  const text = format.format(utc);
  return { date: text.slice(0, 10), minute: Number(text.slice(14, 16)) };
}

/** Where each bucket starts and ends. */
interface Grid {
  /** The start of the first bucket: the one holding `start`. */
  first: number;
  bucketOf(t: number): number;
  next(a: number): number;
}

/**
 * The buckets of a query. In UTC by arithmetic on dates. In a zone: seconds and minutes as in UTC;
 * hours from the last quarter hour at or before `start` whose local minute is 0, N hours each;
 * days and months at every quarter hour from `start` to `end` where the local date (or month)
 * changes, each N-th.
 */
const grids = new Map<string, Grid>();

export function gridOf(query: Pick<BruteQuery, 'start' | 'end' | 'granularity' | 'timeZone'>): Grid {
  // The same query over many series walks its quarter hours once.
  const key = JSON.stringify([query.start, query.end, query.granularity, query.timeZone]);
  const known = grids.get(key);
  if (known !== undefined) return known;
  const grid = newGrid(query);
  grids.set(key, grid);
  return grid;
}

function newGrid(query: Pick<BruteQuery, 'start' | 'end' | 'granularity' | 'timeZone'>): Grid {
  const [, countText = '', unit = ''] = /^(\d+)(s|m|h|d|mo)$/.exec(query.granularity) ?? [];
  const n = Number(countText);
  const zone = query.timeZone === 'UTC' ? undefined : query.timeZone;
  if (unit === 'mo' && zone === undefined) {
    const monthOf = (t: number) => new Date(t).getUTCFullYear() * 12 + new Date(t).getUTCMonth();
    const startOf = (month: number) => Date.UTC(Math.floor(month / 12), month % 12, 1);
    const first = monthOf(query.start);
    return {
      first: startOf(first),
      bucketOf: (t) => startOf(first + Math.floor((monthOf(t) - first) / n) * n),
      next: (a) => startOf(monthOf(a) + n),
    };
  }
  if (unit === 'd' && zone !== undefined) return listedGrid(query, n, (t) => localParts(t, zone).date);
  if (unit === 'mo' && zone !== undefined) return listedGrid(query, n, (t) => localParts(t, zone).date.slice(0, 7));
  const unitMs = { s: 1000, m: 60_000, h: HOUR, d: 24 * HOUR }[unit] ?? Number.NaN;
  let first = Math.floor(query.start / unitMs) * unitMs;
  if (unit === 'h' && zone !== undefined) {
    first = Math.floor(query.start / QUARTER) * QUARTER;
    while (localParts(first, zone).minute !== 0) first -= QUARTER;
  }
  const width = n * unitMs;
  return { first, bucketOf: (t) => first + Math.floor((t - first) / width) * width, next: (a) => a + width };
}

/** Buckets where `key` (the local date or month) changes, each N-th, listed from `start` to `end`. */
function listedGrid(query: { start: number; end: number }, n: number, key: (t: number) => string): Grid {
  let at = Math.floor(query.start / QUARTER) * QUARTER;
  while (key(at - QUARTER) === key(at)) at -= QUARTER;
  const starts: number[] = [];
  for (let seen = 0; starts.length === 0 || starts[starts.length - 1]! < query.end; at += QUARTER) {
    if (key(at - QUARTER) !== key(at) && seen++ % n === 0) starts.push(at);
  }
  const index = (t: number) => starts.findLastIndex((start) => start <= t);
  return {
    first: starts[0]!,
    bucketOf: (t) => starts[index(t)]!,
    // Past the list: far away (a bucket that starts at or after end is never answered).
    next: (a) => starts[index(a) + 1] ?? Number.MAX_SAFE_INTEGER,
  };
}

/** The index of the first point at or after t. */
function firstAtOrAfter(points: readonly RawPoint[], t: number): number {
  let low = -1;
  let high = points.length;
  while (high - low > 1) {
    const middle = (low + high) >> 1;
    if (points[middle]!.timestamp >= t) high = middle;
    else low = middle;
  }
  return high;
}

/** A point f is built from: a counted value, or (undefined) a point that stops f. */
interface Knot {
  t: number;
  v: number | undefined;
}

/** Every bucket of `query` over `points` (every raw point of the series, ascending, statuses included). */
export function bruteAggregates(points: readonly RawPoint[], query: BruteQuery): Bucket[] {
  const { isStep, ignoreBadDataPoints = true, treatUncertainAsBad = true, includeStatus = false } = query;
  const counts = (point: RawPoint) => {
    const category = categoryOf(point);
    const counted = category === 'good' || (category === 'uncertain' && !treatUncertainAsBad);
    return counted && typeof point.value === 'number';
  };
  const knots: Knot[] = [];
  for (const point of points) {
    if (counts(point)) knots.push({ t: point.timestamp, v: point.value as number });
    else if (!ignoreBadDataPoints) knots.push({ t: point.timestamp, v: undefined });
  }
  const byStatus = query.aggregates.some((name) => STATUS_NAMES.includes(name));
  const grid = gridOf(query);
  const buckets: Bucket[] = [];
  for (let i = firstAtOrAfter(points, grid.first); i < points.length;) {
    const a = grid.bucketOf(points[i]!.timestamp);
    if (a >= query.end) break;
    const b = grid.next(a);
    const j = firstAtOrAfter(points, b);
    const inside = points.slice(i, j);
    const next = points[j]?.timestamp ?? b;
    i = j;
    if (!inside.some((point) => byStatus || counts(point))) continue;
    const all = {
      ...discrete(inside.filter(counts), includeStatus),
      ...continuous(knots, a, b, isStep),
      ...statuses(inside, Math.min(next, b)),
    };
    const bucket: Bucket = { timestamp: a };
    for (const name of query.aggregates) if (all[name] !== undefined) bucket[name] = all[name];
    buckets.push(bucket);
  }
  return buckets;
}

function discrete(counted: RawPoint[], includeStatus: boolean): Record<string, unknown> {
  if (counted.length === 0) return {};
  const values = counted.map((point) => point.value as number);
  let sum = 0;
  for (const value of values) sum += value;
  const mean = sum / values.length;
  let squares = 0;
  for (const value of values) squares += (value - mean) ** 2;
  const extreme = (better: (x: number, y: number) => boolean) => {
    let best = counted[0]!;
    for (const point of counted) if (better(point.value as number, best.value as number)) best = point;
    const shown = includeStatus && best.status !== undefined ? { status: best.status } : {};
    return { timestamp: best.timestamp, value: best.value, ...shown };
  };
  return {
    count: values.length,
    sum,
    min: values.reduce((x, y) => (y < x ? y : x)),
    max: values.reduce((x, y) => (y > x ? y : x)),
    discreteVariance: squares / values.length,
    minDatapoint: extreme((x, y) => x < y),
    maxDatapoint: extreme((x, y) => x > y),
  };
}

/** The aggregates of f over [a, b). */
function continuous(knots: readonly Knot[], a: number, b: number, isStep: boolean): Record<string, unknown> {
  /** The index of the last knot at or before t; -1 when none. */
  const lastAtOrBefore = (t: number) => {
    let low = -1;
    let high = knots.length;
    while (high - low > 1) {
      const middle = (low + high) >> 1;
      if (knots[middle]!.t <= t) low = middle;
      else high = middle;
    }
    return low;
  };
  /** f at t, with the line (or step) that holds from t on; undefined where f is. */
  const around = (t: number, step: boolean) => {
    const i = lastAtOrBefore(t);
    const x = knots[i];
    const y = knots[i + 1];
    if (x?.v === undefined) return undefined;
    const xv = x.v;
    const yv = y?.v;
    const usable = y !== undefined && (step || ((x.t >= a || a - x.t <= HOUR) && (y.t < b || y.t - b <= HOUR)));
    const at = (when: number) =>
      step || yv === undefined || y === undefined ? xv : xv + (yv - xv) * ((when - x.t) / (y.t - x.t));
    return { value: x.t === t ? xv : usable ? at(t) : undefined, usable, at };
  };
  // The knots strictly inside (a, b): from the first after a to the last before b.
  const within = knots.slice(lastAtOrBefore(a) + 1, lastAtOrBefore(b - 1) + 1);
  const breaks = [a, ...within.map((knot) => knot.t), b];
  let length = 0;
  let integral = 0;
  const pieces: { s: number; e: number; at: (t: number) => number }[] = [];
  let variation = 0;
  let last: { t: number; v: number } | undefined;
  let lone: number | undefined;
  for (let k = 0; k + 1 < breaks.length; k++) {
    const s = breaks[k]!;
    const e = breaks[k + 1]!;
    const here = around(s, isStep);
    const knot = knots[lastAtOrBefore(s)];
    if (knot?.t === s && knot.v !== undefined) {
      if (last?.t === s) variation += Math.abs(knot.v - last.v);
      last = { t: s, v: knot.v };
      lone ??= knot.v;
    }
    if (here === undefined || !here.usable) continue;
    const f0 = here.at(s);
    const f1 = here.at(e);
    if (last?.t === s) variation += Math.abs(f0 - last.v);
    variation += Math.abs(f1 - f0);
    last = { t: e, v: f1 };
    length += e - s;
    integral += ((e - s) * (f0 + f1)) / 2;
    pieces.push({ s, e, at: here.at });
  }
  const result: Record<string, unknown> = {
    interpolation: around(a, isStep)?.value,
    stepInterpolation: around(a, true)?.value,
  };
  if (length === 0) {
    if (lone === undefined) return result;
    return { ...result, average: lone, continuousVariance: 0, totalVariation: 0 };
  }
  const mean = integral / length;
  let squares = 0;
  for (const { s, e, at } of pieces) {
    // Simpson's rule: exact for (f - mean)^2, a square of a line.
    const g = (t: number) => (at(t) - mean) ** 2;
    squares += ((e - s) / 6) * (g(s) + 4 * g((s + e) / 2) + g(e));
  }
  return { ...result, average: mean, continuousVariance: squares / length, totalVariation: variation };
}

/** Counts by status of the bucket's points, and how long each status holds: to the next point, or b. */
function statuses(inside: readonly RawPoint[], end: number): Record<string, number> {
  const result: Record<string, number> = {
    countGood: 0,
    countUncertain: 0,
    countBad: 0,
    durationGood: 0,
    durationUncertain: 0,
    durationBad: 0,
  };
  inside.forEach((point, k) => {
    const category = categoryOf(point);
    const name = category === 'good' ? 'Good' : category === 'uncertain' ? 'Uncertain' : 'Bad';
    result[`count${name}`]!++;
    result[`duration${name}`]! += (inside[k + 1]?.timestamp ?? end) - point.timestamp;
  });
  return result;
}

/** Names whose values are floating point sums or integrals: compared within rounding. */
const ROUNDED = new Set(['average', 'sum', 'interpolation', 'totalVariation', 'continuousVariance', 'discreteVariance']);

/**
 * `actual` (what the simulator answered) equals `expected` (the brute force): the same buckets,
 * each with the same aggregates; counts, durations, min, max and the extreme points exact, the
 * sums and integrals within 1e-9 of the bucket's scale (variances: of its square).
 */
export function expectSameBuckets(
  actual: readonly Record<string, unknown>[],
  expected: readonly Bucket[],
  what: string,
): void {
  expect(actual.map((bucket) => bucket.timestamp), `${what}: bucket starts`).toEqual(expected.map((bucket) => bucket.timestamp));
  actual.forEach((bucket, i) => {
    const wanted = expected[i]!;
    const at = `${what}: bucket ${new Date(wanted.timestamp).toISOString()}`;
    expect(Object.keys(bucket).sort(), `${at}: aggregates`).toEqual(Object.keys(wanted).sort());
    const numbers = Object.values(wanted).filter((value): value is number => typeof value === 'number');
    const levels = [wanted.max, wanted.min, wanted.average, wanted.interpolation];
    const scale = Math.max(1, ...levels.map((v) => Math.abs(Number(v ?? 0))));
    for (const [name, value] of Object.entries(wanted)) {
      if (!ROUNDED.has(name) || typeof value !== 'number') {
        expect(bucket[name], `${at}: ${name}`).toEqual(value);
        continue;
      }
      const given = bucket[name] as number;
      const magnitude = name.endsWith('Variance') ? scale * scale : name === 'sum' || name === 'totalVariation' ? scale * numbers.length * 1e4 : scale;
      expect(Math.abs(given - value), `${at}: ${name} ${given} vs ${value}`).toBeLessThanOrEqual(1e-9 * magnitude);
    }
  });
}
