import { isRecord, shown } from '../filter-object.js';
import { attempt, invalid, type Parsed } from './body-parts.js';
import { containerKey, findContainer, findView, viewProperties } from './model-lookup.js';
import { type Comparable, classOf, filterValue, type ValueClass } from './filter-values.js';
import { containerKeysOf } from './instance-json.js';

/**
 * The data-modeling filter language, the subset the simulator serves: `and`, `or`, `not`,
 * `equals`, `in`, `range`, `prefix`, `exists`, `containsAny`, `containsAll`, `hasData` and
 * `matchAll`, on an instance's own fields (`["node", "externalId"]`, `["edge", "type"]`) and on
 * properties through a view (`[space, "externalId/version", property]`) or a container
 * (`[space, externalId, property]`). `equals`, `in`, `range` and `prefix` take single values;
 * `containsAny` and `containsAll` take lists, and a single value as a list of one, their `values`
 * checked as `in` checks its own. Validated strictly: a message names the path inside the body
 * (`filter.and[1].range.gt`, `filter.containsAny.values[2]`).
 */
export type CoreField = 'space' | 'externalId' | 'version' | 'createdTime' | 'lastUpdatedTime' | 'type' | 'startNode' | 'endNode';

export type Field =
  | { source: 'core'; field: CoreField; valueClass: ValueClass; list: false } |
  { source: 'property'; container: string; property: string; valueClass: ValueClass; list: boolean; values: readonly string[] };

export type CompiledFilter =
  | { op: 'and' | 'or'; of: CompiledFilter[] } |
  { op: 'not'; of: CompiledFilter } |
  { op: 'matchAll' } |
  { op: 'equals'; field: Field; value: Comparable } |
  { op: 'in' | 'containsAny' | 'containsAll'; field: Field; values: Comparable[] } |
  { op: 'range'; field: Field; gt?: Comparable; gte?: Comparable; lt?: Comparable; lte?: Comparable } |
  { op: 'prefix'; field: Field; value: string } |
  { op: 'exists'; field: Field } |
  { op: 'hasData'; containers: string[] };

/** Refusals name their path: `refuse` is the body parts' `invalid`. */
const refuse = invalid;

const CORE_FIELDS: Readonly<Record<CoreField, ValueClass>> = {
  space: 'text',
  externalId: 'text',
  version: 'epoch',
  createdTime: 'epoch',
  lastUpdatedTime: 'epoch',
  type: 'ref',
  startNode: 'ref',
  endNode: 'ref',
};
const SERVED = ['and', 'or', 'not', 'equals', 'in', 'range', 'prefix', 'exists', 'containsAny', 'containsAll', 'hasData', 'matchAll'];
const NOT_SERVED = ['nested', 'overlaps', 'instanceReferences'];

/** `filter` of a body listing `instanceType` instances (throws `Invalid`); `path` is where it lies in the body. */
export function filterAt(given: unknown, instanceType: 'node' | 'edge', path = 'filter'): CompiledFilter {
  return parse(given, instanceType, path);
}

/** The same as a result: the compiled filter, or the message of the 400. */
export function parseFilter(given: unknown, instanceType: 'node' | 'edge', path = 'filter'): Parsed<CompiledFilter> {
  return attempt(() => parse(given, instanceType, path));
}

function parse(given: unknown, instanceType: 'node' | 'edge', path: string): CompiledFilter {
  if (!isRecord(given)) return refuse(path, `expected an object with one operator (${SERVED.join(', ')}), got ${shown(given)}.`);
  const keys = Object.keys(given);
  if (keys.length !== 1) return refuse(path, `expected exactly one operator, got ${keys.length === 0 ? 'none' : keys.join(', ')}.`);
  const op = keys[0] ?? '';
  const at = `${path}.${op}`;
  const body = given[op];
  if (NOT_SERVED.includes(op)) return refuse(at, 'the platform has this operator; the simulator does not serve it.');
  switch (op) {
    case 'and':
    case 'or': {
      if (!Array.isArray(body) || body.length === 0) return refuse(at, `expected a non-empty array of filters, got ${shown(body)}.`);
      return { op, of: body.map((child, i) => parse(child, instanceType, `${at}[${i}]`)) };
    }
    case 'not':
      return { op, of: parse(body, instanceType, at) };
    case 'matchAll':
      if (!isRecord(body) || Object.keys(body).length > 0) return refuse(at, `expected {}, got ${shown(body)}.`);
      return { op };
    case 'hasData':
      return { op, containers: hasDataContainers(body, at) };
    case 'equals':
    case 'in':
    case 'range':
    case 'prefix':
    case 'exists':
    case 'containsAny':
    case 'containsAll':
      return leaf(op, body, instanceType, at);
    default:
      return refuse(at, `unknown operator. The simulator serves ${SERVED.join(', ')}.`);
  }
}

