/**
 * An instance's values as its Parquet columns hold them (instances.ts has the columns), and the
 * rule that keeps a value the column cannot hold: it goes to `extra` as it came, never to the
 * column as something else. Timestamp and date properties come as text (dms-time.ts reads
 * them); the instance's own times are epoch milliseconds.
 */
import { stringify as stringifyExact } from 'lossless-json';
import { dmsDateDays, dmsTimestampMs } from './dms-time.js';
import type { InstanceColumnKind } from './column-kinds.js';
import { type InstanceColumn, type ViewRef, viewSourceKey } from './instances.js';

export interface NodeRef {
  readonly space: string;
  readonly externalId: string;
}

/** A column's value: null for none; epoch ms for a timestamp, days since 1970-01-01 for a date, JSON text for json. */
export type ColumnValue = null | string | number | bigint | boolean | NodeRef | readonly ColumnValue[];

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
/** The largest finite float32. */
const FLOAT32_MAX = 3.4028234663852886e38;

/**
 * The value a column holds for `value` as the API returned it: null for no value (null or
 * absent), undefined when the column cannot hold it (a text in an int64 column, a date that does
 * not exist, a list with a null): then the value belongs in `extra` as it came.
 */
export function columnValue(column: Pick<InstanceColumn, 'kind' | 'list'>, value: unknown): ColumnValue | undefined {
  if (value === null || value === undefined) return null;
  if (!column.list) return scalar(column.kind, value);
  if (!Array.isArray(value)) return undefined;
  const items: ColumnValue[] = [];
  for (const item of value as unknown[]) {
    const converted = item === null ? undefined : scalar(column.kind, item);
    if (converted === undefined) return undefined;
    items.push(converted);
  }
  return items;
}

/**
 * The values each kind takes: texts for string; integers in range for int32, safe integers for
 * int64 (past 2^53 a JSON number is no longer the integer that was sent); finite numbers for
 * double, and in float32's range for float; booleans; a DMS timestamp text or integer epoch ms
 * for timestamp; a DMS date for date; any JSON for json (kept as its text); `{space, externalId}`
 * texts, nothing else, for node-ref; a JSON object for extra-json.
 */
function scalar(kind: InstanceColumnKind, value: unknown): ColumnValue | undefined {
  switch (kind) {
    case 'string':
      return typeof value === 'string' ? value : undefined;
    case 'int32':
      return typeof value === 'number' && Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX ? value : undefined;
    case 'int64':
      // A BigInt: an integer beyond 2^53, parsed exactly from the instance's bytes.
      if (typeof value === 'bigint') return BigInt.asIntN(64, value) === value ? value : undefined;
      return Number.isSafeInteger(value) ? (value as number) : undefined;
    case 'float':
      return typeof value === 'number' && Math.abs(value) <= FLOAT32_MAX ? value : undefined;
    case 'double':
      return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
    case 'boolean':
      return typeof value === 'boolean' ? value : undefined;
    case 'timestamp':
      return typeof value === 'string' ? dmsTimestampMs(value) : Number.isSafeInteger(value) ? (value as number) : undefined;
    case 'date':
      return typeof value === 'string' ? dmsDateDays(value) : undefined;
    case 'json':
      return jsonText(value);
    case 'node-ref':
      return nodeRef(value);
    case 'extra-json':
      return typeof value === 'object' && !Array.isArray(value) ? jsonText(value) : undefined;
  }
}

/**
 * JSON text of a value as it came; integers beyond 2^53 (BigInt, when the instance was parsed
 * exactly) written with their own digits.
 */
function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return stringifyExact(value) as string;
  }
}

function nodeRef(value: unknown): NodeRef | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { space, externalId, ...more } = value as Record<string, unknown>;
  if (typeof space !== 'string' || typeof externalId !== 'string' || Object.keys(more).length > 0) return undefined;
  return { space, externalId };
}

/**
 * An instance as the API returned it (parsed), as a row of `columns` (instanceColumns' columns of
 * `view`): each column's value, and in the `extra` column the JSON text of all that no column
 * took, in the instance's own shape (`{"properties": {space: {"view/version": {...}}}}` for
 * values of properties), or null when every value found its column. A value a column cannot hold
 * is null in the column and kept in `extra`.
 */
