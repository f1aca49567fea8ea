import type { Format } from '../config/job-schema.js';

/**
 * Shard file names: `<seq:06>.<ext>`, the sequence number zero-padded to six digits (more digits
 * past 999999), so names sort in write order. They depend only on checkpointed values, so a resumed
 * run writes the same names again.
 */

/** The extension of a shard file: `parquet`, or `ndjson` / `ndjson.gz`. `gzip` applies to NDJSON only. */
export function shardExtension(format: Format, gzip: boolean): string {
  return format === 'parquet' ? 'parquet' : gzip ? 'ndjson.gz' : 'ndjson';
}

/** The file name of shard `seq` with extension `ext` (see shardExtension), e.g. `000042.parquet`. */
export function shardFileName(seq: number, ext: string): string {
  return `${String(seq).padStart(6, '0')}.${ext}`;
}

/** The sequence number of a shard file name, or undefined when it is not one. */
export function shardSeq(fileName: string): number | undefined {
  const match = /^(\d{6,})\.(parquet|ndjson|ndjson\.gz)$/.exec(fileName);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}
