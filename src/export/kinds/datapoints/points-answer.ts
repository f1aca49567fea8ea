import { BadResponseError, type RequestContext } from '../../../http/errors.js';
import { type Aggregate, isCountAggregate } from '../../../resources/index.js';
import { PointList, type PointValue } from '../../../sink/index.js';
import type { NodeId, SeriesRef } from '../../state/index.js';

export type { SeriesRef };

/**
 * The aggregates a request asked for, and how far before a query's `start` a bucket may start
 * (less than `reachMs`: bucketReachMs of the stream's granularity and time zone).
 */
export interface AggregatesAsked {
  names: readonly Aggregate[];
  reachMs: number;
}

/** A query of a request, as the answer is checked against it. */
export interface AskedQuery {
  ref: SeriesRef;
  /** Inclusive. */
  start: number;
  /** Exclusive. */
  end: number;
  limit: number;
  /** The last timestamp this query's chain answered so far; the next must lie after it. */
  last: number | null;
}

/** One series' part of an answer, checked: its points in strictly increasing time within the query. */
export interface SeriesAnswer {
  /** The query it answers (its index in the request). */
  query: number;
  id: number;
  externalId: string | undefined;
  /** The series' data-model node: the key its query named it by (none for a query by id or externalId). */
  instanceId?: NodeId | undefined;
  isString: boolean;
  nextCursor: string | undefined;
  points: PointList;
}

/** The values a bad numeric point may carry instead of a number. */
export const SPECIAL_VALUES: Readonly<Record<string, number>> = { 'NaN': NaN, 'Infinity': Infinity, '-Infinity': -Infinity };

/**
 * Reads the answer of `POST /timeseries/data/list` to `queries`: the items answer the queries in
 * their order, each matched by id, externalId or instanceId (with `ignoreUnknownIds` a deleted series leaves
 * no item, so a query the next item does not match is left out, for confirmUnknown to confirm; two
 * windows of one series are two queries), and every point must be well formed, inside its query's
 * window (an aggregate bucket may start before `start`, less than `reachMs` before it), after the
 * query's last point, and no more than its limit. Anything else is a broken server: it fails the
 * request, as writing it could lose or repeat a point. Returns the items, and the queries nothing
 * answered.
 */
export function readAnswer(
  body: unknown,
  queries: readonly AskedQuery[],
  aggregates: AggregatesAsked | undefined,
  ctx: RequestContext,
): { series: SeriesAnswer[]; unknown: number[] } {
  const match = new AnswerMatch(queries, aggregates, ctx);
  const items = (body as { items?: unknown } | null)?.items;
  if (!Array.isArray(items)) return match.fail("has no 'items' array");
  const series = items.map((item: unknown, position) => readItem(item, position, match));
  return { series, unknown: match.unknown() };
}

/**
 * Which queries the items of one answer answered so far, in order, for readAnswer and for its
 * scan (points-scan.ts), which must match and fail alike.
 */
export class AnswerMatch {
  /** The next query an item may answer: items come in the order of their queries. */
  private next = 0;
  private readonly answered = new Set<number>();

  constructor(
    readonly queries: readonly AskedQuery[],
    readonly aggregates: AggregatesAsked | undefined,
    private readonly ctx: RequestContext,
  ) {}

  /** The earliest timestamp an answer to `query` may hold: its start; for aggregates, of a bucket that holds it. */
  earliest(query: AskedQuery): number {
    return this.aggregates === undefined ? query.start : query.start - this.aggregates.reachMs + 1;
  }

  fail(what: string): never {
    throw new BadResponseError(`The datapoints answer ${what}: refusing it rather than writing points that may be wrong`, this.ctx);
  }

  /** The query series `id` answers, the next one it matches; -1 when none does (take fails then). */
  find(id: number, externalId: unknown, instanceId?: unknown): number {
    const { queries } = this;
    let query = this.next;
    while (query < queries.length && !matches(queries[query]!, id, externalId, instanceId)) query++;
    return query === queries.length ? -1 : query;
  }

  /** Takes the query the item at `at` (series `id`) answers: find's, or fails naming why there is none. */
  take(at: string, id: number, externalId: unknown, instanceId?: unknown): number {
    const query = this.find(id, externalId, instanceId);
    if (query < 0) {
      const asked = this.queries.some((each) => matches(each, id, externalId, instanceId));
      return this.fail(asked ? `answers series ${id} out of the order of the queries, or more often than asked` : `${at} is series ${id}, which the request did not ask for`);
    }
    this.next = query + 1;
    this.answered.add(query);
    return query;
  }

  /** The queries no item answered. */
  unknown(): number[] {
    return this.queries.map((_, i) => i).filter((i) => !this.answered.has(i));
  }
}

function matches(query: AskedQuery, id: number, externalId: unknown, instanceId: unknown): boolean {
  const { ref } = query;
  if ('id' in ref) return ref.id === id;
  if ('externalId' in ref) return ref.externalId === externalId;
  const given = instanceId as { space?: unknown; externalId?: unknown } | null | undefined;
  return given?.space === ref.instanceId.space && given.externalId === ref.instanceId.externalId;
}

