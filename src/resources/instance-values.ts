/**
 * An instance's values as its Parquet columns hold them (instances.ts has the columns), and the
 * rule that keeps a value the column cannot hold: it goes to `extra` as it came, never to the
 * column as something else. DMS writes timestamp properties as text with a zone
 * (`2024-01-01T00:00:00.000+00:00`, fractions to the microsecond) and dates as `2024-01-01`; the
 * instance's own times are epoch milliseconds.
 */
import { stringify as stringifyExact } from 'lossless-json';
import { type InstanceColumn, type InstanceColumnKind, type ViewRef, viewSourceKey } from './instances.js';

export interface NodeRef {
  readonly space: string;
  readonly externalId: string;
}

/** A column's value: null for none; epoch ms for a timestamp, days since 1970-01-01 for a date, JSON text for json. */
export type ColumnValue = null | string | number | bigint | boolean | NodeRef | readonly ColumnValue[];

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_MS = 86_400_000;
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
/** The largest finite float32. */
const FLOAT32_MAX = 3.4028234663852886e38;

/**
 * Epoch milliseconds of a DMS timestamp: `YYYY-MM-DDTHH:MM:SS`, an optional fraction of 1 to 9
 * digits (cut to milliseconds, never rounded up into the next second), and `Z` or `±HH:MM`.
 * Undefined for anything else, a day or time that does not exist included (2023-02-29, 24:00).
 */
export function dmsTimestampMs(text: string): number | undefined {
  const match = TIMESTAMP.exec(text);
  if (match === null) return undefined;
  const [, year, month, day, hour, minute, second, fraction = '', zone] = match as unknown as string[];
  const days = civilDays(Number(year), Number(month), Number(day));
  const offset = zoneMinutes(zone!);
  if (days === undefined || offset === undefined || Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) {
    return undefined;
  }
  const ms = Number(fraction.padEnd(3, '0').slice(0, 3));
  const minutes = Number(hour) * 60 + Number(minute) - offset;
  return days * DAY_MS + minutes * 60_000 + Number(second) * 1000 + ms;
}

/** Days since 1970-01-01 of a DMS date, `YYYY-MM-DD`; undefined for anything else. */
export function dmsDateDays(text: string): number | undefined {
  const match = DATE.exec(text);
  return match === null ? undefined : civilDays(Number(match[1]), Number(match[2]), Number(match[3]));
}

/** `Z` or `±HH:MM` (hours up to 23) in minutes east of UTC. */
function zoneMinutes(zone: string): number | undefined {
  if (zone === 'Z') return 0;
  const hours = Number(zone.slice(1, 3));
  const minutes = Number(zone.slice(4, 6));
  if (hours > 23 || minutes > 59) return undefined;
  return (zone.startsWith('-') ? -1 : 1) * (hours * 60 + minutes);
}

/**
 * Days from 1970-01-01 to a day of the proleptic Gregorian calendar, years 1 to 9999 (Howard
 * Hinnant's days_from_civil); undefined for a day that does not exist. Date.UTC is not used: it
 * reads the years 0 to 99 as 1900 to 1999.
 */
function civilDays(year: number, month: number, day: number): number | undefined {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > lengths[month - 1]!) return undefined;
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

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
