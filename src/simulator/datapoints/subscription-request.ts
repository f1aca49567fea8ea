import { isRecord, shown } from '../filter-object.js';
import { booleanField, fail, type Field, stringField } from './datapoints-fields.js';
import { MAX_PARTITIONS, type SeriesSelection, type SubscriptionSpec } from './subscriptions.js';

/**
 * The bodies of the subscription routes, validated the way the platform validates bodies:
 * strictly, each refusal naming its path in the body (`items[0].partitionCount`, `partitions[1].index`).
 */

const CREATE_KEYS = ['externalId', 'name', 'description', 'partitionCount', 'timeSeriesIds', 'instanceIds', 'filter', 'dataSetId'];
const NOT_SERVED = ['instanceIds', 'dataSetId', 'description'];
/** The platform's cap on the series a subscription names. */
const MAX_NAMED_SERIES = 10_000;
const FILTER_PROPERTIES = ['isString', 'isStep'] as const;

/** `POST /timeseries/subscriptions`: `{items: [one subscription]}`. */
export function parseCreateBody(body: unknown): Field<SubscriptionSpec> {
  if (!isRecord(body)) return fail(`The request body must be a JSON object, got ${shown(body)}.`);
  const unknown = Object.keys(body).find((key) => key !== 'items');
  if (unknown !== undefined) return fail(`Unrecognized property '${unknown}'. Allowed: items.`);
  const { items } = body;
  if (!Array.isArray(items) || items.length !== 1 || !isRecord(items[0])) {
    return fail(`Invalid property 'items': expected an array of one subscription object, got ${shown(items)}.`);
  }
  const item = items[0];
  for (const key of Object.keys(item)) {
    if (NOT_SERVED.includes(key)) return fail(`Invalid property 'items[0].${key}': the platform takes it; the simulator does not serve it.`);
    if (!CREATE_KEYS.includes(key)) return fail(`Unrecognized property 'items[0].${key}'. Allowed: ${CREATE_KEYS.join(', ')}.`);
  }
  const externalId = stringField(item.externalId, 'items[0].externalId', 255);
  if (!externalId.ok) return externalId;
  if (externalId.value === undefined) return fail("Invalid property 'items[0].externalId': required.");
  const name = stringField(item.name, 'items[0].name', 255);
  if (!name.ok) return name;
  const { partitionCount } = item;
  if (typeof partitionCount !== 'number' || !Number.isInteger(partitionCount) || partitionCount < 1 || partitionCount > MAX_PARTITIONS) {
    return fail(`Invalid property 'items[0].partitionCount': expected an integer in 1..${MAX_PARTITIONS}, got ${shown(partitionCount)}.`);
  }
  const selection = selectionOf(item);
  if (!selection.ok) return selection;
  return {
    ok: true,
    value: {
      externalId: externalId.value,
      name: name.value ?? externalId.value,
      partitionCount,
      selection: selection.value,
    },
  };
}

/** A subscription given as a create body's item (the simulator's `subscriptions` option); a string says why not. */
export function subscriptionSpecOf(item: unknown): SubscriptionSpec | string {
  const parsed = parseCreateBody({ items: [item] });
  return parsed.ok ? parsed.value : parsed.message.replaceAll('items[0].', '').replaceAll("'items[0]'", 'the subscription');
}

/** `timeSeriesIds` (externalIds) or `filter`, not both; neither selects every series. */
function selectionOf(item: Record<string, unknown>): Field<SeriesSelection> {
  const { timeSeriesIds, filter } = item;
  if (timeSeriesIds !== undefined && filter !== undefined) {
    return fail("Invalid property 'items[0]': give timeSeriesIds or filter, not both.");
  }
  if (timeSeriesIds !== undefined) {
    const valid =
      Array.isArray(timeSeriesIds) &&
      timeSeriesIds.length >= 1 &&
      timeSeriesIds.length <= MAX_NAMED_SERIES &&
      timeSeriesIds.every((id) => typeof id === 'string' && id !== '');
    if (!valid) {
      return fail(
        `Invalid property 'items[0].timeSeriesIds': expected 1..${MAX_NAMED_SERIES} externalIds of time series, got ${shown(timeSeriesIds)}.`,
      );
    }
    return { ok: true, value: { timeSeriesIds: timeSeriesIds as string[] } };
  }
  if (filter === undefined) return { ok: true, value: { filter: undefined } };
  return filterOf(filter);
}

