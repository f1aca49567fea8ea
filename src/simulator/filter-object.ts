import { resourceSpec } from '../resources/index.js';
import type { ListFilter, ResourceName } from './dataset/dataset.js';

/**
 * The `filter` object of `POST /{resource}/list` and `/aggregate`, as the simulator's data can
 * answer it (the platform knows more: metadata, ids...): the collection's filters in resources/, a
 * string field each, or a `{min, max}` range over a time field whose ends set the list filter's
 * min and max keys. Validated the way the platform validates bodies: strictly, naming the property
 * at fault. Ranges are inclusive epoch ms; min > max is valid (it matches nothing).
 */
export type FilterParse = { ok: true; filter: ListFilter } | { ok: false; message: string };

interface FilterFields {
  strings: Map<string, number>;
  ranges: Map<string, { min?: string; max?: string }>;
  /** Map fields (metadata), with the longest value each takes. */
  maps: Map<string, number>;
  names: string[];
}

function filterFields(resource: ResourceName): FilterFields {
  const strings = new Map<string, number>();
  const ranges = new Map<string, { min?: string; max?: string }>();
  const maps = new Map<string, number>();
  for (const spec of resourceSpec(resource).filters) {
    if (spec.kind === 'string') strings.set(spec.field, spec.maxLength);
    else if (spec.kind === 'map') maps.set(spec.field, spec.maxValueLength);
    else ranges.set(spec.field, { ...ranges.get(spec.field), [spec.bound]: spec.key });
  }
  return { strings, ranges, maps, names: [...new Set(resourceSpec(resource).filters.map((spec) => spec.field))] };
}

/** `given` is the body's `filter` (absent: no filter); `route` names the endpoint in messages. */
export function parseFilterObject(resource: ResourceName, given: unknown, route: string): FilterParse {
  const object = given ?? {};
  if (!isRecord(object)) return { ok: false, message: `Invalid property 'filter': expected an object, got ${shown(object)}.` };
  const fields = filterFields(resource);
  const filter: Record<string, string | number | Record<string, string>> = {};
  for (const [key, value] of Object.entries(object)) {
    const max = fields.strings.get(key);
    const range = fields.ranges.get(key);
    const maxValue = fields.maps.get(key);
    const problem =
      max !== undefined
        ? setString(filter, key, max, value)
        : range !== undefined
          ? setRange(filter, key, range, value)
          : maxValue !== undefined
            ? setMap(filter, key, maxValue, value)
            : `Unrecognized property 'filter.${key}' for ${route}. The simulator filters on: ${fields.names.join(', ')}.`;
    if (problem !== undefined) return { ok: false, message: problem };
  }
  // The keys set are the collection's list filters, which the data's filter types name.
  return { ok: true, filter };
}

function setString(
  filter: Record<string, string | number | Record<string, string>>,
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
  filter: Record<string, string | number | Record<string, string>>,
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

function setMap(
  filter: Record<string, string | number | Record<string, string>>,
  key: string,
  maxValue: number,
  value: unknown,
): string | undefined {
  if (!isRecord(value)) return `Invalid property 'filter.${key}': expected an object of strings, got ${shown(value)}.`;
  for (const [name, text] of Object.entries(value)) {
    if (typeof text !== 'string' || text.length > maxValue) {
      return `Invalid property 'filter.${key}.${name}': expected a string of at most ${maxValue} characters, got ${shown(text)}.`;
    }
  }
  filter[key] = value as Record<string, string>;
  return undefined;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value as JSON, cut short: enough to recognise it in an error message. */
export function shown(value: unknown): string {
  const text = value === undefined ? 'nothing' : JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 40)}...` : text;
}
