/** Which instance fields a data-modeling filter names, for the checks that depend on the stream's instance type. */
import { BOUNDS, type FilterPath, isMapping } from './dm-filter.js';

/**
 * The instance fields a filter names (`["node", "space"]`), each with the path of its reference;
 * what is malformed is passed over (dmFilterProblems reports it).
 */
export function instanceFieldReferences(
  filter: unknown,
  at: FilterPath = ['filter'],
): { path: FilterPath; scope: string; field: string }[] {
  if (!isMapping(filter) || Object.keys(filter).length !== 1) return [];
  const [operator, body] = Object.entries(filter)[0]!;
  const here = [...at, operator];
  if (Array.isArray(body)) return operator === 'hasData' ? [] : body.flatMap((inner, i) => instanceFieldReferences(inner, [...here, i]));
  if (operator === 'not') return instanceFieldReferences(body, here);
  if (!isMapping(body)) return [];
  const found: { path: FilterPath; scope: string; field: string }[] = [];
  const visit = (ref: unknown, path: FilterPath) => {
    if (Array.isArray(ref) && ref.length === 2 && typeof ref[0] === 'string' && typeof ref[1] === 'string') {
      found.push({ path, scope: ref[0], field: ref[1] });
    }
  };
  visit(body.property, [...here, 'property']);
  for (const key of ['value', 'values', ...BOUNDS]) {
    const value = body[key];
    if (isMapping(value)) visit(value.property, [...here, key, 'property']);
  }
  return found;
}