/**
 * The simulator's part of the time series filter language: `{equals: {property: ["isString"] or
 * ["isStep"], value: true|false}}`. Any other filter of the platform is refused, naming its path.
 */
function filterOf(filter: unknown): Field<SeriesSelection> {
  const served = 'the simulator serves only {"equals": {"property": ["isString" or "isStep"], "value": true or false}}';
  if (!isRecord(filter)) return fail(`Invalid property 'items[0].filter': expected an object, got ${shown(filter)}.`);
  const keys = Object.keys(filter);
  if (keys.length !== 1 || keys[0] !== 'equals') {
    const key = keys.find((name) => name !== 'equals') ?? keys[0] ?? '';
    return fail(`Invalid property 'items[0].filter${key === '' ? '' : `.${key}`}': ${served}.`);
  }
  const { equals } = filter;
  if (!isRecord(equals)) return fail(`Invalid property 'items[0].filter.equals': ${served}.`);
  const { property, value } = equals;
  const extra = Object.keys(equals).find((key) => key !== 'property' && key !== 'value');
  if (extra !== undefined) return fail(`Invalid property 'items[0].filter.equals.${extra}': ${served}.`);
  const name =
    Array.isArray(property) && property.length === 1
      ? FILTER_PROPERTIES.find((known) => known === property[0])
      : undefined;
  if (name === undefined) return fail(`Invalid property 'items[0].filter.equals.property': ${served}; got ${shown(property)}.`);
  if (typeof value !== 'boolean') return fail(`Invalid property 'items[0].filter.equals.value': ${served}; got ${shown(value)}.`);
  return { ok: true, value: { filter: { equals: { property: [name], value } } } };
}

/** `POST /timeseries/subscriptions/byids`: `{items: [{externalId}], ignoreUnknownIds?}`. */
export function parseByIdsBody(body: unknown): Field<{ externalIds: string[]; ignoreUnknownIds: boolean }> {
  if (!isRecord(body)) return fail(`The request body must be a JSON object, got ${shown(body)}.`);
  const unknown = Object.keys(body).find((key) => key !== 'items' && key !== 'ignoreUnknownIds');
  if (unknown !== undefined) return fail(`Unrecognized property '${unknown}'. Allowed: items, ignoreUnknownIds.`);
  const { items } = body;
  if (!Array.isArray(items) || items.length < 1 || items.length > 100) {
    return fail(`Invalid property 'items': expected an array of 1..100 {externalId} objects, got ${shown(items)}.`);
  }
  const externalIds: string[] = [];
  for (const [at, item] of items.entries()) {
    const externalId = isRecord(item) && Object.keys(item).length === 1 ? item.externalId : undefined;
    if (typeof externalId !== 'string' || externalId === '') {
      return fail(`Invalid property 'items[${at}]': expected {"externalId": "..."}, got ${shown(item)}.`);
    }
    externalIds.push(externalId);
  }
  const ignoreUnknownIds = booleanField(body.ignoreUnknownIds, 'ignoreUnknownIds', false);
  if (!ignoreUnknownIds.ok) return ignoreUnknownIds;
  return { ok: true, value: { externalIds, ignoreUnknownIds: ignoreUnknownIds.value } };
}

/** Where a partition's feed starts without a cursor: `now`, or that long before now (ms). */
export type CursorStart = { now: true } | { agoMs: number } | undefined;

/** One body of `POST /timeseries/subscriptions/data/list`. */
export interface SubscriptionDataQuery {
  externalId: string;
  partitions: { index: number; cursor: string | undefined }[];
  initializeCursors: CursorStart;
  /** 1..100,000, default 100: points in the answer, approximate (a change's points come together). */
  limit: number;
  pollTimeoutSeconds: number;
  includeStatus: boolean;
  ignoreBadDataPoints: boolean;
  treatUncertainAsBad: boolean;
}

const DATA_KEYS = [
  'externalId',
  'partitions',
  'initializeCursors',
  'limit',
  'pollTimeoutSeconds',
  'includeStatus',
  'ignoreBadDataPoints',
  'treatUncertainAsBad',
];
const AGO = /^([0-9]{1,9})(w|d|h|m)-ago$/;
const UNIT_MS: Record<string, number> = { w: 604_800_000, d: 86_400_000, h: 3_600_000, m: 60_000 };
export const MAX_DATA_LIMIT = 100_000;

