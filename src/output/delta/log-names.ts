/**
 * The file names of a Delta table's `_delta_log/` folder (delta-io/delta PROTOCOL.md, "Delta Log
 * Entries" and "Checkpoints"): `%020d.json` commits, `%020d.checkpoint.parquet` single-part and
 * `%020d.checkpoint.%010d.%010d.parquet` multi-part checkpoints, and `_last_checkpoint`.
 */

export const LOG_FOLDER = '_delta_log';
export const LAST_CHECKPOINT = '_last_checkpoint';

/** One file of the log folder, as its name says. */
export type LogEntry =
  | { kind: 'commit'; version: number; name: string } |
  { kind: 'checkpoint'; version: number; name: string; part: number; parts: number };

const COMMIT = /^(\d{20})\.json$/;
const SINGLE_CHECKPOINT = /^(\d{20})\.checkpoint\.parquet$/;
const MULTI_CHECKPOINT = /^(\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet$/;

/**
 * What a log file's name makes it; undefined for the files a reader of this protocol level passes
 * over (`.crc` checksums, log compactions, v2 checkpoints, `_last_checkpoint`, temporary files).
 */
export function logEntryOf(name: string): LogEntry | undefined {
  const commit = COMMIT.exec(name);
  if (commit !== null) return { kind: 'commit', version: Number(commit[1]), name };
  const single = SINGLE_CHECKPOINT.exec(name);
  if (single !== null) return { kind: 'checkpoint', version: Number(single[1]), name, part: 1, parts: 1 };
  const multi = MULTI_CHECKPOINT.exec(name);
  if (multi === null) return undefined;
  return { kind: 'checkpoint', version: Number(multi[1]), name, part: Number(multi[2]), parts: Number(multi[3]) };
}

export function commitName(version: number): string {
  return `${String(version).padStart(20, '0')}.json`;
}

/** The names of a checkpoint's files, in part order. */
export function checkpointNames(version: number, parts: number): string[] {
  const prefix = `${String(version).padStart(20, '0')}.checkpoint`;
  if (parts === 1) return [`${prefix}.parquet`];
  const width = (n: number) => String(n).padStart(10, '0');
  return Array.from({ length: parts }, (_, index) => `${prefix}.${width(index + 1)}.${width(parts)}.parquet`);
}
