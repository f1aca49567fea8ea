import { createHash } from 'node:crypto';
import {
  type AggregateName,
  aggregatesField,
  booleanField,
  fail,
  type Field,
  itemMembers,
  itemsBody,
  limitField,
  MAX_AGGREGATE_POINTS,
  MAX_RAW_POINTS,
  type Members,
  seriesRefField,
  statusFlags,
  stringField,
  targetUnitFields,
  timeZoneField,
} from './datapoints-fields.js';
import type { SeriesRef } from './series-lookup.js';
import { type Granularity, parseGranularity } from './granularity.js';
import { resolveTime, type TimeParse } from './time-spec.js';
import { isQuarterHourOffset, type TimeZone } from './time-zone.js';

/** One query of a `POST /timeseries/data/list` body, its own fields over the top-level defaults. */
export interface PointQuery {
  /** Where it sits in the body, for messages: `items[3]`. */
  at: string;
  ref: SeriesRef;
  /** Epoch ms, resolved at the request: start inclusive (default 0), end exclusive (default now). */
  start: number;
  end: number;
  limit: number;
  /** Empty for raw points. */
  aggregates: AggregateName[];
  granularity: Granularity | undefined;
  /** The request's `timeZone` (undefined: UTC): the buckets of aggregates follow it. */
  timeZone: TimeZone | undefined;
  includeOutsidePoints: boolean;
  includeStatus: boolean;
  ignoreBadDataPoints: boolean;
  treatUncertainAsBad: boolean;
  cursor: string | undefined;
  /** Every field of the query but `cursor`, as given (times unresolved): what its cursors are bound to. */
  binding: string;
}

export interface DatapointsRequest {
  items: PointQuery[];
  ignoreUnknownIds: boolean;
  /**
   * A digest of the whole request, cursors included: the key the fault planner draws a fate for.
   * A digest, because a request of 100 queries with cursors is tens of KB and the planner keeps
   * a key for every request it has seen.
   */
  binding: string;
}

const TOP_LEVEL = ['items', 'start', 'end', 'limit', 'aggregates', 'granularity', 'includeOutsidePoints', 'timeZone', 'ignoreUnknownIds'];
const ITEM_KEYS = [
  'id',
  'externalId',
  'instanceId',
  'start',
  'end',
  'limit',
  'aggregates',
  'granularity',
  'targetUnit',
  'targetUnitSystem',
  'includeStatus',
  'ignoreBadDataPoints',
  'treatUncertainAsBad',
  'includeOutsidePoints',
  'cursor',
];

/**
 * Validates a `POST /timeseries/data/list` body the way the platform validates bodies: strictly,
 * naming the property at fault (`items[2].granularity`). Times are resolved against `nowMs`.
 */
export function parseDatapointsBody(given: unknown, nowMs: number): Field<DatapointsRequest> {
  const read = itemsBody(given, TOP_LEVEL);
  if (!read.ok) return read;
  const { body, items } = read.value;
  const defaults = checkDefaults(body, nowMs);
  if (defaults !== undefined) return fail(defaults);
  const ignoreUnknownIds = booleanField(body.ignoreUnknownIds, 'ignoreUnknownIds', false);
  if (!ignoreUnknownIds.ok) return ignoreUnknownIds;
  const timeZone = timeZoneField(body.timeZone);
  if (!timeZone.ok) return timeZone;
  const queries: PointQuery[] = [];
  for (const [index, item] of items.entries()) {
    const query = parseQuery(item, `items[${index}]`, body, nowMs, timeZone.value);
    if (!query.ok) return query;
    queries.push(query.value);
  }
  const total = totalsProblem(queries);
  if (total !== undefined) return fail(total);
  const chains = queries.map((query) => [query.binding, query.cursor ?? null]);
  const binding = createHash('sha256').update(JSON.stringify([chains, ignoreUnknownIds.value])).digest('base64url');
  return { ok: true, value: { items: queries, ignoreUnknownIds: ignoreUnknownIds.value, binding } };
}

/** The top-level defaults are checked on their own, even where every item overrides them. */
function checkDefaults(body: Members, nowMs: number): string | undefined {
  const checks: Field<unknown>[] = [
    body.start === undefined ? { ok: true, value: 0 } : resolveTime(body.start, 'start', nowMs),
    body.end === undefined ? { ok: true, value: 0 } : resolveTime(body.end, 'end', nowMs),
    limitField(body.limit, 'limit', false),
    aggregatesField(body.aggregates, 'aggregates'),
    body.granularity === undefined ? { ok: true, value: 0 } : parseGranularity(body.granularity, 'granularity'),
    booleanField(body.includeOutsidePoints, 'includeOutsidePoints', false),
  ];
  return checks.find((check) => !check.ok)?.message;
}

/** The value of `key` for the item: its own, else the top level's; and the name of where it came from. */
function pick(item: Members, body: Members, at: string, key: string): { value: unknown; field: string } {
  return item[key] !== undefined ? { value: item[key], field: `${at}.${key}` } : { value: body[key], field: key };
}

