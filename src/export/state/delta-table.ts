import { ConfigError, DeltaLogError } from '../../errors.js';
import type { Logger } from '../../log.js';
import {
  addAction,
  checkpointNames,
  commitInfoAction,
  type DeltaSnapshot,
  ENGINE_INFO,
  hasDeltaLog,
  LOG_FOLDER,
  metaDataAction,
  type OutputStore,
  protocolAction,
  readDeltaLog,
  removeAction,
  txnAction,
  type WriteAction,
  writeCheckpoint,
  writeCommit,
} from '../../output/index.js';
import { deltaDataSchema, deltaSchemaString } from '../../sink/delta/index.js';
import { crashPoint } from '../../util/crash-point.js';
import { streamArrowSchema, type SchemaSource } from '../../sink/stream-schema.js';
import { type Checkpoint, isComplete, runStartMs, type StreamState } from './checkpoint.js';
import { removeOwnedTree } from './clean-up.js';
import { isOwnedKey, PART_PREFIX, RUN_PREFIX, SUCCESS_FILE } from './layout.js';
import type { ManifestFile } from './manifest.js';

/**
 * The transaction identifier of every commit bulk-extract makes to a stream's table (PROTOCOL.md,
 * "Transaction Identifiers"): its version is the committed run's start in milliseconds (its
 * `run=<id>`), so a run committed once is never committed again, and a table without it is not ours.
 */
export const TXN_APP_ID = 'bulk-extract';
/** Versions between checkpoints: a reader replays at most this many JSON commits after one. */
export const CHECKPOINT_INTERVAL = 10;

export interface TableRun {
  stream: string;
  state: StreamState;
  /** Files of the output; the run's own (stream and run) are picked out. */
  files: readonly ManifestFile[];
  /** Versions whose files are kept (snapshot `keep`); undefined: all. */
  keep: number | undefined;
}

export interface TableTarget {
  store: OutputStore;
  logger: Logger;
}

/**
 * Commits a completed run of a Delta table stream as one version of the table in the stream's
 * folder, then writes a checkpoint every CHECKPOINT_INTERVAL versions and deletes the files that no
 * kept version references. What the version holds:
 *
 * - an incremental stream's window after its first: the window's files, appended;
 * - anything else (a full export, a snapshot, an incremental stream's first window, which a
 *   --fresh start is too): every file of the table removed, the run's files added (an overwrite).
 *
 * Idempotent, as sealing is: a run whose transaction identifier the table holds is not committed
 * again, only its checkpoint and cleanup finished; unless a repair read some of its partitions
 * again since, whose files then replace the run's in one more version (repairActions). The
 * version is created only if absent (the store's put-if-absent), under the output's lock: a
 * version another writer took fails the run.
 */
export async function commitTableRun(target: TableTarget, run: TableRun): Promise<void> {
  const { store, logger } = target;
  const { stream, state } = run;
  if (state.run === null) throw new Error(`stream ${stream}: a Delta table's run needs its run id`);
  const txnVersion = runStartMs(state.run);
  await removeLeftTemps(store, stream);
  const before = await readTable(store, stream);
  const committed = before?.txns.get(TXN_APP_ID)?.version;
  if (committed !== undefined && committed > txnVersion) {
    throw new DeltaLogError(
      `${store.where(`${stream}/${LOG_FOLDER}`)}: the table holds a run later than ${RUN_PREFIX}${state.run} (${TXN_APP_ID} transaction ${committed}), which is still to be committed: the clock went back between runs, or another job writes this table`,
    );
  }
  // Committed before: only a repair (--repair) that read a partition again changes its files since.
  const actions =
    committed === txnVersion ? repairActions(run, before!, txnVersion) : runActions(store, run, before, txnVersion);
  let version = before?.version ?? 0;
  if (actions !== undefined) {
    version = before === undefined ? 0 : before.version + 1;
    crashPoint('before-table-commit');
    if (!(await writeCommit(store, stream, version, actions))) {
      // Taken: by a retried request of this commit, or by another writer.
      const now = await readTable(store, stream);
      if (now?.txns.get(TXN_APP_ID)?.version !== txnVersion || changedFiles(run, now).length > 0) {
        throw new DeltaLogError(
          `${store.where(`${stream}/${LOG_FOLDER}`)}: version ${version} of the table was written by another writer while this run committed ${RUN_PREFIX}${state.run}; nothing of this run was committed. Only one job may write a table.`,
        );
      }
    }
    logger.info({ stream, version, run: state.run }, `committed version ${version} of the Delta table ${stream}`);
    crashPoint('after-table-commit');
  }
  if (version > 0 && version % CHECKPOINT_INTERVAL === 0) await checkpointIfMissing(store, stream, version);
  const keep = versionsKept(run);
  if (keep !== undefined) await removeUnreferenced(target, run, version, keep);
}

/**
 * Refuses, before a run writes anything, a Delta table stream that could not be committed: its
 * folder holds a table bulk-extract did not write (its files are not ours to remove or add to), or
 * its columns are ones Delta cannot hold (a name it rejects, two names equal but for case). Found
 * at the commit, the run's files would be written for nothing. Streams already complete are passed.
 */
