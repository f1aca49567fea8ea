import type { PropertyKind } from './core-model.js';

/**
 * The values a filter compares, by the class of what it compares them with. Both sides are brought
 * to one comparable form: text as is, timestamps as epoch ms, direct relations as
 * `space NUL externalId`.
 */
export type ValueClass = 'text' | 'enum' | 'date' | 'int32' | 'int64' | 'float' | 'timestamp' | 'epoch' | 'boolean' | 'ref' | 'json';
export type Comparable = string | number | boolean;

/** The class of a container property's values. */
export function classOf(type: PropertyKind): ValueClass {
  switch (type) {
    case 'float32':
    case 'float64':
      return 'float';
    case 'direct':
      return 'ref';
    default:
      return type;
  }
}

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

export function refKey(space: string, externalId: string): string {
  return `${space}\u0000${externalId}`;
}

/** A filter's value for a property of `valueClass`, or what was expected instead. */
export function filterValue(
  valueClass: ValueClass,
  given: unknown,
  enumValues: readonly string[] = [],
): { ok: true; value: Comparable } | { ok: false; expected: string } {
  const fail = (expected: string) => ({ ok: false as const, expected });
  switch (valueClass) {
    case 'text':
      return typeof given === 'string' ? { ok: true, value: given } : fail('a string');
    case 'enum':
      return typeof given === 'string' && enumValues.includes(given) ? { ok: true, value: given } : fail(`one of ${enumValues.join(', ')}`);
    case 'date':
      return typeof given === 'string' && ISO_DATE.test(given) && !Number.isNaN(Date.parse(given))
        ? { ok: true, value: given }
        : fail('a date as YYYY-MM-DD');
    case 'int32':
      return Number.isInteger(given) && Math.abs(given as number) <= 2 ** 31 ? { ok: true, value: given as number } : fail('an int32');
    case 'int64':
    case 'epoch':
      return Number.isSafeInteger(given) ? { ok: true, value: given as number } : fail('an integer');
    case 'float':
      return typeof given === 'number' && Number.isFinite(given) ? { ok: true, value: given } : fail('a number');
    case 'timestamp': {
      const ms = typeof given === 'string' && ISO_TIMESTAMP.test(given) ? Date.parse(given) : Number.NaN;
      return Number.isNaN(ms) ? fail('an ISO 8601 timestamp such as 2024-01-31T12:00:00.000+00:00') : { ok: true, value: ms };
    }
    case 'boolean':
      return typeof given === 'boolean' ? { ok: true, value: given } : fail('true or false');
    case 'ref': {
      const ref = given as { space?: unknown; externalId?: unknown } | null;
      const plain = typeof given === 'object' && given !== null && !Array.isArray(given) && Object.keys(given).length === 2;
      return plain && typeof ref?.space === 'string' && typeof ref.externalId === 'string'
        ? { ok: true, value: refKey(ref.space, ref.externalId) }
        : fail('{"space": ..., "externalId": ...}');
    }
    case 'json':
      return fail('nothing: json properties cannot be compared');
  }
}

/** An instance's value in comparable form; null when it has none (or it is not comparable). */
export function instanceValue(valueClass: ValueClass, raw: unknown): Comparable | null {
  if (raw === null || raw === undefined) return null;
  if (valueClass === 'timestamp') return typeof raw === 'string' ? Date.parse(raw) : null;
  if (valueClass === 'ref') {
    const ref = raw as { space: string; externalId: string };
    return refKey(ref.space, ref.externalId);
  }
  return typeof raw === 'string' || typeof raw === 'number' || typeof raw === 'boolean' ? raw : null;
}