function parseQuery(
  raw: unknown,
  at: string,
  body: Members,
  nowMs: number,
  timeZone: TimeZone | undefined,
): Field<PointQuery> {
  const members = itemMembers(raw, at, ITEM_KEYS);
  if (!members.ok) return members;
  const item = members.value;
  const ref = seriesRefField(item, at);
  if (!ref.ok) return ref;
  const given = (key: string) => pick(item, body, at, key);
  const aggregates = aggregatesField(given('aggregates').value, given('aggregates').field);
  if (!aggregates.ok) return aggregates;
  const aggregate = aggregates.value.length > 0;
  const window = windowOf(given('start'), given('end'), nowMs);
  if (!window.ok) return window;
  const limit = limitField(given('limit').value, given('limit').field, aggregate);
  if (!limit.ok) return limit;
  const granularity = granularityOf(given('granularity'), aggregate, at);
  if (!granularity.ok) return granularity;
  const zoneProblem = aggregate ? offsetProblem(timeZone, window.value, at) : undefined;
  if (zoneProblem !== undefined) return fail(zoneProblem);
  const outside = booleanField(given('includeOutsidePoints').value, given('includeOutsidePoints').field, false);
  if (!outside.ok) return outside;
  if (aggregate && outside.value) {
    return fail(`Invalid property '${given('includeOutsidePoints').field}': includeOutsidePoints is not available for aggregates.`);
  }
  const flags = statusFlags(item, at);
  if (!flags.ok) return flags;
  // Bound, not applied (the series' unitExternalId stays as it is).
  const units = targetUnitFields(item, at);
  if (!units.ok) return units;
  const cursor = stringField(item.cursor, `${at}.cursor`, 100_000);
  if (!cursor.ok) return cursor;
  const binding = JSON.stringify([
    'timeseries/data/list',
    ref.value,
    given('start').value ?? null,
    given('end').value ?? null,
    limit.value,
    aggregates.value,
    granularity.value?.text ?? null,
    outside.value,
    body.timeZone ?? null,
    flags.value,
    units.value.targetUnit ?? null,
    units.value.targetUnitSystem ?? null,
  ]);
  return {
    ok: true,
    value: {
      at,
      ref: ref.value,
      ...window.value,
      limit: limit.value,
      aggregates: aggregates.value,
      granularity: granularity.value,
      timeZone,
      includeOutsidePoints: outside.value,
      ...flags.value,
      cursor: cursor.value,
      binding,
    },
  };
}

function windowOf(
  start: { value: unknown; field: string },
  end: { value: unknown; field: string },
  nowMs: number,
): Field<{ start: number; end: number }> {
  const from: TimeParse =
    start.value === undefined ? { ok: true, value: 0 } : resolveTime(start.value, start.field, nowMs);
  if (!from.ok) return from;
  const to: TimeParse = end.value === undefined ? { ok: true, value: nowMs } : resolveTime(end.value, end.field, nowMs);
  if (!to.ok) return to;
  if (to.value <= from.value) {
    const now = end.value === undefined ? ' (end not given: now)' : '';
    return fail(`Invalid properties '${start.field}', '${end.field}': start ${from.value} must be before end ${to.value}${now}.`);
  }
  return { ok: true, value: { start: from.value, end: to.value } };
}

/**
 * The platform computes buckets only where the zone's offset is a whole multiple of 15 minutes
 * (not, say, Asia/Kolkata's +05:21:10 before 1905): checked at the query's start and end.
 */
function offsetProblem(
  zone: TimeZone | undefined,
  window: { start: number; end: number },
  at: string,
): string | undefined {
  if (zone === undefined) return undefined;
  const off = [window.start, window.end - 1].find((time) => !isQuarterHourOffset(zone, time));
  if (off === undefined) return undefined;
  return `Invalid property 'timeZone': ${zone.name} is ${zone.offsetAt(off) / 1000} s off UTC at ${off} (${at}); aggregates take only zone offsets of whole multiples of 15 minutes.`;
}

function granularityOf(
  given: { value: unknown; field: string },
  aggregate: boolean,
  at: string,
): Field<Granularity | undefined> {
  if (given.value === undefined) {
    return aggregate ? fail(`Invalid property '${at}.granularity': aggregates need a granularity, e.g. "1h".`) : { ok: true, value: undefined };
  }
  return parseGranularity(given.value, given.field);
}

/** The platform's caps per request: the limits of the raw queries, and of the aggregate ones, each in total. */
function totalsProblem(queries: readonly PointQuery[]): string | undefined {
  const sum = (aggregate: boolean) =>
    queries
      .filter((query) => (query.aggregates.length > 0) === aggregate)
      .reduce((total, query) => total + query.limit, 0);
  const raw = sum(false);
  if (raw > MAX_RAW_POINTS) {
    return `Invalid property 'limit': the raw queries' limits add up to ${raw}; at most ${MAX_RAW_POINTS} raw datapoints per request, in total over its items.`;
  }
  const aggregates = sum(true);
  if (aggregates > MAX_AGGREGATE_POINTS) {
    return `Invalid property 'limit': the aggregate queries' limits add up to ${aggregates}; at most ${MAX_AGGREGATE_POINTS} aggregates per request, in total over its items.`;
  }
  return undefined;
}