export async function assertTablesWritable(
  store: OutputStore,
  names: readonly string[],
  checkpoint: Checkpoint,
): Promise<void> {
  for (const name of names) {
    const state = checkpoint.streams[name];
    if (state?.table !== 'delta' || isComplete(state)) continue;
    try {
      tableSchemaString(state);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      throw new ConfigError(`stream '${name}' is a Delta table, and ${error.message}; give it table: files, or leave such columns out`);
    }
    const table = await readTable(store, name);
    if (table !== undefined) assertOurs(store, name, table);
  }
}

/** The Delta schema of a stream's files, as its metaData holds it. */
function tableSchemaString(state: StreamState): string {
  return deltaSchemaString(deltaDataSchema(streamArrowSchema(state as SchemaSource)));
}

/** The version's actions: commitInfo, protocol and metaData (a new table, or new columns), txn, removes, adds. */
function runActions(
  store: OutputStore,
  run: TableRun,
  before: DeltaSnapshot | undefined,
  txnVersion: number,
): WriteAction[] {
  const { stream, state } = run;
  const now = Date.now();
  const overwrite = isOverwrite(state);
  const schemaString = tableSchemaString(state);
  const files = runFiles(run);
  const rows = files.reduce((sum, file) => sum + file.rows, 0);
  const actions: WriteAction[] = [
    commitInfoAction({
      timestamp: now,
      operation: before === undefined ? 'CREATE TABLE AS SELECT' : 'WRITE',
      operationParameters: { mode: overwrite ? 'Overwrite' : 'Append', partitionBy: '[]' },
      operationMetrics: { numFiles: String(files.length), numOutputRows: String(rows) },
      own: { stream, run: state.run, mode: state.mode, ...(state.window === null ? {} : { window: state.window }) },
    }),
    txnAction(TXN_APP_ID, txnVersion, now),
  ];
  if (before === undefined) {
    actions.push(protocolAction(), metaDataAction({ schemaString, createdTime: now }));
  } else {
    assertOurs(store, stream, before);
    if (before.metaData.schemaString !== schemaString) {
      if (!overwrite) assertAdditive(store, stream, before.metaData.schemaString ?? '{"fields":[]}', schemaString);
      const { createdTime = now, id } = before.metaData;
      actions.push(metaDataAction({ schemaString, createdTime, id }));
    }
    if (overwrite) {
      for (const file of before.files) actions.push(removeFile(stream, file, now));
    }
  }
  for (const file of files) actions.push(addFile(stream, file, now));
  return actions;
}

/** The run's files as its manifest lists them (Parquet, the table's data files). */
function runFiles(run: TableRun): ManifestFile[] {
  return run.files.filter((file) => file.stream === run.stream && file.run === run.state.run && file.format === 'parquet');
}

/** The run's files the table does not hold as they are now (absent, or of another size). */
function changedFiles(run: TableRun, table: DeltaSnapshot): ManifestFile[] {
  const active = new Map(table.files.map((file) => [file.key, file.size]));
  return runFiles(run).filter((file) => active.get(file.path) !== file.bytes);
}

/**
 * A committed run whose partitions were read again (--repair): a version that removes the run's
 * files the table holds that changed or are gone and adds them as they are now; undefined when
 * the table holds the run's files as they are.
 */
function repairActions(run: TableRun, table: DeltaSnapshot, txnVersion: number): WriteAction[] | undefined {
  const { stream, state } = run;
  const changed = changedFiles(run, table);
  const listed = new Set(runFiles(run).map((file) => file.path));
  const prefix = `${stream}/${RUN_PREFIX}${state.run}/`;
  const stale = table.files.filter((file) => file.key.startsWith(prefix) && !listed.has(file.key));
  if (changed.length === 0 && stale.length === 0) return undefined;
  const now = Date.now();
  const replaced = new Set(changed.map((file) => file.path));
  const removed = [...stale, ...table.files.filter((file) => replaced.has(file.key))];
  return [
    commitInfoAction({
      timestamp: now,
      operation: 'WRITE',
      operationParameters: { mode: 'Append', partitionBy: '[]' },
      own: { stream, run: state.run, mode: state.mode, repaired: changed.length + stale.length },
    }),
    txnAction(TXN_APP_ID, txnVersion, now),
    ...removed.map((file) => removeFile(stream, file, now)),
    ...changed.map((file) => addFile(stream, file, now)),
  ];
}

function removeFile(stream: string, file: DeltaSnapshot['files'][number], now: number): WriteAction {
  return removeAction({ path: file.key.slice(stream.length + 1), size: file.size, deletionTimestamp: now });
}

function addFile(stream: string, file: ManifestFile, now: number): WriteAction {
  return addAction({
    path: file.path.slice(stream.length + 1),
    size: file.bytes,
    modificationTime: now,
    ...(file.deltaStats === undefined ? {} : { stats: file.deltaStats }),
  });
}

