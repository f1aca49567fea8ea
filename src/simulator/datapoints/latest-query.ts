import { createHash } from 'node:crypto';
import {
  booleanField,
  type Field,
  itemMembers,
  itemsBody,
  seriesRefField,
  type StatusFlags,
  statusFlags,
  targetUnitFields,
} from './datapoints-fields.js';
import type { SeriesRef } from './series-lookup.js';
import { resolveTime } from './time-spec.js';

/** One query of a `POST /timeseries/data/latest` body: a series and the time its point must lie before. */
export interface LatestQuery extends StatusFlags {
  /** Where it sits in the body, for messages: `items[3]`. */
  at: string;
  ref: SeriesRef;
  /** Epoch ms, exclusive, resolved at the request (default now). */
  before: number;
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
export function parseLatestBody(given: unknown, nowMs: number): Field<LatestRequest> {
  const read = itemsBody(given, TOP_LEVEL);
  if (!read.ok) return read;
  const { body, items } = read.value;
  const ignoreUnknownIds = booleanField(body.ignoreUnknownIds, 'ignoreUnknownIds', false);
  if (!ignoreUnknownIds.ok) return ignoreUnknownIds;
  const queries: LatestQuery[] = [];
  for (const [index, item] of items.entries()) {
    const query = parseLatestQuery(item, `items[${index}]`, nowMs);
    if (!query.ok) return query;
    queries.push(query.value);
  }
  const binding = createHash('sha256').update(JSON.stringify(['timeseries/data/latest', body])).digest('base64url');
  return { ok: true, value: { items: queries, ignoreUnknownIds: ignoreUnknownIds.value, binding } };
}

function parseLatestQuery(given: unknown, at: string, nowMs: number): Field<LatestQuery> {
  const members = itemMembers(given, at, ITEM_KEYS);
  if (!members.ok) return members;
  const item = members.value;
  const ref = seriesRefField(item, at);
  if (!ref.ok) return ref;
  const before = item.before === undefined ? { ok: true as const, value: nowMs } : resolveTime(item.before, `${at}.before`, nowMs);
  if (!before.ok) return before;
  const flags = statusFlags(item, at);
  if (!flags.ok) return flags;
  const units = targetUnitFields(item, at);
  if (!units.ok) return units;
  return { ok: true, value: { at, ref: ref.value, before: before.value, ...flags.value } };
}