const LEAF_KEYS: Readonly<Record<string, readonly string[]>> = {
  equals: ['property', 'value'],
  in: ['property', 'values'],
  range: ['property', 'gt', 'gte', 'lt', 'lte'],
  prefix: ['property', 'value'],
  exists: ['property'],
  containsAny: ['property', 'values'],
  containsAll: ['property', 'values'],
};

type LeafOp = 'equals' | 'in' | 'range' | 'prefix' | 'exists' | 'containsAny' | 'containsAll';

function leaf(op: LeafOp, body: unknown, instanceType: 'node' | 'edge', at: string): CompiledFilter {
  if (!isRecord(body)) return refuse(at, `expected an object {${LEAF_KEYS[op]?.join(', ')}}, got ${shown(body)}.`);
  for (const key of Object.keys(body)) {
    if (!(LEAF_KEYS[op] ?? []).includes(key)) return refuse(`${at}.${key}`, `unrecognized; ${op} takes ${LEAF_KEYS[op]?.join(', ')}.`);
  }
  const field = fieldOf(body.property, instanceType, `${at}.property`);
  if (op === 'exists') return { op, field };
  const contains = op === 'containsAny' || op === 'containsAll';
  if (field.list && !contains) return refuse(`${at}.property`, `${op} takes a single-value property; this one is a list (containsAny and containsAll take lists).`);
  if (field.valueClass === 'json') return refuse(`${at}.property`, `${op} cannot compare json properties.`);
  const value = (key: string, given: unknown, valueClass = field.valueClass) => {
    if (isRecord(given) && ('parameter' in given || 'property' in given) && valueClass !== 'ref') {
      return refuse(`${at}.${key}`, 'parameters and property references are not served by the simulator.');
    }
    const parsed = filterValue(valueClass, given, field.source === 'property' ? field.values : []);
    return parsed.ok ? parsed.value : refuse(`${at}.${key}`, `expected ${parsed.expected}, got ${shown(given)}.`);
  };
  switch (op) {
    case 'equals':
      return { op, field, value: value('value', body.value) };
    case 'in':
    case 'containsAny':
    case 'containsAll': {
      const values = body.values;
      if (!Array.isArray(values) || values.length === 0) return refuse(`${at}.values`, `expected a non-empty array, got ${shown(values)}.`);
      return { op, field, values: values.map((one, i) => value(`values[${i}]`, one)) };
    }
    case 'prefix':
      if (field.valueClass !== 'text') return refuse(`${at}.property`, 'prefix takes a text property.');
      return { op, field, value: value('value', body.value) as string };
    case 'range':
      return range(body, field, at, value);
  }
}

function range(
  body: Record<string, unknown>,
  field: Field,
  at: string,
  value: (key: string, given: unknown) => Comparable,
): CompiledFilter {
  if (['boolean', 'ref', 'enum'].includes(field.valueClass)) return refuse(`${at}.property`, `range cannot order ${field.valueClass} values.`);
  const bounds = (['gt', 'gte', 'lt', 'lte'] as const).filter((key) => body[key] !== undefined);
  if (bounds.length === 0) return refuse(at, 'expected at least one bound: gt, gte, lt or lte.');
  if (bounds.includes('gt') && bounds.includes('gte')) return refuse(at, 'give gt or gte, not both.');
  if (bounds.includes('lt') && bounds.includes('lte')) return refuse(at, 'give lt or lte, not both.');
  const compiled: CompiledFilter = { op: 'range', field };
  for (const key of bounds) compiled[key] = value(key, body[key]);
  return compiled;
}

