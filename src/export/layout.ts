import { join } from 'node:path';
import type { Format } from '../config/job-schema.js';

/**
 * Where everything goes in the output folder. Names depend only on checkpointed values (stream,
 * run, m-of-n, sequence number), so a resumed run writes the same names again:
 *
 *   <out>/<stream>/part=<m>-of-<n>/<seq:06>.<ext>                  mode: full
 *   <out>/<stream>/run=<run>/part=<m>-of-<n>/<seq:06>.<ext>        mode: incremental, snapshot
 *   <out>/<stream>/run=<run>/_manifest.json  .../_SUCCESS          a completed run
 *   <out>/<stream>/_LATEST                                         snapshot: the newest completed run
 *   <out>/_checkpoint.json  <out>/_manifest.json  <out>/_SUCCESS  <out>/.lock
 */
export const CHECKPOINT_FILE = '_checkpoint.json';
export const MANIFEST_FILE = '_manifest.json';
export const SUCCESS_FILE = '_SUCCESS';
export const LOCK_FILE = '.lock';
/** snapshot: names the newest sealed run folder (`run=<run>`), for readers that want one copy. */
export const LATEST_FILE = '_LATEST';
export const RUN_PREFIX = 'run=';

/** The folder of a stream's current run: the stream's own for a full export. */
export function runDir(stream: string, run: string | null): string {
  return run === null ? stream : join(stream, `${RUN_PREFIX}${run}`);
}

export function partDir(stream: string, m: number, n: number, run: string | null = null): string {
  return join(runDir(stream, run), `part=${m}-of-${n}`);
}

export function extension(format: Format, gzip: boolean): string {
  return format === 'parquet' ? 'parquet' : gzip ? 'ndjson.gz' : 'ndjson';
}

export function shardName(seq: number, ext: string): string {
  return `${String(seq).padStart(6, '0')}.${ext}`;
}

/** The sequence number of a shard file name, or undefined when it is not one. */
export function shardSeq(fileName: string): number | undefined {
  const match = /^(\d{6,})\.(parquet|ndjson|ndjson\.gz)$/.exec(fileName);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}
