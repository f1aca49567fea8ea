import type { Datapoint, SeriesPoints, Simulator } from '../../src/simulator/index.js';
import { type Bucket, bruteAggregates } from './brute-aggregates.js';
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

/** The five aggregates the first tests asked for: what expectedAggregates computes unless told. */
const FIVE = ['count', 'average', 'min', 'max', 'sum'];

/**
 * The aggregates of [start, end) by the platform's meanings, the long way (brute-aggregates.ts),
 * from every point the generator makes for the series; by default the five of FIVE.
 */
export function expectedAggregates(
  series: SeriesPoints,
  query: {
    start: number;
    end: number;
    granularity: string;
    timeZone?: string;
    aggregates?: readonly string[];
    treatUncertainAsBad?: boolean;
    ignoreBadDataPoints?: boolean;
  },
): Bucket[] {
  const { aggregates = FIVE, ...rest } = query;
  return bruteAggregates(allPoints(series), { ...rest, aggregates, isStep: series.shape.isStep });
}