export function instanceRow(
  item: Readonly<Record<string, unknown>>,
  columns: readonly InstanceColumn[],
  view: ViewRef,
): ColumnValue[] {
  return rowTakingAll(item, columns, view) ?? rowWithExtra(item, columns, view);
}

/**
 * The common case, read without copying the item: every field and every property of the view's
 * group found its column, and the item holds nothing else (its `properties` are that one group).
 * Undefined otherwise, and rowWithExtra works out what goes to `extra`.
 */
function rowTakingAll(
  item: Readonly<Record<string, unknown>>,
  columns: readonly InstanceColumn[],
  view: ViewRef,
): ColumnValue[] | undefined {
  const group = onlyGroup(item.properties, view);
  if (group === undefined) return undefined;
  const values: ColumnValue[] = new Array<ColumnValue>(columns.length);
  let fields = 0;
  let properties = 0;
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i]!;
    const { from } = column;
    values[i] = null;
    if ('extra' in from) continue;
    const field = 'field' in from;
    const holder = field ? item : group;
    const key = field ? from.field : from.property;
    if (!Object.hasOwn(holder, key)) continue;
    const value = columnValue(column, holder[key]);
    if (value === undefined) return undefined;
    values[i] = value;
    if (field) fields++;
    else properties++;
  }
  return ownKeys(item) === fields + 1 && ownKeys(group) === properties ? values : undefined;
}

/** The view's group of values when `properties` holds nothing else: `{space: {"view/version": group}}`. */
function onlyGroup(properties: unknown, view: ViewRef): Readonly<Record<string, unknown>> | undefined {
  if (!isObject(properties) || ownKeys(properties) !== 1) return undefined;
  const sources = properties[view.space];
  if (!isObject(sources) || ownKeys(sources) !== 1) return undefined;
  const group = sources[viewSourceKey(view)];
  return isObject(group) ? group : undefined;
}

function ownKeys(object: object): number {
  let count = 0;
  for (const key in object) if (Object.hasOwn(object, key)) count++;
  return count;
}

/** Any instance: what no column took (or could hold) goes to `extra`, in the instance's own shape. */
function rowWithExtra(
  item: Readonly<Record<string, unknown>>,
  columns: readonly InstanceColumn[],
  view: ViewRef,
): ColumnValue[] {
  const { properties, ...rest } = item as Record<string, unknown>;
  const left = copyGroups(properties);
  const sources: unknown = left?.[view.space];
  const found = isObject(sources) ? sources[viewSourceKey(view)] : undefined;
  const group = isObject(found) ? found : undefined;
  let extraAt = -1;
  const values = columns.map((column, i): ColumnValue => {
    if ('extra' in column.from) {
      extraAt = i;
      return null;
    }
    const holder = 'field' in column.from ? rest : group;
    const key = 'field' in column.from ? column.from.field : column.from.property;
    const given = holder !== undefined && Object.hasOwn(holder, key);
    const value = columnValue(column, given ? holder[key] : undefined);
    if (value === undefined) return null;
    if (given) delete holder[key];
    return value;
  });
  const remaining: Record<string, unknown> = rest;
  if (left !== undefined && Object.keys(withoutEmpty(left)).length > 0) remaining.properties = left;
  if (left === undefined && properties !== undefined && properties !== null) remaining.properties = properties;
  if (extraAt >= 0 && Object.keys(remaining).length > 0) values[extraAt] = jsonText(remaining);
  return values;
}

type Groups = Record<string, Record<string, Record<string, unknown>>>;

/** The `properties` of an instance, copied two levels deep so that taking values leaves the item alone. */
function copyGroups(properties: unknown): Groups | undefined {
  if (!isObject(properties)) return undefined;
  const copy = (sources: unknown) =>
    isObject(sources)
      ? Object.fromEntries(Object.entries(sources).map(([key, group]) => [key, isObject(group) ? { ...group } : group]))
      : sources;
  return Object.fromEntries(Object.entries(properties).map(([space, sources]) => [space, copy(sources)])) as Groups;
}

/** The groups that still hold a value: an empty group of a view, or a space left with none, carries nothing. */
function withoutEmpty(groups: Groups): Groups {
  for (const [space, sources] of Object.entries(groups)) {
    if (!isObject(sources)) continue;
    for (const [source, values] of Object.entries(sources)) {
      if (isObject(values) && Object.keys(values).length === 0) delete sources[source];
    }
    if (Object.keys(sources).length === 0) delete groups[space];
  }
  return groups;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