/** Item `position` of an answer, parsed: checked and matched to its query (readAnswer). */
export function readItem(item: unknown, position: number, match: AnswerMatch): SeriesAnswer {
  const fail = (what: string) => match.fail(what);
  const at = `item ${position + 1}`;
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return fail(`${at} is not an object`);
  const { id, externalId, instanceId, isString, nextCursor, datapoints } = item as Record<string, unknown>;
  if (typeof id !== 'number' || !Number.isSafeInteger(id)) return fail(`${at} has no integer 'id'`);
  if (externalId !== undefined && typeof externalId !== 'string') return fail(`${at} (id ${id}) has an 'externalId' that is not a string`);
  if (typeof isString !== 'boolean') return fail(`${at} (id ${id}) has no boolean 'isString'`);
  if (nextCursor !== undefined && (typeof nextCursor !== 'string' || nextCursor === '')) {
    return fail(`${at} (id ${id}) has a 'nextCursor' that is not a non-empty string`);
  }
  if (!Array.isArray(datapoints)) return fail(`${at} (id ${id}) has no 'datapoints' array`);
  const query = match.take(at, id, externalId, instanceId);
  const asked = match.queries[query]!;
  if (datapoints.length > asked.limit) {
    return fail(`${at} (id ${id}) holds ${datapoints.length} points, more than its limit ${asked.limit}`);
  }
  // A chain started again by time gets the bucket of its last aggregate again (aligned down): dropped.
  const { aggregates } = match;
  const repeated = aggregates === undefined ? 0 : leadingRepeats(datapoints, asked.last);
  const points = repeated === 0 ? datapoints : datapoints.slice(repeated);
  const problem = pointsProblem(points, asked, match.earliest(asked), isString, aggregates?.names);
  if (problem !== undefined) return fail(`${at} (id ${id}): ${problem}`);
  const list = PointList.of(points as PointValue[]);
  const answer: SeriesAnswer = { query, id, externalId, isString, nextCursor, points: list };
  // The key the query named the series by, which the item matched: as the scan of an answer to
  // queries by id or externalId reads none, an answer to them carries none either.
  if ('instanceId' in asked.ref) answer.instanceId = { ...asked.ref.instanceId };
  return answer;
}

/** How many points at the head of `points` lie at or before `last` (the bucket of `last`, again). */
function leadingRepeats(points: readonly unknown[], last: number | null): number {
  if (last === null) return 0;
  let k = 0;
  while (k < points.length && ((points[k] as { timestamp?: unknown } | null)?.timestamp ?? Infinity) === last) k++;
  return k;
}

/** What is wrong with a series' points, if anything. */
function pointsProblem(
  points: readonly unknown[],
  query: AskedQuery,
  earliest: number,
  isString: boolean,
  aggregates: readonly Aggregate[] | undefined,
): string | undefined {
  let last = query.last ?? -Infinity;
  for (let k = 0; k < points.length; k++) {
    const point = points[k];
    if (point === null || typeof point !== 'object' || Array.isArray(point)) return `point ${k + 1} is not an object`;
    const { timestamp } = point as Record<string, unknown>;
    if (typeof timestamp !== 'number' || !Number.isSafeInteger(timestamp)) return `point ${k + 1} has no integer 'timestamp'`;
    if (timestamp <= last) return `point ${k + 1} at ${timestamp} does not come after the point before it (${last})`;
    // An aggregate's bucket may start before `start`, which is aligned down to a whole unit: the bucket that holds it.
    if (timestamp < earliest || timestamp >= query.end) {
      const before = earliest < query.start ? `, or a bucket holding its start (from ${earliest})` : '';
      return `point ${k + 1} at ${timestamp} lies outside the query's window [${query.start}, ${query.end})${before}`;
    }
    last = timestamp;
    const fields = point as Record<string, unknown>;
    const problem = aggregates === undefined ? rawProblem(fields, isString) : aggregateProblem(fields, aggregates);
    if (problem !== undefined) return `point ${k + 1} at ${timestamp}: ${problem}`;
  }
  return undefined;
}

function rawProblem(point: Record<string, unknown>, isString: boolean): string | undefined {
  const { value, status } = point;
  if (isString ? value !== undefined && typeof value !== 'string' : !isNumericValue(value)) {
    return `'value' ${JSON.stringify(value)} is not a ${isString ? 'string' : 'number'}`;
  }
  if (status !== undefined) {
    const { code, symbol } = (status ?? {}) as { code?: unknown; symbol?: unknown };
    if (typeof code !== 'number' || !Number.isSafeInteger(code) || (symbol !== undefined && typeof symbol !== 'string')) {
      return `'status' ${JSON.stringify(status)} is not {code, symbol}`;
    }
  }
  return undefined;
}

/** A number, one of the special values of a bad point, or none at all. */
function isNumericValue(value: unknown): boolean {
  return value === undefined || typeof value === 'number' || (typeof value === 'string' && Object.hasOwn(SPECIAL_VALUES, value));
}

function aggregateProblem(point: Record<string, unknown>, aggregates: readonly Aggregate[]): string | undefined {
  for (const name of aggregates) {
    const value = point[name];
    if (value === undefined) continue;
    if (isCountAggregate(name) ? !Number.isSafeInteger(value) : !isNumericValue(value)) {
      return `'${name}' ${JSON.stringify(value)} is not ${isCountAggregate(name) ? 'an integer' : 'a number'}`;
    }
  }
  return undefined;
}
