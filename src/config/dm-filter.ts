/**
 * The `filter` of a `resource: instances` stream, in the data-modeling service's filter language:
 * checked when the job file is read, each problem at its path inside the filter
 * (`filter.and.1.range: give at least one of gt, gte, lt, lte`), so that a run never meets the
 * platform's 400 for a filter the job could have been refused for.
 */
import { z } from 'zod';
import {
  externalIdProblem,
  instanceExternalIdProblem,
  propertyProblem,
  spaceProblem,
  versionProblem,
} from './dm-identifiers.js';
import { suggestKey } from './suggest-key.js';

/** A filter as the platform takes it: one operator and its body. */
export type DmFilter = Readonly<Record<string, unknown>>;
export type FilterPath = (string | number)[];
export interface FilterProblem {
  path: FilterPath;
  message: string;
}

/** The operators bulk-extract sends, as the job file writes them. */
export const FILTER_OPERATORS = [
  'and', 'or', 'not', 'equals', 'in', 'range', 'prefix', 'exists', 'containsAny', 'containsAll', 'hasData', 'matchAll',
] as const;
/** Operators of the platform that bulk-extract does not send (the simulator has none of them either). */
const NOT_SENT = new Set(['nested', 'overlaps', 'instanceReferences']);
/** and/or/not nest at most this deep (the platform gives no figure; no real filter comes near it). */
export const MAX_FILTER_DEPTH = 16;
/** Values of one `in`, `containsAny` or `containsAll`, as the platform accepts. */
export const MAX_FILTER_VALUES = 1000;

/** The fields of an instance itself, `["node" | "edge", field]`; startNode and endNode are edges' only. */
const BASE_FIELDS: Readonly<Record<string, 'text' | 'int' | 'time' | 'ref' | 'instanceType'>> = {
  instanceType: 'instanceType', version: 'int', space: 'text', externalId: 'text', type: 'ref',
  createdTime: 'time', lastUpdatedTime: 'time', deletedTime: 'time', startNode: 'ref', endNode: 'ref',
};
const EDGE_ONLY = new Set(['startNode', 'endNode']);

const REFERENCE_EXPECTED =
  'expected a property reference: [space, "view/version", property], [space, container, property] or ["node"|"edge", field]';
const PARAMETER_REFUSED =
  '{parameter: ...} values are for parameterised queries, and bulk-extract sends no parameters; write the value itself';
/** The ends of a `range`. */
export const BOUNDS = ['gt', 'gte', 'lt', 'lte'] as const;

/**
 * Everything wrong with a filter, each at its path: `at` (default `['filter']`, the key of the
 * stream) followed by the path inside the filter.
 */
export function dmFilterProblems(filter: unknown, at: readonly (string | number)[] = ['filter']): FilterProblem[] {
  const problems: FilterProblem[] = [];
  checkFilter(filter, [...at], 1, (path, message) => problems.push({ path, message }));
  return problems;
}

/** A stream's `filter` key: a mapping, checked by dmFilterProblems. */
export const dmFilterSchema = z
  .custom<DmFilter>(isMapping, { error: 'expected a filter: a mapping with one operator, e.g. {equals: {...}}' })
  .superRefine((filter, ctx) => {
    for (const { path, message } of dmFilterProblems(filter, [])) ctx.addIssue({ code: 'custom', path, message });
  });

type Add = (path: FilterPath, message: string) => void;

function checkFilter(filter: unknown, path: FilterPath, depth: number, add: Add): void {
  if (!isMapping(filter)) {
    add(path, 'expected a filter: a mapping with one operator, e.g. {equals: {...}}');
    return;
  }
  const operators = Object.keys(filter);
  if (operators.length !== 1) {
    add(path, operators.length === 0
      ? `a filter has one operator, one of ${FILTER_OPERATORS.join(', ')}; got none`
      : `a filter has one operator; got ${operators.length}: ${operators.join(', ')} (combine them with and: [...])`);
    return;
  }
  const operator = operators[0]!;
  const body = filter[operator];
  const at = [...path, operator];
  if (depth > MAX_FILTER_DEPTH) {
    add(at, `filters nest at most ${MAX_FILTER_DEPTH} deep`);
    return;
  }
  switch (operator) {
    case 'and':
    case 'or':
      if (!Array.isArray(body) || body.length === 0) add(at, `expected a non-empty list of filters to ${operator}`);
      else body.forEach((inner, i) => checkFilter(inner, [...at, i], depth + 1, add));
      return;
    case 'not':
      if (Array.isArray(body)) add(at, 'expected one filter (a mapping); to negate several, not: {or: [...]}');
      else checkFilter(body, at, depth + 1, add);
      return;
    case 'matchAll':
      if (!isMapping(body) || Object.keys(body).length > 0) add(at, 'matchAll takes nothing: write matchAll: {}');
      return;
    case 'hasData':
      checkHasData(body, at, add);
      return;
    default:
      if (isLeaf(operator)) checkLeaf(operator, body, at, add);
      else if (NOT_SENT.has(operator)) add(at, `${operator} is a platform filter that bulk-extract does not send; one of ${FILTER_OPERATORS.join(', ')}`);
      else add(at, `unknown operator${hint(operator, FILTER_OPERATORS)}; one of ${FILTER_OPERATORS.join(', ')}`);
  }
}

