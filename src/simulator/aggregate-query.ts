import type { AssetFilter, EventFilter, ResourceName } from './dataset/dataset.js';

/** A validated `POST /{resource}/aggregate` body: the count of the items its filter matches. */
export interface AggregateQuery {
  resource: ResourceName;
  aggregate: 'count';
  filter: EventFilter & AssetFilter;
}

export type AggregateParse = { ok: true; query: AggregateQuery } | { ok: false; message: string };

/** `{min, max}` filters of the platform's `filter` object and the list filter fields they set. */
const RANGES = {
  startTime: ['minStartTime', 'maxStartTime'],
  lastUpdatedTime: ['minLastUpdatedTime', 'maxLastUpdatedTime'],
} as const;

/** String filters and their longest length on the platform. */
const STRINGS = { type: 64, subtype: 64, source: 128 } as const;

/** The `filter` fields the simulator's data can answer; the platform knows more (metadata, ids...). */
const FILTER_KEYS: Record<ResourceName, readonly string[]> = {
  assets: ['lastUpdatedTime'],
  events: ['type', 'subtype', 'source', 'startTime', 'lastUpdatedTime'],
};

const TOP_LEVEL = ['aggregate', 'filter'];

/**
 * Validates an aggregate body the way the platform validates bodies: strictly, naming the property
 * at fault. `aggregate` may be left out (count is the default); ranges are inclusive epoch ms and a
 * range with min > max is valid (it matches nothing).
 */
export function parseAggregateBody(resource: ResourceName, body: unknown): AggregateParse {
  if (!isRecord(body)) return fail(`The request body must be a JSON object, got ${shown(body)}.`);
  for (const key of Object.keys(body)) {
    if (!TOP_LEVEL.includes(key)) return fail(`Unrecognized property '${key}'. Allowed: ${TOP_LEVEL.join(', ')}.`);
  }
  if (body.aggregate !== undefined && body.aggregate !== 'count') {
    return fail(`Invalid property 'aggregate': the simulator serves "count" only, got ${shown(body.aggregate)}.`);
  }
  const given = body.filter ?? {};
  if (!isRecord(given)) return fail(`Invalid property 'filter': expected an object, got ${shown(given)}.`);
  const allowed = FILTER_KEYS[resource];
  const filter: EventFilter & AssetFilter = {};
  for (const [key, value] of Object.entries(given)) {
    if (!allowed.includes(key)) {
      return fail(
        `Unrecognized property 'filter.${key}' for /${resource}/aggregate. The simulator filters on: ${allowed.join(', ')}.`,
      );
    }
    const problem = isStringKey(key) ? setString(filter, key, value) : setRange(filter, key, value);
    if (problem !== undefined) return fail(problem);
  }
  return { ok: true, query: { resource, aggregate: 'count', filter } };
}

function setString(filter: EventFilter, key: keyof typeof STRINGS, value: unknown): string | undefined {
  const max = STRINGS[key];
  if (typeof value !== 'string' || value.length === 0 || value.length > max) {
    return `Invalid property 'filter.${key}': expected a string of 1 to ${max} characters, got ${shown(value)}.`;
  }
  filter[key] = value;
  return undefined;
}

function setRange(filter: EventFilter & AssetFilter, key: string, value: unknown): string | undefined {
  if (!isRangeKey(key)) return `Unrecognized property 'filter.${key}'.`;
  if (!isRecord(value)) return `Invalid property 'filter.${key}': expected an object {min, max}, got ${shown(value)}.`;
  const [minKey, maxKey] = RANGES[key];
  for (const [bound, target] of [['min', minKey], ['max', maxKey]] as const) {
    const given = value[bound];
    if (given === undefined) continue;
    if (typeof given !== 'number' || !Number.isSafeInteger(given) || given < 0) {
      return `Invalid property 'filter.${key}.${bound}': expected epoch milliseconds (an integer >= 0), got ${shown(given)}.`;
    }
    filter[target] = given;
  }
  const extra = Object.keys(value).find((name) => name !== 'min' && name !== 'max');
  return extra === undefined ? undefined : `Unrecognized property 'filter.${key}.${extra}'. Allowed: min, max.`;
}

function isStringKey(key: string): key is keyof typeof STRINGS {
  return Object.hasOwn(STRINGS, key);
}

function isRangeKey(key: string): key is keyof typeof RANGES {
  return Object.hasOwn(RANGES, key);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value as JSON, cut short: enough to recognise it in an error message. */
function shown(value: unknown): string {
  const text = value === undefined ? 'nothing' : JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 40)}...` : text;
}

function fail(message: string): AggregateParse {
  return { ok: false, message };
}
