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

/**
 * The indexes partition m/n lists, in order, in a collection of `generated` items from the seed and
 * `total` items now: its range of the generated ones (partitionRange), then every n-th inserted item
 * from the m-th (indexes generated + m - 1, + n, ...). An item never changes partition, whatever is
 * inserted, and an insert joins the end of exactly one partition.
 */
export class PartitionIndexes {
  private readonly range: { start: number; end: number };
  private readonly offset: number;
  private readonly step: number;

  constructor(
    private readonly generated: number,
    /** Items now (at least `generated`); an index at or past it means the partition is done. */
    readonly total: number,
    partition: Partition | undefined,
  ) {
    this.range = partitionRange(generated, partition);
    this.offset = partition === undefined ? 0 : partition.m - 1;
    this.step = partition?.n ?? 1;
  }

  /** The first index of the partition, or `total` when it has none. */
  get first(): number {
    return this.range.start < this.range.end ? this.range.start : this.atOrEnd(this.generated + this.offset);
  }

  /** The index after `index` in the partition, or `total` when it was the last. */
  after(index: number): number {
    if (index + 1 < this.range.end) return index + 1;
    return this.atOrEnd(index < this.generated ? this.generated + this.offset : index + this.step);
  }

  /** Whether `index` is one of the partition's (a cursor's position must be). */
  includes(index: number): boolean {
    if (!Number.isInteger(index) || index >= this.total) return false;
    if (index < this.generated) return index >= this.range.start && index < this.range.end;
    return (index - this.generated) % this.step === this.offset;
  }

  private atOrEnd(index: number): number {
    return index < this.total ? index : this.total;
  }
}