const LEAF_KEYS = {
  equals: ['property', 'value'],
  in: ['property', 'values'],
  containsAny: ['property', 'values'],
  containsAll: ['property', 'values'],
  prefix: ['property', 'value'],
  exists: ['property'],
  range: ['property'],
} as const satisfies Record<string, readonly string[]>;
type Leaf = keyof typeof LEAF_KEYS;

function isLeaf(operator: string): operator is Leaf {
  return Object.hasOwn(LEAF_KEYS, operator);
}

function checkLeaf(operator: Leaf, body: unknown, at: FilterPath, add: Add): void {
  const required: readonly string[] = LEAF_KEYS[operator];
  const allowed = operator === 'range' ? [...required, ...BOUNDS] : required;
  if (!isMapping(body)) {
    add(at, `expected {${required.join(', ')}}`);
    return;
  }
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) add([...at, key], `unknown key${hint(key, allowed)}; ${operator} takes ${allowed.join(', ')}`);
  }
  const missing = required.filter((key) => body[key] === undefined);
  if (missing.length > 0) add(at, `${operator} needs ${required.join(' and ')}; ${missing.join(' and ')} missing`);
  const field = body.property === undefined ? undefined : checkReference(body.property, [...at, 'property'], add);
  if (body.value !== undefined) checkValue(operator, field, body.value, [...at, 'value'], add);
  if (body.values !== undefined) checkValues(operator, field, body.values, [...at, 'values'], add);
  if (operator === 'range') checkRange(field, body, at, add);
  if (field !== undefined && operator.startsWith('contains')) add([...at, 'property'], `${operator} applies to list properties; ${field} is not one (use in)`);
}

/** Checks a reference; returns the instance field it names (`externalId`), if it names one. */
function checkReference(ref: unknown, at: FilterPath, add: Add): string | undefined {
  if (!Array.isArray(ref) || !ref.every((name) => typeof name === 'string') || (ref.length !== 2 && ref.length !== 3)) {
    add(at, REFERENCE_EXPECTED);
    return undefined;
  }
  if (ref.length === 2) {
    const [scope, field] = ref as [string, string];
    if (scope !== 'node' && scope !== 'edge') add([...at, 0], 'an instance field is named ["node", field] or ["edge", field]');
    else if (!Object.hasOwn(BASE_FIELDS, field)) add([...at, 1], `not a field of an instance${hint(field, Object.keys(BASE_FIELDS))}; one of ${Object.keys(BASE_FIELDS).join(', ')}`);
    else if (scope === 'node' && EDGE_ONLY.has(field)) add([...at, 1], `${field} is a field of edges: ["edge", "${field}"]`);
    else return field;
    return undefined;
  }
  const [space, source, property] = ref as [string, string, string];
  const slash = source.indexOf('/');
  const problems: [number, string | undefined][] = [
    [0, spaceProblem(space)],
    [1, slash < 0
      ? externalIdProblem(source)
      : externalIdProblem(source.slice(0, slash)) ?? versionProblem(source.slice(slash + 1))],
    [2, propertyProblem(property)],
  ];
  for (const [i, problem] of problems) if (problem !== undefined) add([...at, i], i === 1 ? `${problem} (a container's, or "view/version")` : problem);
  return undefined;
}

function checkValue(operator: Leaf, field: string | undefined, value: unknown, at: FilterPath, add: Add): void {
  if (operator === 'prefix') {
    if (isMapping(value) && value.parameter !== undefined) add(at, PARAMETER_REFUSED);
    else if (typeof value !== 'string' || value === '') add(at, 'expected the text the value starts with');
    else if (field !== undefined && BASE_FIELDS[field] !== 'text') add(at, `prefix applies to text; ${field} is not text`);
    return;
  }
  checkRawValue(value, at, add);
  checkFieldValue(field, value, at, add);
}

function checkValues(operator: Leaf, field: string | undefined, values: unknown, at: FilterPath, add: Add): void {
  if (isMapping(values) && (values.parameter !== undefined || values.property !== undefined)) {
    checkRawValue(values, at, add);
    return;
  }
  if (!Array.isArray(values) || values.length === 0) add(at, `expected a non-empty list of values for ${operator}`);
  else if (values.length > MAX_FILTER_VALUES) add(at, `at most ${MAX_FILTER_VALUES} values, as the platform accepts; split them with or`);
  else {
    values.forEach((value, i) => {
      checkRawValue(value, [...at, i], add);
      checkFieldValue(field, value, [...at, i], add);
    });
  }
}

