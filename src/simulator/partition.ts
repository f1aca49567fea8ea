/** `partition=m/n` of a list request: n parts, this is part m (1-based). */
export interface Partition {
  m: number;
  n: number;
}

/** Most partitions the platform accepts. */
export const MAX_PARTITIONS = 10;

/**
 * The index range [start, end) that partition m/n covers in a collection of `total` items. Ranges of
 * m = 1..n are contiguous, disjoint and cover [0, total): filters apply inside a range, so the
 * partitions of any filtered result are disjoint and complete too.
 */
export function partitionRange(
  total: number,
  partition: Partition | undefined,
): { start: number; end: number } {
  if (partition === undefined) return { start: 0, end: total };
  const { m, n } = partition;
  return { start: Math.floor(((m - 1) * total) / n), end: Math.floor((m * total) / n) };
}
