import type { SeriesRef } from './series-lookup.js';
import { isRecord, shown } from '../filter-object.js';
import { parseTimeZone, type TimeZone } from './time-zone.js';

/**
 * The fields of a `POST /timeseries/data/list` or `/timeseries/data/latest` body, one validator
 * each: each takes the value and the field's name in the body (`limit`, `items[3].limit`) and
 * answers the value or a message naming the field, as the platform's 400s do.
 */
export type Field<T> = { ok: true; value: T } | { ok: false; message: string };

/** The platform's aggregates, every one served, in the order an aggregate point lists them (PLATFORM.md). */
export const SERVED_AGGREGATES = [
  'average',
  'max',
  'min',
  'count',
  'sum',
  'interpolation',
  'stepInterpolation',
  'totalVariation',
  'continuousVariance',
  'discreteVariance',
  'countGood',
  'countUncertain',
  'countBad',
  'durationGood',
  'durationUncertain',
  'durationBad',
  'maxDatapoint',
  'minDatapoint',
] as const;
export type AggregateName = (typeof SERVED_AGGREGATES)[number];

/** The aggregates by status: with one of them asked, a bucket with any point is answered. */
export const STATUS_AGGREGATES: readonly AggregateName[] = [
  'countGood',
  'countUncertain',
  'countBad',
  'durationGood',
  'durationUncertain',
  'durationBad',
];

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

/** `aggregates`: names of the platform's aggregates; an empty list (or none) asks for raw points. */
export function aggregatesField(value: unknown, field: string): Field<AggregateName[]> {
  if (value === undefined) return { ok: true, value: [] };
  if (!Array.isArray(value)) return fail(`Invalid property '${field}': expected an array of aggregate names, got ${shown(value)}.`);
  const names = new Set<AggregateName>();
  for (const name of value as unknown[]) {
    const served = SERVED_AGGREGATES.find((candidate) => candidate === name);
    if (served === undefined) {
      return fail(`Invalid property '${field}': unknown aggregate ${shown(name)}. The platform's aggregates: ${SERVED_AGGREGATES.join(', ')}.`);
    }
    names.add(served);
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

/**
 * `timeZone`: an IANA name or `UTC±HH:MM` (time-zone.ts), for the buckets of aggregates; raw
 * points do not depend on it. Undefined when not given.
 */
export function timeZoneField(value: unknown): Field<TimeZone | undefined> {
  const text = stringField(value, 'timeZone', 64);
  if (!text.ok) return text;
  if (text.value === undefined) return { ok: true, value: undefined };
  const zone = parseTimeZone(text.value);
  if (zone === undefined) return fail(`Invalid property 'timeZone': ${shown(text.value)} is not a time zone (an IANA name such as Europe/Oslo, or UTC±HH:MM).`);
  return { ok: true, value: zone };
}

/** A body's or an item's members, by name. */
export type Members = Record<string, unknown>;

/** A body of up to MAX_QUERIES `items` whose top level has only the `allowed` keys: the body, and its items. */
export function itemsBody(body: unknown, allowed: readonly string[]): Field<{ body: Members; items: unknown[] }> {
  if (!isRecord(body)) return fail(`The request body must be a JSON object, got ${shown(body)}.`);
  const unknown = Object.keys(body).find((key) => !allowed.includes(key));
  if (unknown !== undefined) return fail(`Unrecognized property '${unknown}'. Allowed: ${allowed.join(', ')}.`);
  const { items } = body;
  if (!Array.isArray(items) || items.length < 1 || items.length > MAX_QUERIES) {
    return fail(`Invalid property 'items': expected an array of 1..${MAX_QUERIES} queries, got ${shown(items)}.`);
  }
  return { ok: true, value: { body, items: items as unknown[] } };
}

/** The query at `at` (`items[3]`): an object with only the `allowed` keys. */
export function itemMembers(item: unknown, at: string, allowed: readonly string[]): Field<Members> {
  if (!isRecord(item)) return fail(`Invalid property '${at}': expected an object, got ${shown(item)}.`);
  const unknown = Object.keys(item).find((key) => !allowed.includes(key));
  if (unknown !== undefined) return fail(`Unrecognized property '${at}.${unknown}'. Allowed: ${allowed.join(', ')}.`);
  return { ok: true, value: item };
}

export interface StatusFlags {
  includeStatus: boolean;
  ignoreBadDataPoints: boolean;
  treatUncertainAsBad: boolean;
}

/**
 * A query's status flags, with the platform's defaults: statuses hidden, bad points left out,
 * uncertain ones counted as bad.
 */
export function statusFlags(item: Members, at: string): Field<StatusFlags> {
  const includeStatus = booleanField(item.includeStatus, `${at}.includeStatus`, false);
  if (!includeStatus.ok) return includeStatus;
  const ignoreBad = booleanField(item.ignoreBadDataPoints, `${at}.ignoreBadDataPoints`, true);
  if (!ignoreBad.ok) return ignoreBad;
  const uncertainAsBad = booleanField(item.treatUncertainAsBad, `${at}.treatUncertainAsBad`, true);
  if (!uncertainAsBad.ok) return uncertainAsBad;
  return {
    ok: true,
    value: {
      includeStatus: includeStatus.value,
      ignoreBadDataPoints: ignoreBad.value,
      treatUncertainAsBad: uncertainAsBad.value,
    },
  };
}

export interface TargetUnits {
  targetUnit?: string | undefined;
  targetUnitSystem?: string | undefined;
}

/**
 * A query's `targetUnit` or `targetUnitSystem` (not both): taken and bound, not applied, as the
 * simulator converts no units (the points come back in the series' own unit).
 */
export function targetUnitFields(item: Members, at: string): Field<TargetUnits> {
  const targetUnit = stringField(item.targetUnit, `${at}.targetUnit`, 64);
  if (!targetUnit.ok) return targetUnit;
  const targetUnitSystem = stringField(item.targetUnitSystem, `${at}.targetUnitSystem`, 64);
  if (!targetUnitSystem.ok) return targetUnitSystem;
  if (targetUnit.value !== undefined && targetUnitSystem.value !== undefined) {
    return fail(`Invalid property '${at}.targetUnitSystem': give targetUnit or targetUnitSystem, not both.`);
  }
  return { ok: true, value: { targetUnit: targetUnit.value, targetUnitSystem: targetUnitSystem.value } };
}