/** The body of a data request; partition indexes are checked against the subscription later. */
export function parseDataBody(body: unknown): Field<SubscriptionDataQuery> {
  if (!isRecord(body)) return fail(`The request body must be a JSON object, got ${shown(body)}.`);
  const unknown = Object.keys(body).find((key) => !DATA_KEYS.includes(key));
  if (unknown !== undefined) return fail(`Unrecognized property '${unknown}'. Allowed: ${DATA_KEYS.join(', ')}.`);
  const externalId = stringField(body.externalId, 'externalId', 255);
  if (!externalId.ok) return externalId;
  if (externalId.value === undefined) return fail("Invalid property 'externalId': required (the subscription's externalId).");
  const partitions = partitionsOf(body.partitions);
  if (!partitions.ok) return partitions;
  const initializeCursors = cursorStartOf(body.initializeCursors);
  if (!initializeCursors.ok) return initializeCursors;
  const limit = integerField(body.limit, 'limit', 1, MAX_DATA_LIMIT, 100);
  if (!limit.ok) return limit;
  const pollTimeoutSeconds = integerField(body.pollTimeoutSeconds, 'pollTimeoutSeconds', 0, 5, 5);
  if (!pollTimeoutSeconds.ok) return pollTimeoutSeconds;
  const includeStatus = booleanField(body.includeStatus, 'includeStatus', false);
  if (!includeStatus.ok) return includeStatus;
  const ignoreBadDataPoints = booleanField(body.ignoreBadDataPoints, 'ignoreBadDataPoints', true);
  if (!ignoreBadDataPoints.ok) return ignoreBadDataPoints;
  const treatUncertainAsBad = booleanField(body.treatUncertainAsBad, 'treatUncertainAsBad', true);
  if (!treatUncertainAsBad.ok) return treatUncertainAsBad;
  return {
    ok: true,
    value: {
      externalId: externalId.value,
      partitions: partitions.value,
      initializeCursors: initializeCursors.value,
      limit: limit.value,
      pollTimeoutSeconds: pollTimeoutSeconds.value,
      includeStatus: includeStatus.value,
      ignoreBadDataPoints: ignoreBadDataPoints.value,
      treatUncertainAsBad: treatUncertainAsBad.value,
    },
  };
}

function partitionsOf(given: unknown): Field<SubscriptionDataQuery['partitions']> {
  if (!Array.isArray(given) || given.length < 1 || given.length > MAX_PARTITIONS) {
    return fail(`Invalid property 'partitions': expected an array of 1..${MAX_PARTITIONS} {index, cursor?} objects, got ${shown(given)}.`);
  }
  const partitions: SubscriptionDataQuery['partitions'] = [];
  for (const [at, partition] of given.entries()) {
    if (!isRecord(partition)) return fail(`Invalid property 'partitions[${at}]': expected {index, cursor?}, got ${shown(partition)}.`);
    const extra = Object.keys(partition).find((key) => key !== 'index' && key !== 'cursor');
    if (extra !== undefined) return fail(`Unrecognized property 'partitions[${at}].${extra}'. Allowed: index, cursor.`);
    const index = integerField(partition.index, `partitions[${at}].index`, 0, MAX_PARTITIONS - 1, undefined);
    if (!index.ok) return index;
    if (partitions.some((other) => other.index === index.value)) {
      return fail(`Invalid property 'partitions[${at}].index': partition ${index.value} is asked twice.`);
    }
    const cursor = stringField(partition.cursor, `partitions[${at}].cursor`, 100_000);
    if (!cursor.ok) return cursor;
    partitions.push({ index: index.value, cursor: cursor.value });
  }
  return { ok: true, value: partitions };
}

function cursorStartOf(given: unknown): Field<CursorStart> {
  if (given === undefined) return { ok: true, value: undefined };
  if (given === 'now') return { ok: true, value: { now: true } };
  const match = typeof given === 'string' ? AGO.exec(given) : null;
  if (match === null) return fail(`Invalid property 'initializeCursors': expected 'now' or 'N[w|d|h|m]-ago', got ${shown(given)}.`);
  return { ok: true, value: { agoMs: Number(match[1]) * (UNIT_MS[match[2] ?? ''] ?? 0) } };
}

/** An integer in min..max; `fallback` when absent (undefined: required). */
function integerField(
  given: unknown,
  field: string,
  min: number,
  max: number,
  fallback: number | undefined,
): Field<number> {
  if (given === undefined && fallback !== undefined) return { ok: true, value: fallback };
  if (typeof given === 'number' && Number.isInteger(given) && given >= min && given <= max) return { ok: true, value: given };
  return fail(`Invalid property '${field}': expected an integer in ${min}..${max}, got ${shown(given)}.`);
}
