import { type FilterSpec, type Resource, resourceSpec } from '../resources/index.js';
import type { FilterValue, ListFilter } from './dataset/match.js';
import { bodyValue, rangeEnd } from './filter-values.js';

/**
 * The `filter` object of `POST /{resource}/list` and `/aggregate`: the collection's filters in
 * resources/, each under its field (a range as `{min, max}`, whose ends set the list filter's
 * `min...` and `max...` keys), validated the way the platform validates bodies: strictly, naming
 * the property at fault. Ranges are inclusive; min > max is valid (it matches nothing).
 */
export type FilterParse = { ok: true; filter: ListFilter } | { ok: false; message: string };

/** The specs of each field of the filter object (a range has two: its min and its max). */
function fieldsOf(resource: Resource): Map<string, FilterSpec[]> {
  const fields = new Map<string, FilterSpec[]>();
  for (const spec of resourceSpec(resource).filters) fields.set(spec.field, [...(fields.get(spec.field) ?? []), spec]);
  return fields;
}

/** `given` is the body's `filter` (absent: no filter); `route` names the endpoint in messages. */
export function parseFilterObject(resource: Resource, given: unknown, route: string): FilterParse {
  const object = given ?? {};
  if (!isRecord(object)) return { ok: false, message: `Invalid property 'filter': expected an object, got ${shown(object)}.` };
  const fields = fieldsOf(resource);
  const filter: Record<string, FilterValue> = {};
  for (const [field, value] of Object.entries(object)) {
    const specs = fields.get(field);
    if (specs === undefined) {
      return {
        ok: false,
        message: `Unrecognized property 'filter.${field}' for ${route}. The simulator filters on: ${[...fields.keys()].join(', ')}.`,
      };
    }
    const problem = setField(filter, field, specs, value);
    if (problem !== undefined) return { ok: false, message: problem };
  }
  return { ok: true, filter };
}

type Target = Record<string, FilterValue>;

/** A range's `{min, max}`, or the `{isNull}` the same field takes instead; any other field's value. */
function setField(filter: Target, field: string, specs: readonly FilterSpec[], value: unknown): string | undefined {
  const isNull = specs.find((spec) => spec.kind === 'isNull');
  if (isNull !== undefined && isRecord(value) && 'isNull' in value) return setValue(filter, field, isNull, value);
  if (specs[0]?.kind === 'time' || specs[0]?.kind === 'number') return setRange(filter, field, specs, value);
  return setValue(filter, field, specs[0]!, value);
}

function setValue(filter: Target, field: string, spec: FilterSpec, value: unknown): string | undefined {
  const parsed = bodyValue(spec, value);
  if (!parsed.ok) {
    const at = parsed.at === undefined ? '' : `.${parsed.at}`;
    const got = parsed.at === undefined ? value : (value as Record<string, unknown>)[parsed.at];
    return `Invalid property 'filter.${field}${at}': expected ${parsed.expected}, got ${shown(got)}.`;
  }
  filter[spec.key] = parsed.value;
  return undefined;
}

function setRange(filter: Target, field: string, specs: readonly FilterSpec[], value: unknown): string | undefined {
  if (!isRecord(value)) return `Invalid property 'filter.${field}': expected an object {min, max}, got ${shown(value)}.`;
  for (const [bound, given] of Object.entries(value)) {
    const spec = specs.find((candidate) => 'bound' in candidate && candidate.bound === bound);
    if (spec === undefined) {
      const allowed = specs.some((candidate) => candidate.kind === 'isNull') ? 'min, max; or isNull alone' : 'min, max';
      return `Unrecognized property 'filter.${field}.${bound}'. Allowed: ${allowed}.`;
    }
    if (given === undefined) continue;
    const parsed = rangeEnd(spec, given);
    if (!parsed.ok) return `Invalid property 'filter.${field}.${bound}': expected ${parsed.expected}, got ${shown(given)}.`;
    filter[spec.key] = parsed.value;
  }
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
