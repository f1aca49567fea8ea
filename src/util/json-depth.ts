/**
 * The deepest nesting of objects and arrays an item may have: far beyond any item the platform
 * serves (a few levels: metadata, lists of ids), and shallow enough that writing it (JSON.stringify,
 * the Parquet columns) never runs out of stack.
 */
export const MAX_ITEM_DEPTH = 256;

/**
 * Whether `value` nests objects and arrays more than `limit` levels deep (an object holding only
 * scalars is one level). Walks with a stack of its own, so a value of any depth is measured without
 * recursion, and stops at the first level past the limit.
 */
export function deeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next;
    if (node === null || typeof node !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') pending.push([child, depth + 1]);
    }
  }
  return false;
}
