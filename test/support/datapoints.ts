import type { Datapoint, SeriesPoints, Simulator } from '../../src/simulator/index.js';
import { type Reply, send } from './http.js';

/**
 * Helpers of the datapoints tests: requests to `POST /timeseries/data/list`, cursor chains, and
 * what an answer must hold, recomputed here the long way from the generator's points (every point
 * of the series looked at, the platform's rules restated), not with the simulator's own readers.
 */

/** One item of a datapoints answer. */
export interface AnswerItem {
  id: number;
  externalId?: string;
  instanceId?: { space: string; externalId: string };
  isString: boolean;
  isStep: boolean;
  type: string;
  unit?: string;
  unitExternalId?: string;
  nextCursor?: string;
  datapoints: Record<string, unknown>[];
}

export type Query = Record<string, unknown>;
export type Body = { items: Query[] } & Record<string, unknown>;

export function postPoints(sim: Simulator, body: unknown, headers: Record<string, string>): Promise<Reply> {
  return send(`${sim.baseUrl}/timeseries/data/list`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** The answer's items; fails unless the status is 200. */
export async function answerItems(
  sim: Simulator,
  body: unknown,
  headers: Record<string, string>,
): Promise<AnswerItem[]> {
  const reply = await postPoints(sim, body, headers);
  if (reply.status !== 200) throw new Error(`data/list answered ${reply.status}: ${reply.text}`);
  return reply.json<{ items: AnswerItem[] }>().items;
}

/**
 * Follows every query's cursor chain at once: each request repeats the queries still going, each
 * with only its cursor changed (the others done), until no answer carries `nextCursor`. Returns
 * each query's points in order, and the number of requests.
 */
export async function drainQueries(
  sim: Simulator,
  body: Body,
  headers: Record<string, string>,
): Promise<{ points: Record<string, unknown>[][]; requests: number }> {
  const points: Record<string, unknown>[][] = body.items.map(() => []);
  let going = body.items.map((query, index) => ({ index, query }));
  let requests = 0;
  while (going.length > 0) {
    if (++requests > 10_000) throw new Error('cursor chains did not end within 10,000 requests');
    const items = await answerItems(sim, { ...body, items: going.map(({ query }) => query) }, headers);
    const next: typeof going = [];
    items.forEach((item, position) => {
      const { index, query } = going[position] ?? { index: -1, query: {} };
      points[index]?.push(...item.datapoints);
      if (item.nextCursor !== undefined) next.push({ index, query: { ...query, cursor: item.nextCursor } });
    });
    going = next;
  }
  return { points, requests };
}

/** The platform's flags of a raw query, unset meaning its defaults. */
export interface PointFlags {
  includeStatus?: boolean;
  ignoreBadDataPoints?: boolean;
  treatUncertainAsBad?: boolean;
}

const UNCERTAIN_BIT = 0x40000000;
const BAD_BIT = 0x80000000;

/** Bad by its code's category: the top two bits 10; uncertain: 01 (OPC UA). */
export function categoryOf(point: Datapoint): 'good' | 'uncertain' | 'bad' {
  const code = point.status?.code ?? 0;
  if (code >= BAD_BIT) return 'bad';
  return code >= UNCERTAIN_BIT ? 'uncertain' : 'good';
}

/** Every point of the series, from the generator, in order. */
export function allPoints(series: SeriesPoints): Datapoint[] {
  return Array.from({ length: series.count }, (_, k) => series.point(k));
}

/**
 * The raw points a query of [start, end) must answer: by default Good ones only; bad ones with
 * `ignoreBadDataPoints: false`; uncertain ones too with `treatUncertainAsBad: false`. Statuses
 * only with `includeStatus`.
 */
export function expectedRawPoints(
  series: SeriesPoints,
  start: number,
  end: number,
  flags: PointFlags = {},
): Datapoint[] {
  const { includeStatus = false, ignoreBadDataPoints = true, treatUncertainAsBad = true } = flags;
  return allPoints(series)
    .filter((point) => point.timestamp >= start && point.timestamp < end)
    .filter((point) => {
      const category = categoryOf(point);
      if (category === 'good' || !ignoreBadDataPoints) return true;
      return category === 'uncertain' && !treatUncertainAsBad;
    })
    .map((point) => {
      if (includeStatus || point.status === undefined) return point;
      const { status: _status, ...rest } = point;
      return rest;
    });
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * The aggregates of [start, end) by the rules the simulator documents, the long way: the first
 * bucket starts at `start` rounded down to a whole unit (UTC), buckets of N units follow, a bucket
 * is there when it starts before `end` and holds a counted point (Good, or uncertain with
 * `treatUncertainAsBad: false`), and it covers its whole span.
 */
export function expectedAggregates(
  series: SeriesPoints,
  query: { start: number; end: number; granularity: string; treatUncertainAsBad?: boolean },
): { timestamp: number; count: number; average: number; min: number; max: number; sum: number }[] {
  const [, countText = '', unit = ''] = /^(\d+)(s|m|h|d|mo)$/.exec(query.granularity) ?? [];
  const n = Number(countText);
  const bucketOf = (time: number): number => {
    if (unit === 'mo') {
      const origin = new Date(query.start);
      const from = origin.getUTCFullYear() * 12 + origin.getUTCMonth();
      const at = new Date(time);
      const month = from + Math.floor((at.getUTCFullYear() * 12 + at.getUTCMonth() - from) / n) * n;
      return Date.UTC(Math.floor(month / 12), month % 12, 1);
    }
    const unitMs = UNIT_MS[unit] ?? Number.NaN;
    const origin = Math.floor(query.start / unitMs) * unitMs;
    return origin + Math.floor((time - origin) / (n * unitMs)) * n * unitMs;
  };
  const firstBucket = bucketOf(query.start);
  const buckets = new Map<number, { count: number; sum: number; min: number; max: number }>();
  for (const point of allPoints(series)) {
    const category = categoryOf(point);
    if (category === 'bad' || (category === 'uncertain' && query.treatUncertainAsBad !== false)) continue;
    if (point.timestamp < firstBucket) continue;
    const bucket = bucketOf(point.timestamp);
    if (bucket >= query.end) continue;
    const value = point.value as number;
    const sums = buckets.get(bucket) ?? { count: 0, sum: 0, min: Infinity, max: -Infinity };
    sums.count++;
    sums.sum += value;
    sums.min = Math.min(sums.min, value);
    sums.max = Math.max(sums.max, value);
    buckets.set(bucket, sums);
  }
  return [...buckets.entries()]
    .sort(([a], [b]) => a - b)
    .map(([timestamp, sums]) => ({ timestamp, ...sums, average: sums.sum / sums.count }));
}
