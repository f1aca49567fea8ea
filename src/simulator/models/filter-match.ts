import { compareCodePoints } from '../../util/code-point-order.js';
import type { CompiledFilter, Field } from './filter-parse.js';
import { type Comparable, instanceValue, refKey } from './filter-values.js';
import { hasDataIn } from './instance-json.js';
import type { Instance } from './instance-store.js';
import type { InstanceKind } from './node-links.js';

/**
 * Whether an instance matches a compiled filter. A property without a value (null, or no data in
 * its container) matches no comparison and not `exists`; `not` is plain negation, so
 * `not equals` matches the instances without a value too. `containsAny` and `containsAll` read a
 * single-value property as a list of one, and match no instance whose list is empty or absent
 * (so `not containsAny` matches those).
 */
export function matches(instance: Instance, filter: CompiledFilter): boolean {
  switch (filter.op) {
    case 'and':
      return filter.of.every((child) => matches(instance, child));
    case 'or':
      return filter.of.some((child) => matches(instance, child));
    case 'not':
      return !matches(instance, filter.of);
    case 'matchAll':
      return true;
    case 'hasData':
      return hasDataIn(instance, filter.containers);
    case 'exists':
      return rawValue(instance, filter.field) !== null;
    case 'containsAny':
    case 'containsAll': {
      const held = listOf(instance, filter.field);
      const holds = (value: Comparable) => held.includes(value);
      return filter.op === 'containsAny' ? filter.values.some(holds) : held.length > 0 && filter.values.every(holds);
    }
    default:
      return compares(valueOf(instance, filter.field), filter);
  }
}

function compares(value: Comparable | null, filter: Extract<CompiledFilter, { field: Field }>): boolean {
  if (value === null) return false;
  switch (filter.op) {
    case 'equals':
      return value === filter.value;
    case 'in':
      return filter.values.includes(value);
    case 'prefix':
      return typeof value === 'string' && value.startsWith(filter.value);
    case 'range':
      return (
        (filter.gt === undefined || order(value, filter.gt) > 0) &&
        (filter.gte === undefined || order(value, filter.gte) >= 0) &&
        (filter.lt === undefined || order(value, filter.lt) < 0) &&
        (filter.lte === undefined || order(value, filter.lte) <= 0)
      );
    default:
      return false;
  }
}

/**
 * Negative, zero or positive as `a` comes before, with or after `b`: texts in code-point order, as
 * the platform compares them (collation ucs_basic, the one of externalIds), numbers by value.
 */
function order(a: Comparable, b: Comparable): number {
  if (typeof a === 'string' && typeof b === 'string') return compareCodePoints(a, b);
  return a < b ? -1 : a > b ? 1 : 0;
}

function rawValue(instance: Instance, field: Field): unknown {
  if (field.source === 'property') return instance.data[field.container]?.[field.property] ?? null;
  return instance[field.field] ?? null;
}

function valueOf(instance: Instance, field: Field): Comparable | null {
  const raw = rawValue(instance, field);
  if (field.source === 'core' && field.valueClass === 'ref' && raw !== null) {
    const ref = raw as { space: string; externalId: string };
    return refKey(ref.space, ref.externalId);
  }
  return instanceValue(field.valueClass, raw);
}

/** The values of a list property in comparable form; a single value as a list of one; none when null. */
function listOf(instance: Instance, field: Field): Comparable[] {
  if (!field.list) {
    const value = valueOf(instance, field);
    return value === null ? [] : [value];
  }
  const raw = rawValue(instance, field);
  if (!Array.isArray(raw)) return [];
  return raw.map((one) => instanceValue(field.valueClass, one)).filter((one) => one !== null);
}

/**
 * The kinds whose instances can match: a comparison on a property, or `hasData`, only matches
 * instances with data in its containers, so a scan skips the other kinds entirely (listing the
 * time series of a million assets does not read the assets). Conservative: `not` allows all.
 */
export function possibleKinds(
  filter: CompiledFilter | undefined,
  kinds: readonly InstanceKind[],
  containersOf: (kind: InstanceKind) => readonly string[],
): InstanceKind[] {
  if (filter === undefined) return [...kinds];
  const having = (containers: readonly string[]) =>
    kinds.filter((kind) => containers.every((key) => containersOf(kind).includes(key)));
  switch (filter.op) {
    case 'and':
      return filter.of.reduce((left, child) => possibleKinds(child, left, containersOf), [...kinds]);
    case 'or': {
      const union = new Set(filter.of.flatMap((child) => possibleKinds(child, kinds, containersOf)));
      return kinds.filter((kind) => union.has(kind));
    }
    case 'hasData':
      return having(filter.containers);
    case 'not':
    case 'matchAll':
      return [...kinds];
    default:
      return filter.field.source === 'property' ? having([filter.field.container]) : [...kinds];
  }
}
