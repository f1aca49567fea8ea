import { DeltaLogError } from '../../errors.js';
import { type DeltaSnapshot, hasDeltaLog, LOG_FOLDER, type OutputStore, readDeltaLog } from '../../output/index.js';
import type { Mode } from '../../config/job-schema.js';
import { type ManifestFile, SUCCESS_FILE, type WindowManifest } from '../state/index.js';

/** A stream's Delta table as verify found it. */
export interface TableReport {
  version: number;
  files: number;
  rows: number;
  /** The version's checkpoint, when the replay started from one. */
  checkpoint?: number;
}

export interface TableCheck {
  /** Undefined when the stream's folder has no Delta log. */
  table: TableReport | undefined;
  problems: string[];
}

/**
 * Checks the Delta table in a stream's folder against the stream's sealed runs: the log replays
 * (checkpoint and the commits after it); every file the latest version references is there at
 * its size, is listed by a sealed run, and its stats' numRecords are the rows that run counted;
 * and the version holds what the sealed runs say it must: the newest run's files (a full export,
 * a snapshot), or every sealed window's (an incremental stream). Nothing is deleted.
 * `expected`: the checkpoint says the stream is a table, so a missing log is a problem.
 */
export async function checkTable(
  store: OutputStore,
  stream: string,
  mode: Mode | undefined,
  runs: readonly WindowManifest[],
  expected: boolean,
): Promise<TableCheck> {
  const log = `${stream}/${LOG_FOLDER}`;
  const sealed = await sealedRuns(store, stream, runs);
  if (!(await hasDeltaLog(store, stream))) {
    const missing = expected && sealed.length > 0;
    return { table: undefined, problems: missing ? [`${store.where(log)}: missing, but the stream is a Delta table with sealed runs`] : [] };
  }
  let snapshot: DeltaSnapshot;
  try {
    snapshot = await readDeltaLog(store, stream);
  } catch (error) {
    if (error instanceof DeltaLogError) return { table: undefined, problems: [error.message] };
    throw error;
  }
  const problems: string[] = [];
  const at = `version ${snapshot.version} of the Delta table ${stream}`;
  const listed = new Map<string, ManifestFile>();
  for (const file of sealed.flatMap((run) => run.files)) listed.set(file.path, file);
  let rows = 0;
  for (const file of snapshot.files) {
    const size = await store.size(file.key);
    if (size === undefined) problems.push(`${file.key}: ${at} references it, but it is missing`);
    else if (size !== file.size) problems.push(`${file.key}: ${size} bytes, ${at} says ${file.size}`);
    const entry = listed.get(file.key);
    if (entry === undefined) {
      problems.push(`${file.key}: in ${at}, but no sealed run lists it`);
      continue;
    }
    rows += entry.rows;
    const records = file.stats?.numRecords;
    if (records !== undefined && records !== entry.rows) {
      problems.push(`${file.key}: ${at} says ${records} rows (stats.numRecords), its run counted ${entry.rows}`);
    }
  }
  const active = new Set(snapshot.files.map((file) => file.key));
  const newest = sealed.at(-1);
  const owed = mode === 'incremental' ? sealed : newest === undefined ? [] : [newest];
  for (const run of owed) {
    for (const file of run.files) {
      if (file.format === 'parquet' && !active.has(file.path)) {
        problems.push(`${file.path}: sealed in run=${run.run} but not in ${at}`);
      }
    }
  }
  const table: TableReport = { version: snapshot.version, files: snapshot.files.length, rows };
  if (snapshot.checkpoint !== undefined) table.checkpoint = snapshot.checkpoint;
  return { table, problems };
}

/** The stream's runs that hold a `_SUCCESS`, oldest first. */
async function sealedRuns(
  store: OutputStore,
  stream: string,
  runs: readonly WindowManifest[],
): Promise<WindowManifest[]> {
  const own = runs.filter((run) => run.stream === stream).sort((a, b) => (a.run < b.run ? -1 : a.run > b.run ? 1 : 0));
  const sealed: WindowManifest[] = [];
  for (const run of own) {
    if ((await store.size(`${stream}/run=${run.run}/${SUCCESS_FILE}`)) !== undefined) sealed.push(run);
  }
  return sealed;
}