/** An overwrite, not an append: anything but an incremental stream's windows after its first. */
function isOverwrite(state: StreamState): boolean {
  return state.mode !== 'incremental' || state.watermark === null;
}

/** Versions whose files stay: a snapshot stream's `keep` (all without one); one for the rest, once they overwrote. */
function versionsKept(run: TableRun): number | undefined {
  if (run.state.mode === 'snapshot') return run.keep;
  return isOverwrite(run.state) ? 1 : undefined;
}

/**
 * Temporaries of a commit, checkpoint or `_last_checkpoint` that a killed run left in the log
 * folder (named as writeFileIfAbsent and writeCheckpoint name them, `<file>.<pid>-<8 hex>.inprogress`,
 * and a folder's putText, `_last_checkpoint.inprogress`). Readers pass over them; the output's
 * lock, held here, says no live run of ours writes them.
 */
const LEFT_TEMP = /\/(?:\d{20}\.(?:json|checkpoint\.parquet)\.\d+-[0-9a-f]{8}|_last_checkpoint)\.inprogress$/;

async function removeLeftTemps(store: OutputStore, stream: string): Promise<void> {
  const left = (await store.list(`${stream}/${LOG_FOLDER}/`)).filter((key) => LEFT_TEMP.test(key));
  if (left.length > 0) await store.remove(left);
}

/** The table's latest version, or undefined when its folder holds no log yet. */
async function readTable(store: OutputStore, stream: string): Promise<DeltaSnapshot | undefined> {
  return (await hasDeltaLog(store, stream)) ? readDeltaLog(store, stream) : undefined;
}

/** Refuses a table bulk-extract did not start: its files are not ours to remove or add to. */
function assertOurs(store: OutputStore, stream: string, table: DeltaSnapshot): void {
  if (table.txns.has(TXN_APP_ID)) return;
  throw new ConfigError(
    `${store.where(stream)} holds a Delta table that ${ENGINE_INFO.split('/')[0]} did not write (no ${TXN_APP_ID} transaction in its log, version ${table.version}); give the stream another name or output.dir`,
  );
}

/**
 * An append may only add columns: a file written before must read the same under the new schema.
 * A stream's columns are pinned by its checkpoint, so this holds unless the table was changed by hand.
 */
function assertAdditive(store: OutputStore, stream: string, before: string, after: string): void {
  const fields = (text: string) => {
    const { fields: list } = JSON.parse(text) as { fields: { name: string }[] };
    return new Map(list.map((field) => [field.name, JSON.stringify(field)]));
  };
  const now = fields(after);
  const changed = [...fields(before)].filter(([name, field]) => now.get(name) !== field).map(([name]) => name);
  if (changed.length === 0) return;
  throw new DeltaLogError(
    `${store.where(`${stream}/${LOG_FOLDER}`)}: the table's columns ${changed.join(', ')} differ from the stream's, so its window cannot be appended; run with --fresh --stream ${stream} to write the table again`,
  );
}

/** The checkpoint of `version`, unless it is there (a rerun after a crash between the commit and it). */
async function checkpointIfMissing(store: OutputStore, stream: string, version: number): Promise<void> {
  const [name] = checkpointNames(version, 1);
  if ((await store.size(`${stream}/${LOG_FOLDER}/${name!}`)) !== undefined) return;
  await writeCheckpoint(store, stream, version, await readDeltaLog(store, stream, { asOf: version }));
}

/**
 * Deletes the run folders of the stream that none of the newest `keep` versions references, and the
 * partition folders a plain full export of the stream left (their `_SUCCESS` first, then every file
 * bulk-extract writes there); the run just committed always
 * stays, and so does any file bulk-extract did not write. Versions before those keep no files: time
 * travel to them fails.
 */
async function removeUnreferenced(target: TableTarget, run: TableRun, version: number, keep: number): Promise<void> {
  const { store, logger } = target;
  const { stream, state } = run;
  const referenced = new Set<string>([`${RUN_PREFIX}${state.run}`]);
  for (let v = version; v > version - keep && v >= 0; v--) {
    const table = v === version ? await readDeltaLog(store, stream) : await readDeltaLog(store, stream, { asOf: v });
    for (const file of table.files) referenced.add(file.key.slice(stream.length + 1).split('/')[0]!);
  }
  const folders = new Set<string>();
  for (const key of await store.list(`${stream}/`)) {
    const folder = key.slice(stream.length + 1).split('/')[0]!;
    // Run folders, and the partition folders a plain full export of the stream left (--fresh to a table).
    const data = folder.startsWith(RUN_PREFIX) || folder.startsWith(PART_PREFIX);
    if (data && !referenced.has(folder) && isOwnedKey(key)) folders.add(folder);
  }
  for (const folder of [...folders].sort()) {
    logger.info({ stream, run: folder, keep }, `deleting ${stream}/${folder}: no version of the Delta table kept (${keep}) references it`);
    await store.remove([`${stream}/${folder}/${SUCCESS_FILE}`]);
    await removeOwnedTree(store, `${stream}/${folder}`, logger);
  }
}
