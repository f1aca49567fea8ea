import { z } from 'zod';
import type { JobConfig } from '../../config/load-config.js';
import { CheckpointError } from '../../errors.js';
import { errorFields, type Logger, silentLogger } from '../../log.js';
import { isObjectStorageUrl, type OutputStore } from '../../output/index.js';
import { MANIFEST_FILE, openOutput, type Output, parseStateFile, RUNS_DIR } from '../state/index.js';
import type { WorkerSpec } from '../workers/index.js';

/**
 * The history of runs, kept in the output itself: at its end every run writes what `run --json`
 * prints to `_runs/<time>.json`, `<time>` being when it ended in UTC with '-' for ':' (for
 * example `2026-11-26T07-12-03.456Z`), so names sort in time order and are safe in file names and
 * S3 keys everywhere. A worker of a split job adds its index (`...456Z.worker-2-of-4.json`), so
 * workers ending in the same millisecond never collide. Every record is kept: nothing reads them
 * but `status` and monitoring, and deleting old ones is always safe.
 */

const windowSchema = z.object({ minLastUpdatedTime: z.number().nullable(), maxLastUpdatedTime: z.number() });

/**
 * A run's record: the object `run --json` prints. Unknown fields are dropped on reading, so a
 * record written by a later version (with more fields) still reads.
 */
export const runRecordSchema = z.object({
  /** The process's exit code. */
  exitCode: z.number().int(),
  /** The run's state, `nothing-to-do` when it changed nothing, or `refused` when it never started. */
  state: z.string(),
  /** Why it did not complete: the error's stable code and message; null when it completed. */
  reason: z.object({ code: z.string(), message: z.string() }).nullable(),
  /** The output folder or `s3://` URL; null when the job file could not be read. */
  destination: z.string().nullable(),
  /** ISO 8601; null for a run that wrote nothing (refused, nothing to do). */
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  durationMs: z.number().nullable(),
  requests: z.number(),
  retries: z.number(),
  throttled: z.number(),
  rowsThisRun: z.number(),
  streams: z.array(
    z.object({
      name: z.string(),
      resource: z.string(),
      mode: z.string(),
      state: z.enum(['done', 'not done', 'nothing to do']),
      rows: z.number(),
      files: z.number(),
      bytes: z.number(),
      run: z.string().nullable(),
      window: windowSchema.nullable(),
      /** Datapoints: the point times read, start inclusive, end exclusive. */
      pointWindow: z.object({ start: z.number(), end: z.number() }).optional(),
      /** Datapoints: series the platform did not know, skipped. */
      unknownSeries: z.array(z.union([
        z.object({ id: z.number() }),
        z.object({ externalId: z.string() }),
        z.object({ instanceId: z.object({ space: z.string(), externalId: z.string() }) }),
      ])).optional(),
    }),
  ),
  errors: z.array(z.object({ stream: z.string(), partition: z.number(), code: z.string(), message: z.string() })),
  /**
   * The whole job was complete when the run ended: every stream of the job file, and for a worker
   * of a split job, the split job finalized (by it). Absent in records of earlier versions.
   */
  jobComplete: z.boolean().optional(),
  /**
   * `run --verify`: what reading the output back found (problems, one a line) and how many keys it
   * checked; null when the run did not verify (not asked, or the job was not complete).
   */
  verified: z.object({ problems: z.array(z.string()), keysChecked: z.number() }).nullable().default(null),
});

/** What `run --json` prints and `_runs/<time>.json` holds. */
export type RunRecord = z.output<typeof runRecordSchema>;

/** A record as read from the output, with what its name says. */
export interface StoredRunRecord {
  /** Its key in the output, e.g. `_runs/2026-11-26T07-12-03.456Z.json`. */
  key: string;
  /** When the run ended (refused: when it was refused), ISO 8601, from the name. */
  recordedAt: string;
  /** The worker of a split job that wrote it; null for a run of the whole job. */
  worker: WorkerSpec | null;
  record: RunRecord;
}

/** Records of workers of version 0.1 are named `.shard-<i>-of-<k>.json`; they are read as well. */
const KEY_PATTERN = /^_runs\/(\d{4}-\d\d-\d\dT\d\d)-(\d\d)-(\d\d\.\d{3}Z)(?:\.(?:worker|shard)-(\d+)-of-(\d+))?\.json$/;

/** The key of the record of a run that ended at `at` (of `worker`). */
export function runRecordKey(at: Date, worker?: WorkerSpec): string {
  const time = at.toISOString().replaceAll(':', '-');
  return `${RUNS_DIR}/${time}${worker === undefined ? '' : `.worker-${worker.index}-of-${worker.count}`}.json`;
}

/** What a record's key says; undefined for a key that is not a record's (a foreign or temporary file). */
export function parseRunRecordKey(key: string): Pick<StoredRunRecord, 'recordedAt' | 'worker'> | undefined {
  const match = KEY_PATTERN.exec(key);
  if (match === null) return undefined;
  const [, dateHour = '', minute = '', second = '', index, count] = match;
  const worker = index === undefined || count === undefined ? null : { index: Number(index), count: Number(count) };
  return { recordedAt: `${dateHour}:${minute}:${second}`, worker };
}

/** A record file's text, parsed and checked; a CheckpointError names the file and what is wrong. */
export function parseRunRecord(text: string, file: string): RunRecord {
  return parseStateFile(text, file, runRecordSchema, 'a run record of bulk-extract', RECORD_ADVICE);
}

/** A run record is history, not state a run goes on from: a damaged one is only reported. */
const RECORD_ADVICE = { notJson: 'not a run record of bulk-extract.', invalid: '' };

