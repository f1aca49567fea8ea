import type { SeriesRef } from './series-lookup.js';
import { isRecord, shown } from '../filter-object.js';
import { PLATFORM_AGGREGATES } from '../../resources/index.js';

/**
 * The fields of a `POST /timeseries/data/list` body, one validator each: each takes the value and
 * the field's name in the body (`limit`, `items[3].limit`) and answers the value or a message
 * naming the field, as the platform's 400s do.
 */
export type Field<T> = { ok: true; value: T } | { ok: false; message: string };

/** The aggregates the simulator computes, in the order an aggregate point lists them. */
export const SERVED_AGGREGATES = ['average', 'max', 'min', 'count', 'sum'] as const;
export type AggregateName = (typeof SERVED_AGGREGATES)[number];

/** Aggregates the platform computes (interpolated, variance, status counts...) that the simulator does not. */
const UNSERVED_AGGREGATES = PLATFORM_AGGREGATES.filter(
  (name) => !(SERVED_AGGREGATES as readonly string[]).includes(name),
);

/** Per request, in total over the items: raw points, and aggregate points. */
export const MAX_RAW_POINTS = 100_000;
export const MAX_AGGREGATE_POINTS = 10_000;
export const MAX_QUERIES = 100;

export function fail<T>(message: string): Field<T> {
  return { ok: false, message };
}

export function booleanField(value: unknown, field: string, fallback: boolean): Field<boolean> {
  if (value === undefined) return { ok: true, value: fallback };
  if (typeof value === 'boolean') return { ok: true, value };
  return fail(`Invalid property '${field}': expected true or false, got ${shown(value)}.`);
}

export function stringField(value: unknown, field: string, most: number): Field<string | undefined> {
  if (value === undefined) return { ok: true, value: undefined };
  if (typeof value === 'string' && value.length >= 1 && value.length <= most) return { ok: true, value };
  return fail(`Invalid property '${field}': expected a string of 1..${most} characters, got ${shown(value)}.`);
}

/** `limit`: 1..100,000 for raw points, 1..10,000 for aggregates; 100 when not given. */
export function limitField(value: unknown, field: string, aggregate: boolean): Field<number> {
  if (value === undefined) return { ok: true, value: 100 };
  const most = aggregate ? MAX_AGGREGATE_POINTS : MAX_RAW_POINTS;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= most) return { ok: true, value };
  const what = aggregate ? 'aggregates' : 'raw datapoints';
  return fail(`Invalid property '${field}': expected an integer in 1..${most} (${what}), got ${shown(value)}.`);
}

/** `aggregates`: names the simulator computes; an empty list (or none) asks for raw points. */
export function aggregatesField(value: unknown, field: string): Field<AggregateName[]> {
  if (value === undefined) return { ok: true, value: [] };
  if (!Array.isArray(value)) return fail(`Invalid property '${field}': expected an array of aggregate names, got ${shown(value)}.`);
  const names = new Set<AggregateName>();
  for (const name of value as unknown[]) {
    const served = SERVED_AGGREGATES.find((candidate) => candidate === name);
    if (served !== undefined) {
      names.add(served);
      continue;
    }
    if (typeof name === 'string' && UNSERVED_AGGREGATES.includes(name)) {
      return fail(
        `Invalid property '${field}': aggregate '${name}' is accepted by the platform but not served by the simulator, which serves ${SERVED_AGGREGATES.join(', ')}.`,
      );
    }
    return fail(`Invalid property '${field}': unknown aggregate ${shown(name)}. The platform's aggregates: ${[...SERVED_AGGREGATES, ...UNSERVED_AGGREGATES].join(', ')}.`);
  }
  return { ok: true, value: SERVED_AGGREGATES.filter((name) => names.has(name)) };
}

/** Exactly one of `id`, `externalId`, `instanceId` {space, externalId}. */
export function seriesRefField(item: Record<string, unknown>, field: string): Field<SeriesRef> {
  const given = ['id', 'externalId', 'instanceId'].filter((key) => item[key] !== undefined);
  if (given.length !== 1) {
    return fail(`Invalid property '${field}': name the time series by exactly one of id, externalId, instanceId; got ${given.length === 0 ? 'none' : given.join(', ')}.`);
  }
  const { id, externalId, instanceId } = item;
  if (id !== undefined) {
    if (typeof id === 'number' && Number.isSafeInteger(id) && id >= 1) return { ok: true, value: { id } };
    return fail(`Invalid property '${field}.id': expected an integer in 1..${Number.MAX_SAFE_INTEGER}, got ${shown(id)}.`);
  }
  if (externalId !== undefined) {
    const text = stringField(externalId, `${field}.externalId`, 255);
    return text.ok ? { ok: true, value: { externalId: text.value ?? '' } } : text;
  }
  const keys = isRecord(instanceId) ? Object.keys(instanceId).sort().join(',') : '';
  const space = isRecord(instanceId) ? stringField(instanceId.space, `${field}.instanceId.space`, 43) : undefined;
  const inner = isRecord(instanceId) ? stringField(instanceId.externalId, `${field}.instanceId.externalId`, 255) : undefined;
  if (keys !== 'externalId,space' || space === undefined || inner === undefined) {
    return fail(`Invalid property '${field}.instanceId': expected {space, externalId}, got ${shown(instanceId)}.`);
  }
  if (!space.ok) return space;
  if (!inner.ok) return inner;
  return { ok: true, value: { instanceId: { space: space.value ?? '', externalId: inner.value ?? '' } } };
}

/** Time zones that align aggregates as UTC does. */
const UTC_ZONES = ['UTC', 'Z', 'Etc/UTC', 'GMT', 'UTC+00:00', 'UTC-00:00', '+00:00', '-00:00'];

/**
 * `timeZone` is accepted when it names a zone (IANA or `UTC±HH:MM`); the simulator aligns
 * aggregates in UTC only, so another zone with aggregates is a 400 saying so. Raw points do not
 * depend on it.
 */
export function timeZoneField(value: unknown, aggregates: boolean): Field<string | undefined> {
  const text = stringField(value, 'timeZone', 64);
  if (!text.ok || text.value === undefined) return text;
  const zone = text.value;
  if (UTC_ZONES.includes(zone)) return text;
  if (!isTimeZone(zone)) return fail(`Invalid property 'timeZone': ${shown(zone)} is not a time zone (IANA name or UTC±HH:MM).`);
  if (aggregates) return fail(`Invalid property 'timeZone': the simulator aligns aggregates in UTC only, got ${shown(zone)}.`);
  return text;
}

function isTimeZone(zone: string): boolean {
  if (/^UTC[+-](0[0-9]|1[0-4]):[0-5][0-9]$/.test(zone)) return true;
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
