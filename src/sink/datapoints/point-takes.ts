import { type ColumnSpec, EXTRA_COLUMN } from '../../resources/index.js';
import type { PointValue } from './point-batch.js';
import { SPECIAL_VALUES } from './point-fields.js';

/** A number, or a special value's double; null when absent. */
function numeric(value: unknown): number | null {
  if (typeof value === 'number') return value;
  return typeof value === 'string' && Object.hasOwn(SPECIAL_VALUES, value) ? SPECIAL_VALUES[value]! : null;
}

/** How a column's value is taken from a point of a series (PointReader takes the same from its bytes). */
export type Take = (point: PointValue, isString: boolean) => unknown;

/** How the column `spec` is read from a point: `known` are the fields that have a column (or are the status). */
export function takeOf(spec: ColumnSpec, known: ReadonlySet<string>): Take {
  switch (spec.name) {
    case 'value':
      return (point, isString) => (isString ? null : numeric(point.value));
    case 'valueString':
      return (point, isString) => (isString && typeof point.value === 'string' ? point.value : null);
    case 'statusCode':
      // The platform leaves the Good status (code 0) out of the point.
      return (point) => (point.status === undefined ? 0 : ((point.status as { code: number }).code));
    case 'statusSymbol':
      return (point) => (point.status === undefined ? 'Good' : ((point.status as { symbol?: string }).symbol ?? null));
    case EXTRA_COLUMN:
      return (point) => extraOf(point, known);
    default:
      return (point) => numeric(point[spec.name]);
  }
}

/** The fields of a point outside its columns, as one JSON object; null when there are none. */
function extraOf(point: PointValue, known: ReadonlySet<string>): string | null {
  let extra: Record<string, unknown> | undefined;
  for (const key in point) {
    if (!known.has(key)) (extra ??= Object.create(null) as Record<string, unknown>)[key] = point[key];
  }
  return extra === undefined ? null : JSON.stringify(extra);
}
