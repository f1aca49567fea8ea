import type { Page } from './http.js';

/** An item as received over HTTP. */
export type Item = Record<string, unknown>;
/** Query parameters of a list request; undefined ones are left out. */
export type Params = Record<string, string | number | undefined>;

export function idOf(item: Item): number {
  const id = item.id;
  if (typeof id !== 'number') throw new Error(`item without a numeric id: ${JSON.stringify(item)}`);
  return id;
}

export function idsOf(pages: readonly Page[]): number[] {
  return pages.flatMap((page) => page.items.map(idOf));
}

/** [0, 1, ..., count - 1]. */
export function indexes(count: number): number[] {
  return Array.from({ length: count }, (_, i) => i);
}
