/** Filtered counts over more items than this are estimated from this many items. */
export const COUNT_SAMPLE_SIZE = 20_000;

/** A collection that can say whether its item at an index matches a filter (AssetSet, EventSet). */
export interface Countable<F> {
  readonly count: number;
  matches(index: number, filter: F): boolean;
}

/**
 * The count aggregate. Like the platform's, it may be approximate: exact without a filter and for
 * collections of at most `sampleSize` items; otherwise the matching share of `sampleSize` items at a
 * fixed stride (the middle item of each of `sampleSize` equal slices), scaled to the collection and
 * rounded. So it is deterministic (same seed, data and filter, same count) and costs at most
 * `sampleSize` matches: milliseconds, whatever the size of the collection.
 */
export function countMatching<F extends object>(
  set: Countable<F>,
  filter: F,
  sampleSize = COUNT_SAMPLE_SIZE,
): number {
  if (Object.keys(filter).length === 0) return set.count;
  if (set.count <= sampleSize) {
    let exact = 0;
    for (let index = 0; index < set.count; index++) if (set.matches(index, filter)) exact++;
    return exact;
  }
  let hits = 0;
  for (let k = 0; k < sampleSize; k++) {
    if (set.matches(Math.floor(((k + 0.5) * set.count) / sampleSize), filter)) hits++;
  }
  return Math.round((hits * set.count) / sampleSize);
}