/** What a filter's `property` refers to; refused with the path when it refers to nothing. */
function fieldOf(given: unknown, instanceType: 'node' | 'edge', at: string): Field {
  if (!Array.isArray(given) || !given.every((part) => typeof part === 'string') || given.length < 2 || given.length > 3) {
    return refuse(at, `expected ["${instanceType}", field], [space, "view/version", property] or [space, container, property], got ${shown(given)}.`);
  }
  const parts: string[] = given;
  const [first = '', second = '', third = ''] = parts;
  if (parts.length === 2) return coreField(first, second, instanceType, at);
  const slash = second.indexOf('/');
  if (slash >= 0) {
    const id = { space: first, externalId: second.slice(0, slash), version: second.slice(slash + 1) };
    const view = findView(id);
    if (view === undefined) return refuse(at, `no view ${first}:${second}.`);
    const mapped = viewProperties(view).find((p) => p.identifier === third);
    if (mapped !== undefined) return propertyField(mapped.container, mapped.containerPropertyIdentifier, at);
    const connection = view.connections.some((c) => c.identifier === third);
    return refuse(at, connection ? `${third} is a connection of ${second}, not a property with values.` : `view ${first}:${second} has no property '${third}'.`);
  }
  return propertyField({ space: first, externalId: second }, third, at);
}

function coreField(first: string, second: string, instanceType: 'node' | 'edge', at: string): Field {
  if (first !== 'node' && first !== 'edge') return refuse(at, `expected "node" or "edge" first in a reference to an instance field, got ${shown(first)}.`);
  if (first !== instanceType) return refuse(at, `refers to ${first}s; this query reads ${instanceType}s (use ["${instanceType}", "${second}"]).`);
  const allowed = (Object.keys(CORE_FIELDS) as CoreField[]).filter((f) => instanceType === 'edge' || (f !== 'startNode' && f !== 'endNode'));
  const field = allowed.find((name) => name === second);
  if (field === undefined) return refuse(at, `${first}s have no field ${shown(second)}; the simulator filters on ${allowed.join(', ')}.`);
  return { source: 'core', field, valueClass: CORE_FIELDS[field], list: false };
}

function propertyField(id: { space: string; externalId: string }, identifier: string, at: string): Field {
  const container = findContainer(id);
  if (container === undefined) return refuse(at, `no container ${id.space}:${id.externalId} (a view is referenced as "externalId/version").`);
  const p = container.properties.find((candidate) => candidate.identifier === identifier);
  if (p === undefined) return refuse(at, `container ${id.space}:${id.externalId} has no property '${identifier}'.`);
  const valueClass: ValueClass = classOf(p.type);
  return { source: 'property', container: containerKey(id), property: identifier, valueClass, list: p.list, values: p.values ?? [] };
}

/** `hasData`: views and containers, each as the containers an instance must have data in. */
function hasDataContainers(body: unknown, at: string): string[] {
  if (!Array.isArray(body) || body.length === 0) return refuse(at, `expected a non-empty array of views and containers, got ${shown(body)}.`);
  return body.flatMap((source, i): string[] => {
    const where = `${at}[${i}]`;
    if (!isRecord(source) || typeof source.space !== 'string' || typeof source.externalId !== 'string') {
      return refuse(where, `expected {type, space, externalId, version?}, got ${shown(source)}.`);
    }
    const { type, space, externalId, version } = source;
    if (type === 'view' && typeof version === 'string') {
      const view = findView({ space, externalId, version });
      return view === undefined ? refuse(where, `no view ${space}:${externalId}/${version}.`) : [...containerKeysOf(view)];
    }
    if (type === 'container') {
      return findContainer({ space, externalId }) === undefined ? refuse(where, `no container ${space}:${externalId}.`) : [containerKey({ space, externalId })];
    }
    return refuse(where, `expected type "view" (with a version) or "container", got ${shown(source)}.`);
  });
}
