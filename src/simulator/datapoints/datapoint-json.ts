import type { BucketValues, ExtremePoint } from './aggregate-bucket.js';
import { type AggregateName, SERVED_AGGREGATES } from './datapoints-fields.js';
import type { SeriesPoint } from './series-points.js';
import type { GeneratedTimeseries } from '../dataset/timeseries.js';

/**
 * The JSON text of a datapoints answer, written by hand rather than through objects and
 * JSON.stringify: an answer holds up to 100,000 points, and the simulator must never be what a
 * benchmark of an export measures.
 */

/** A raw point: `{timestamp, value?, status?}`; a status only when asked for, and never Good's. */
export function rawPointJson(point: SeriesPoint, includeStatus: boolean): string {
  const { timestamp, value } = point;
  const status = includeStatus ? point.status : undefined;
  // The common case in one template (a tenth faster than building it up); a number is written as
  // its shortest round-trip text, strings (and "NaN", "Infinity", "-Infinity") quoted.
  if (typeof value === 'number' && status === undefined) return `{"timestamp":${timestamp},"value":${value}}`;
  let text = `{"timestamp":${timestamp}`;
  if (value !== undefined) text += `,"value":${typeof value === 'number' ? value : JSON.stringify(value)}`;
  if (status !== undefined) text += `,"status":{"code":${status.code},"symbol":${JSON.stringify(status.symbol)}}`;
  return `${text}}`;
}

/**
 * An aggregate point: `{timestamp, ...}` with the asked aggregates only, in the platform's order,
 * each left out where the bucket has none (no counted point, or the interpolated function
 * undefined there). An extreme point carries its status only with `includeStatus`.
 */
export function aggregatePointJson(
  values: BucketValues,
  asked: readonly AggregateName[],
  includeStatus: boolean,
): string {
  let text = `{"timestamp":${values.timestamp}`;
  for (const name of SERVED_AGGREGATES) {
    const value = values[name];
    if (value === undefined || !asked.includes(name)) continue;
    text += `,"${name}":${typeof value === 'number' ? String(value) : extremeJson(value, includeStatus)}`;
  }
  return `${text}}`;
}

function extremeJson(point: ExtremePoint, includeStatus: boolean): string {
  const { status } = point;
  const shown =
    includeStatus && status !== undefined ? `,"status":{"code":${status.code},"symbol":${JSON.stringify(status.symbol)}}` : '';
  return `{"timestamp":${point.timestamp},"value":${point.value}${shown}}`;
}

/**
 * One item of the answer: the series' identity and kind, `nextCursor` when more points remain,
 * then `datapoints` (the order of the platform's documentation).
 */
export function answerItemJson(
  series: GeneratedTimeseries,
  points: readonly string[],
  nextCursor: string | undefined,
): string {
  const head: Record<string, unknown> = { id: series.id };
  if (series.externalId !== undefined) head.externalId = series.externalId;
  if (series.instanceId !== undefined) head.instanceId = series.instanceId;
  head.isString = series.isString;
  head.isStep = series.isStep;
  head.type = series.type;
  if (series.unit !== undefined) head.unit = series.unit;
  if (series.unitExternalId !== undefined) head.unitExternalId = series.unitExternalId;
  if (nextCursor !== undefined) head.nextCursor = nextCursor;
  const text = JSON.stringify(head);
  return `${text.slice(0, -1)},"datapoints":[${points.join(',')}]}`;
}
