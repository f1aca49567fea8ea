/** Encoded bytes per row before any file of the resource was written: high, so a first shard errs small. */
export const FIRST_GUESS_BYTES_PER_ROW = 100;

/**
 * Encoded Parquet bytes per row seen in the last committed shard of each kind (a collection,
 * `datapoints`, or an instance stream's name), to estimate the
 * size of a shard still open (its file is written only on commit, and `shard.maxBytes` needs its
 * size page by page). One per sink, so an export never sizes its shards by another's data.
 */
export class BytesPerRow {
  private readonly learned = new Map<string, number>();

  /** The estimated file size of `rows` rows of `kind`, in bytes. */
  estimate(kind: string, rows: number): number {
    return Math.round(rows * (this.learned.get(kind) ?? FIRST_GUESS_BYTES_PER_ROW));
  }

  /** A shard of `rows` rows of `kind` was committed at `bytes` bytes. */
  learn(kind: string, bytes: number, rows: number): void {
    if (rows > 0) this.learned.set(kind, bytes / rows);
  }
}