export interface WriteRunRecordOptions {
  /** A worker of a split job: its index and count go into the name. */
  worker?: WorkerSpec | undefined;
  /** The clock for a run that has no `finishedAt` (refused, nothing to do); default Date.now, epoch ms. */
  now?: () => number;
}

/**
 * Writes `record` to `_runs/<time>.json` through the store's atomic `putText`, `<time>` being its
 * `finishedAt`, or now for a run without one. The text is the one line `run --json` prints.
 * Resolves to the key; throws what the store throws.
 */
export async function writeRunRecord(
  store: OutputStore,
  record: RunRecord,
  options: WriteRunRecordOptions = {},
): Promise<string> {
  const { worker, now = Date.now } = options;
  const finished = record.finishedAt === null ? Number.NaN : Date.parse(record.finishedAt);
  const key = runRecordKey(new Date(Number.isNaN(finished) ? now() : finished), worker);
  await store.putText(key, `${JSON.stringify(record)}\n`);
  return key;
}

export interface ReadRunRecordsOptions {
  /** Where a record that cannot be read is reported (it is skipped); default: nowhere. */
  logger?: Logger;
}

/**
 * The output's run records, newest first, read one at a time as they are asked for (one listing
 * of `_runs/`, then one read per record). A damaged or foreign file with a record's name is
 * skipped with a warning; files with other names are not records and are passed over.
 */
export async function* runRecords(
  store: OutputStore,
  options: ReadRunRecordsOptions = {},
): AsyncGenerator<StoredRunRecord> {
  const logger = options.logger ?? silentLogger;
  const named = (await store.list(`${RUNS_DIR}/`)).flatMap((key) => {
    const name = parseRunRecordKey(key);
    return name === undefined ? [] : [{ key, ...name }];
  });
  // The names sort in time order: newest first is the reverse.
  named.sort((a, b) => (a.key < b.key ? 1 : a.key > b.key ? -1 : 0));
  for (const entry of named) {
    const record = await readRecord(store, entry.key, logger);
    if (record !== undefined) yield { ...entry, record };
  }
}

/** One record; undefined when it is gone since the listing, or cannot be read (with a warning). */
async function readRecord(store: OutputStore, key: string, logger: Logger): Promise<RunRecord | undefined> {
  try {
    const text = await store.getText(key);
    return text === undefined ? undefined : parseRunRecord(text, store.where(key));
  } catch (error) {
    if (!(error instanceof CheckpointError)) throw error;
    const file = store.where(key);
    logger.warn({ file, ...errorFields(error, logger) }, `${error.message} Skipped; delete it, or move it out of ${RUNS_DIR}/.`);
    return undefined;
  }
}

/** The last `limit` run records (default: all), newest first. */
export async function readRunRecords(
  store: OutputStore,
  limit = Number.POSITIVE_INFINITY,
  options: ReadRunRecordsOptions = {},
): Promise<StoredRunRecord[]> {
  const found: StoredRunRecord[] = [];
  if (limit <= 0) return found;
  for await (const entry of runRecords(store, options)) {
    found.push(entry);
    if (found.length >= limit) break;
  }
  return found;
}

/**
 * The newest record that `matches`, e.g. the last success: `latestRunRecord(store, (r) =>
 * r.record.exitCode === 0)`. Reads records newest first and stops at the first match; undefined
 * when none matches.
 */
export async function latestRunRecord(
  store: OutputStore,
  matches: (entry: StoredRunRecord) => boolean,
  options: ReadRunRecordsOptions = {},
): Promise<StoredRunRecord | undefined> {
  for await (const entry of runRecords(store, options)) if (matches(entry)) return entry;
  return undefined;
}

/** Refusals that are the command's or the job file's: not runs of the output, never recorded. */
const NOT_RECORDED = new Set(['E_USAGE', 'E_CONFIG', 'E_INSECURE_TRANSPORT']);
/**
 * Ends in which object storage refused every request (the credential, a container or bucket that
 * is not there): the record could not be written either. A folder's E_OUTPUT_ACCESS names one
 * file it may not write, and its record is still tried.
 */
const STORE_REFUSED = new Set(['E_OUTPUT_AUTH', 'E_OUTPUT_ACCESS']);

export interface RecordRunOptions extends WriteRunRecordOptions {
  logger: Logger;
}

/**
 * The CLI's end of a run: writes its record into the job's output (local or s3://), and never
 * throws: a record that cannot be written is a warning, the run's outcome stands. A refused run
 * is recorded only when its output already holds an export (a manifest or a checkpoint), so a
 * refusal creates no folder, and not at all when the command or the job file was at fault, or
 * when object storage refused the credential or is missing (the run's own error already says so).
 * Resolves to the key written, or undefined.
 */
export async function recordRun(
  config: JobConfig,
  record: RunRecord,
  options: RecordRunOptions,
): Promise<string | undefined> {
  const { logger } = options;
  const refused = record.state === 'refused';
  const code = record.reason?.code ?? '';
  if (refused && NOT_RECORDED.has(code)) return undefined;
  if (STORE_REFUSED.has(code) && isObjectStorageUrl(config.output.dir)) return undefined;
  let output: Output | undefined;
  try {
    output = await openOutput(config, logger);
    const { store, checkpointKey } = output;
    if (refused && (await store.size(MANIFEST_FILE)) === undefined && (await store.size(checkpointKey)) === undefined) {
      return undefined;
    }
    const key = await writeRunRecord(store, record, options);
    logger.debug({ file: store.where(key) }, 'run record written');
    return key;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    logger.warn(errorFields(error, logger), `the run's record was not written to ${RUNS_DIR}/ (the run's outcome stands): ${message}`);
    return undefined;
  } finally {
    await output?.store.close().catch(() => undefined);
  }
}