/** A value as the platform takes it: JSON other than null, or `{property: reference}` (another property's value). */
function checkRawValue(value: unknown, at: FilterPath, add: Add): void {
  if (value === null) add(at, 'a value cannot be null; instances without a value match not: {exists: {property: ...}}');
  else if (typeof value === 'number' && !Number.isFinite(value)) add(at, 'not a finite number');
  else if (Array.isArray(value)) value.forEach((item, i) => checkRawValue(item, [...at, i], add));
  else if (isMapping(value)) {
    if (value.parameter !== undefined) add(at, PARAMETER_REFUSED);
    else if (isReference(value)) checkReference(value.property, [...at, 'property'], add);
    else if (isNodeReferenceShape(value)) checkNodeReference(value, at, add);
  }
}

/** Values of instance fields have one type each: text, `{space, externalId}`, node or edge, an integer. */
function checkFieldValue(field: string | undefined, value: unknown, at: FilterPath, add: Add): void {
  const kind = field === undefined || isReference(value) ? undefined : BASE_FIELDS[field];
  if (kind === 'text' && typeof value !== 'string') add(at, `${field} is text; expected a string`);
  if (kind === 'ref' && !isNodeReferenceShape(value)) add(at, `${field} is a node: expected {space, externalId}`);
  if (kind === 'instanceType' && value !== 'node' && value !== 'edge') add(at, 'expected node or edge');
  if (kind === 'int' && !Number.isSafeInteger(value)) add(at, `${field} is an integer`);
}

function checkRange(field: string | undefined, body: Readonly<Record<string, unknown>>, at: FilterPath, add: Add) {
  const given = BOUNDS.filter((bound) => body[bound] !== undefined);
  if (given.length === 0) add(at, 'give at least one of gt, gte, lt, lte');
  if (body.gt !== undefined && body.gte !== undefined) add([...at, 'gte'], 'give gt or gte, not both');
  if (body.lt !== undefined && body.lte !== undefined) add([...at, 'lte'], 'give lt or lte, not both');
  const kind = field === undefined ? undefined : BASE_FIELDS[field];
  if (kind === 'ref' || kind === 'instanceType') add([...at, 'property'], `range does not apply to ${field}`);
  for (const bound of given) {
    const value = body[bound];
    const reference = isMapping(value) && (value.parameter !== undefined || value.property !== undefined);
    if (reference) checkRawValue(value, [...at, bound], add);
    else if (typeof value === 'string' ? value === '' : typeof value !== 'number' || !Number.isFinite(value)) {
      add([...at, bound], 'expected a number or a string (a timestamp as 2024-01-01T00:00:00Z, a date as 2024-01-01)');
    }
  }
  const lower = body.gt ?? body.gte;
  const upper = body.lt ?? body.lte;
  if (typeof lower === 'number' && typeof upper === 'number' && (lower > upper || (lower === upper && (body.gt ?? body.lt) !== undefined))) {
    add(at, `the range from ${lower} to ${upper} holds no value`);
  }
}

function checkHasData(body: unknown, at: FilterPath, add: Add): void {
  if (!Array.isArray(body) || body.length === 0) {
    add(at, 'expected a non-empty list of views {type: view, space, externalId, version} or containers {type: container, space, externalId}');
    return;
  }
  body.forEach((source, i) => {
    const here = [...at, i];
    const type = isMapping(source) ? source.type : undefined;
    if (!isMapping(source) || (type !== 'view' && type !== 'container')) {
      add(here, 'expected a view {type: view, space, externalId, version} or a container {type: container, space, externalId}');
      return;
    }
    const keys = type === 'view' ? ['type', 'space', 'externalId', 'version'] : ['type', 'space', 'externalId'];
    for (const key of Object.keys(source)) if (!keys.includes(key)) add([...here, key], `unknown key${hint(key, keys)}; a ${type} is {${keys.join(', ')}}`);
    const checks: [string, string | undefined][] = [
      ['space', spaceProblem(source.space)],
      ['externalId', externalIdProblem(source.externalId)],
      ...(type === 'view' ? [['version', versionProblem(source.version)] as [string, string | undefined]] : []),
    ];
    for (const [key, problem] of checks) if (problem !== undefined) add([...here, key], problem);
  });
}

/** `{property: [...]}`: the value of another property of the same instance. */
function isReference(value: unknown): value is { property: unknown } {
  return isMapping(value) && Object.keys(value).length === 1 && value.property !== undefined;
}

function isNodeReferenceShape(value: unknown): value is { space: unknown; externalId: unknown } {
  return isMapping(value) && Object.keys(value).length === 2 && 'space' in value && 'externalId' in value;
}

function checkNodeReference(value: { space: unknown; externalId: unknown }, at: FilterPath, add: Add): void {
  const space = spaceProblem(value.space);
  const externalId = instanceExternalIdProblem(value.externalId);
  if (space !== undefined) add([...at, 'space'], space);
  if (externalId !== undefined) add([...at, 'externalId'], externalId);
}

function hint(key: string, known: readonly string[]): string {
  const proposal = suggestKey(key, known);
  return proposal === undefined ? '' : ` (did you mean ${JSON.stringify(proposal)}?)`;
}

export function isMapping(value: unknown): value is Readonly<Record<string, unknown>> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
