import { posix } from 'node:path';
import { PART_FOLDER_KEY, RUN_FOLDER_KEY } from '../../resources/index.js';

/**
 * Where everything goes in the output folder. Names depend only on checkpointed values (stream,
 * run, m-of-n, sequence number), so a resumed run writes the same names again:
 *
 *   <out>/<stream>/part=<m>-of-<n>/<seq:06>.<ext>                  mode: full
 *   <out>/<stream>/run=<id>/part=<m>-of-<n>/<seq:06>.<ext>         mode: incremental (a window), snapshot
 *   <out>/<stream>/run=<id>/_manifest.json  .../_SUCCESS           a completed window or snapshot
 *   <out>/<stream>/_LATEST                                         snapshot: the newest completed run
 *   <out>/_checkpoint.json  <out>/_manifest.json  <out>/_SUCCESS  <out>/.lock
 *   <out>/.progress.json                                           a running run's progress (live-progress.ts)
 *   <out>/_runs/<time>[.worker-<i>-of-<k>].json                   every run's record (run-records.ts)
 *   <out>/_workers/...                                             a job split among workers (workers/)
 *
 * Stream names start with a letter or digit, so no stream folder is ever one of the `_` names.
 */
export const CHECKPOINT_FILE = '_checkpoint.json';
export const MANIFEST_FILE = '_manifest.json';
export const SUCCESS_FILE = '_SUCCESS';
export const LOCK_FILE = '.lock';
/** snapshot: names the newest sealed snapshot (`run=<id>`), for readers that want one copy. */
export const LATEST_FILE = '_LATEST';
/**
 * The folder of a window or snapshot is `run=<id>`: the name readers partition by, kept on disk.
 * Every `key=value` folder's key is one of FOLDER_KEYS (resources/), which no column is named.
 */
export const RUN_PREFIX = `${RUN_FOLDER_KEY}=`;
/** The folder of a partition's shards is `part=<m>-of-<n>`. */
export const PART_PREFIX = `${PART_FOLDER_KEY}=`;
/** One record of each run, what `run --json` prints, named by when the run ended. */
export const RUNS_DIR = '_runs';

/**
 * The folder of a stream's current window or snapshot (`id`, the checkpoint's `run`); the stream's
 * own folder for a full export.
 */
export function windowDir(stream: string, run: string | null): string {
  return run === null ? stream : posix.join(stream, `${RUN_PREFIX}${run}`);
}

export function partDir(stream: string, m: number, n: number, run: string | null = null): string {
  return posix.join(windowDir(stream, run), `${PART_PREFIX}${m}-of-${n}`);
}

const STREAM = '[a-z0-9][a-z0-9_-]{0,63}';
const RUN = String.raw`${RUN_PREFIX}\d{8}T\d{6}\.\d{3}Z`;
const PART = String.raw`${PART_PREFIX}\d+-of-\d+`;
const SHARD = String.raw`\d{6,}\.(?:parquet(?:\.spill|\.runs)?|ndjson|ndjson\.gz)`;
const TEMP = String.raw`(?:\.inprogress)?`;
/** The keys bulk-extract writes below a stream's folder, and below `_workers/` (`_shards/` before: workers/). */
const OWNED = new RegExp(
  `^(?:${STREAM}/(?:(?:${RUN}/)?${PART}/${SHARD}|${RUN}/(?:_manifest\\.json|_SUCCESS)|_LATEST)` +
  String.raw`|(?:_workers/[0-9a-f]{16}/worker|_shards/[0-9a-f]{16}/shard)-\d+-of-\d+\.(?:checkpoint|manifest)\.json)${TEMP}$`,
);

/**
 * Whether bulk-extract writes files under this key (relative to the output folder): shards, their
 * temporary, spill and sorted-runs files, a run's manifest and `_SUCCESS`, a snapshot stream's
 * `_LATEST`, a worker's files. Cleanups delete only such keys, so a file of anyone else that
 * happens to lie in a folder being cleaned stays where it is.
 */
export function isOwnedKey(key: string): boolean {
  return OWNED.test(key);
}

/** Shard file names (`<seq:06>.<ext>`) are the sink's, defined once there; export/ reads them back. */
export { shardSeq } from '../../sink/index.js';
