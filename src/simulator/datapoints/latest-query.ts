import { createHash } from 'node:crypto';
import { booleanField, fail, type Field, MAX_QUERIES, seriesRefField, stringField } from './datapoints-fields.js';
import type { SeriesRef } from './series-lookup.js';
import { isRecord, shown } from '../filter-object.js';
import { resolveTime } from './time-spec.js';

/** One query of a `POST /timeseries/data/latest` body: a series and the time its point must lie before. */
export interface LatestQuery {
  /** Where it sits in the body, for messages: `items[3]`. */
  at: string;
  ref: SeriesRef;
  /** Epoch ms, exclusive, resolved at the request (default now). */
  before: number;
  includeStatus: boolean;
  ignoreBadDataPoints: boolean;
  treatUncertainAsBad: boolean;
}

export interface LatestRequest {
  items: LatestQuery[];
  ignoreUnknownIds: boolean;
  /** A digest of the whole request: the key the fault planner draws a fate for. */
  binding: string;
}

const TOP_LEVEL = ['items', 'ignoreUnknownIds'];
const ITEM_KEYS = [
  'id',
  'externalId',
  'instanceId',
  'before',
  'targetUnit',
  'targetUnitSystem',
  'includeStatus',
  'ignoreBadDataPoints',
  'treatUncertainAsBad',
];

/**
 * Validates a `POST /timeseries/data/latest` body as the platform does: `items` (1..100), each
 * naming one series by exactly one of id, externalId, instanceId, with its own `before` (epoch ms,
 * `now` or `N[w|d|h|m|s]-ago`; default now) and the status flags of `/timeseries/data/list`.
 * `targetUnit` and `targetUnitSystem` are taken, not applied (the simulator converts no units).
 */
export function parseLatestBody(body: unknown, nowMs: number): Field<LatestRequest> {
  if (!isRecord(body)) return fail(`The request body must be a JSON object, got ${shown(body)}.`);
  for (const key of Object.keys(body)) {
    if (!TOP_LEVEL.includes(key)) return fail(`Unrecognized property '${key}'. Allowed: ${TOP_LEVEL.join(', ')}.`);
  }
  const { items } = body;
  if (!Array.isArray(items) || items.length < 1 || items.length > MAX_QUERIES) {
    return fail(`Invalid property 'items': expected an array of 1..${MAX_QUERIES} queries, got ${shown(items)}.`);
  }
  const ignoreUnknownIds = booleanField(body.ignoreUnknownIds, 'ignoreUnknownIds', false);
  if (!ignoreUnknownIds.ok) return ignoreUnknownIds;
  const queries: LatestQuery[] = [];
  for (const [index, item] of (items as unknown[]).entries()) {
    const query = parseLatestQuery(item, `items[${index}]`, nowMs);
    if (!query.ok) return query;
    queries.push(query.value);
  }
  const binding = createHash('sha256').update(JSON.stringify(['timeseries/data/latest', body])).digest('base64url');
  return { ok: true, value: { items: queries, ignoreUnknownIds: ignoreUnknownIds.value, binding } };
}

function parseLatestQuery(item: unknown, at: string, nowMs: number): Field<LatestQuery> {
  if (!isRecord(item)) return fail(`Invalid property '${at}': expected an object, got ${shown(item)}.`);
  for (const key of Object.keys(item)) {
    if (!ITEM_KEYS.includes(key)) return fail(`Unrecognized property '${at}.${key}'. Allowed: ${ITEM_KEYS.join(', ')}.`);
  }
  const ref = seriesRefField(item, at);
  if (!ref.ok) return ref;
  const before = item.before === undefined ? { ok: true as const, value: nowMs } : resolveTime(item.before, `${at}.before`, nowMs);
  if (!before.ok) return before;
  // The platform's defaults, as on /timeseries/data/list: bad points left out, uncertain ones counted as bad.
  const includeStatus = booleanField(item.includeStatus, `${at}.includeStatus`, false);
  if (!includeStatus.ok) return includeStatus;
  const ignoreBad = booleanField(item.ignoreBadDataPoints, `${at}.ignoreBadDataPoints`, true);
  if (!ignoreBad.ok) return ignoreBad;
  const uncertainAsBad = booleanField(item.treatUncertainAsBad, `${at}.treatUncertainAsBad`, true);
  if (!uncertainAsBad.ok) return uncertainAsBad;
  for (const key of ['targetUnit', 'targetUnitSystem']) {
    const unit = stringField(item[key], `${at}.${key}`, 64);
    if (!unit.ok) return unit;
  }
  if (item.targetUnit !== undefined && item.targetUnitSystem !== undefined) {
    return fail(`Invalid property '${at}.targetUnitSystem': give targetUnit or targetUnitSystem, not both.`);
  }
  return {
    ok: true,
    value: {
      at,
      ref: ref.value,
      before: before.value,
      includeStatus: includeStatus.value,
      ignoreBadDataPoints: ignoreBad.value,
      treatUncertainAsBad: uncertainAsBad.value,
    },
  };
}
