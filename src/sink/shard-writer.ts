import type { Format } from '../config/job-schema.js';
import type { PageItems } from '../page/index.js';

/** A committed shard file. */
export interface CommittedShard {
  /** Absolute path. */
  path: string;
  format: Format;
  rows: number;
  bytes: number;
  sha256: string;
  /** A Delta table's data file (StreamShape.table 'delta'): its add action's stats, as JSON (sink/delta). */
  deltaStats?: string;
}

/**
 * Writes one shard of one format. Rows arrive a page at a time; nothing is visible under the
 * final name until `commit()` has fsynced and renamed the file.
 */
export interface ShardWriter {
  readonly format: Format;
  readonly rows: number;
  /** Bytes in the file so far (compressed); a shard is rotated past a byte limit by this. */
  readonly bytes: number;
  /** A page's items (PageItems: its bytes as received), or values. */
  append(items: PageItems | readonly unknown[]): Promise<void>;
  commit(): Promise<CommittedShard>;
  /** Removes the unfinished file. */
  abort(): Promise<void>;
}
