import { resourceSpec } from '../resources/index.js';
import type { AssetFilter, EventFilter, ResourceName } from './dataset/dataset.js';

/** A validated `POST /{resource}/aggregate` body: the count of the items its filter matches. */
export interface AggregateQuery {
  resource: ResourceName;
  aggregate: 'count';
  filter: EventFilter & AssetFilter;
}

export type AggregateParse = { ok: true; query: AggregateQuery } | { ok: false; message: string };

/**
 * The `filter` fields the simulator's data can answer (the platform knows more: metadata, ids...):
 * the collection's filters in resources/, a string field each, or a `{min, max}` range over a
 * time field whose ends set the list filter's min and max keys.
 */
interface FilterFields {
  strings: Map<string, number>;
  ranges: Map<string, { min?: string; max?: string }>;
  names: string[];
}

function filterFields(resource: ResourceName): FilterFields {
  const strings = new Map<string, number>();
  const ranges = new Map<string, { min?: string; max?: string }>();
  for (const spec of resourceSpec(resource).filters) {
    if (spec.bound === undefined) strings.set(spec.field, spec.maxLength ?? 128);
    else ranges.set(spec.field, { ...ranges.get(spec.field), [spec.bound]: spec.key });
  }
  return { strings, ranges, names: [...new Set(resourceSpec(resource).filters.map((spec) => spec.field))] };
}

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
  const fields = filterFields(resource);
  const filter: Record<string, string | number> = {};
  for (const [key, value] of Object.entries(given)) {
    const max = fields.strings.get(key);
    const range = fields.ranges.get(key);
    const problem =
      max !== undefined
        ? setString(filter, key, max, value)
        : range !== undefined
          ? setRange(filter, key, range, value)
          : `Unrecognized property 'filter.${key}' for /${resource}/aggregate. The simulator filters on: ${fields.names.join(', ')}.`;
    if (problem !== undefined) return fail(problem);
  }
  // The keys set are the collection's list filters, which the data's filter types name.
  return { ok: true, query: { resource, aggregate: 'count', filter: filter } };
}

function setString(
  filter: Record<string, string | number>,
  key: string,
  max: number,
  value: unknown,
): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > max) {
    return `Invalid property 'filter.${key}': expected a string of 1 to ${max} characters, got ${shown(value)}.`;
  }
  filter[key] = value;
  return undefined;
}

function setRange(
  filter: Record<string, string | number>,
  key: string,
  targets: { min?: string; max?: string },
  value: unknown,
): string | undefined {
  if (!isRecord(value)) return `Invalid property 'filter.${key}': expected an object {min, max}, got ${shown(value)}.`;
  for (const bound of ['min', 'max'] as const) {
    const given = value[bound];
    const target = targets[bound];
    if (given === undefined || target === undefined) continue;
    if (typeof given !== 'number' || !Number.isSafeInteger(given) || given < 0) {
      return `Invalid property 'filter.${key}.${bound}': expected epoch milliseconds (an integer >= 0), got ${shown(given)}.`;
    }
    filter[target] = given;
  }
  const extra = Object.keys(value).find((name) => name !== 'min' && name !== 'max');
  return extra === undefined ? undefined : `Unrecognized property 'filter.${key}.${extra}'. Allowed: min, max.`;
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
