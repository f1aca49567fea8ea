import { DeltaLogError } from '../../errors.js';
import type { OutputStore } from '../store.js';
import { actionOf, type DeltaMetaData, type DeltaProtocol, type DeltaTxn } from './actions.js';
import { applyCheckpoint } from './checkpoint-reader.js';
import { checkpointNames, commitName, LAST_CHECKPOINT, LOG_FOLDER, logEntryOf } from './log-names.js';
import { assertReadable } from './protocol-support.js';
import { type DeltaCommit, type DeltaFile, TableState } from './table-state.js';

/** A JSON commit larger than this is refused unread: ours hold one window's files. */
export const MAX_COMMIT_BYTES = 64 * 1024 * 1024;

/** `_last_checkpoint` is a few KiB (Spark adds the checkpoint's schema); anything near this is not one. */
const MAX_LAST_CHECKPOINT_BYTES = 1024 * 1024;

export interface ReadDeltaLogOptions {
  /** The version to read (time travel); the latest when absent. */
  asOf?: number;
  /** Overrides MAX_COMMIT_BYTES. */
  maxCommitBytes?: number;
}

/** A version of a Delta table as its log makes it. */
export interface DeltaSnapshot {
  version: number;
  protocol: DeltaProtocol;
  metaData: DeltaMetaData;
  /** The active files, by key. */
  files: DeltaFile[];
  /** The latest transaction identifier of each appId. */
  txns: ReadonlyMap<string, DeltaTxn>;
  /** The commitInfo of the JSON commits replayed (those after the checkpoint), in version order. */
  commits: DeltaCommit[];
  /** The version of the checkpoint the replay started from, when there was one. */
  checkpoint?: number;
}

/**
 * Whether the folder `root` of `store` holds a Delta table: a commit or a checkpoint in its
 * `_delta_log/` (what readDeltaLog needs to read one). The listing stops at the first.
 */
export async function hasDeltaLog(store: OutputStore, root: string): Promise<boolean> {
  const logFolder = root === '' ? LOG_FOLDER : `${root}/${LOG_FOLDER}`;
  for await (const key of store.keys(`${logFolder}/`)) {
    if (logEntryOf(key.slice(logFolder.length + 1)) !== undefined) return true;
  }
  return false;
}

/** What the log folder's listing holds, by version. */
interface LogListing {
  commits: Set<number>;
  /** Complete checkpoints: version -> the files of one complete set of parts. */
  checkpoints: Map<number, string[]>;
}

/**
 * Replays the Delta table in the folder `root` of `store` ('' for the store's root): the newest
 * complete checkpoint at or before the version read, then every JSON commit after it in version
 * order. Throws DeltaLogError naming the file and the problem when the log cannot be read as the
 * protocol says, or needs a reader this one is not.
 */
export async function readDeltaLog(
  store: OutputStore,
  root: string,
  options: ReadDeltaLogOptions = {},
): Promise<DeltaSnapshot> {
  const logFolder = root === '' ? LOG_FOLDER : `${root}/${LOG_FOLDER}`;
  const maxBytes = options.maxCommitBytes ?? MAX_COMMIT_BYTES;
  const listing = await listLog(store, logFolder);
  const version = versionToRead(store, logFolder, listing, options.asOf);
  const checkpoint = await chooseCheckpoint(store, logFolder, listing, version);
  const state = new TableState(root);
  if (checkpoint !== undefined) {
    const keys = (listing.checkpoints.get(checkpoint) ?? []).map((name) => `${logFolder}/${name}`);
    await applyCheckpoint(store, keys, checkpoint, state);
  }
  for (let next = (checkpoint ?? -1) + 1; next <= version; next++) {
    if (!listing.commits.has(next)) throw missingVersion(store, logFolder, listing, next);
    await applyCommit(store, `${logFolder}/${commitName(next)}`, next, state, maxBytes);
  }
  const where = store.where(`${logFolder}/${commitName(version)}`);
  if (state.protocol === undefined) throw new DeltaLogError(`${where}: no protocol action up to version ${version}`);
  if (state.metaData === undefined) throw new DeltaLogError(`${where}: no metaData action up to version ${version}`);
  assertReadable(state.protocol, state.protocolFrom);
  return {
    version,
    protocol: state.protocol,
    metaData: state.metaData,
    files: [...state.files.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
    txns: state.txns,
    commits: state.commits,
    ...(checkpoint === undefined ? {} : { checkpoint }),
  };
}

/**
 * The commits and complete checkpoints of the log folder. A multi-part checkpoint missing a part
 * is passed over, as PROTOCOL.md asks (its parts are not written atomically).
 */
async function listLog(store: OutputStore, logFolder: string): Promise<LogListing> {
  const commits = new Set<number>();
  const parts = new Map<string, Map<number, string>>();
  for await (const key of store.keys(`${logFolder}/`)) {
    const entry = logEntryOf(key.slice(logFolder.length + 1));
    if (entry?.kind === 'commit') commits.add(entry.version);
    else if (entry?.kind === 'checkpoint') {
      const set = `${entry.version}/${entry.parts}`;
      parts.set(set, (parts.get(set) ?? new Map<number, string>()).set(entry.part, entry.name));
    }
  }
  const checkpoints = new Map<number, string[]>();
  for (const [set, found] of parts) {
    const [version, count] = set.split('/').map(Number) as [number, number];
    const names = checkpointNames(version, count);
    if (names.every((name, index) => found.get(index + 1) === name)) checkpoints.set(version, names);
  }
  if (commits.size === 0 && checkpoints.size === 0) {
    throw new DeltaLogError(`${store.where(logFolder)}: not a Delta table: no commit and no checkpoint in its log folder`);
  }
  return { commits, checkpoints };
}

function versionToRead(store: OutputStore, logFolder: string, listing: LogListing, asOf: number | undefined): number {
  const latest = Math.max(...listing.commits, ...listing.checkpoints.keys());
  if (asOf === undefined) return latest;
  if (!Number.isSafeInteger(asOf) || asOf < 0 || asOf > latest) {
    throw new DeltaLogError(`${store.where(logFolder)}: version ${asOf} cannot be read: the table's versions end at ${latest}`);
  }
  return asOf;
}

/**
 * The newest complete checkpoint at or before `version`. `_last_checkpoint` only points to one,
 * but a checkpoint it names that the folder lacks means the log was damaged: refused, not passed over.
 */
async function chooseCheckpoint(
  store: OutputStore,
  logFolder: string,
  listing: LogListing,
  version: number,
): Promise<number | undefined> {
  const last = await readLastCheckpoint(store, `${logFolder}/${LAST_CHECKPOINT}`);
  if (last !== undefined && last.version <= version && listing.checkpoints.get(last.version)?.length !== last.parts) {
    const names = checkpointNames(last.version, last.parts).join(', ');
    throw new DeltaLogError(`${store.where(`${logFolder}/${LAST_CHECKPOINT}`)}: names the checkpoint ${names}, which is missing or incomplete`);
  }
  const candidates = [...listing.checkpoints.keys()].filter((each) => each <= version);
  return candidates.length === 0 ? undefined : Math.max(...candidates);
}

/** What `_last_checkpoint` says: the checkpoint's version and its number of parts. */
interface LastCheckpoint {
  version: number;
  parts: number;
}

async function readLastCheckpoint(store: OutputStore, key: string): Promise<LastCheckpoint | undefined> {
  const text = await boundedText(store, key, MAX_LAST_CHECKPOINT_BYTES);
  if (text === undefined) return undefined;
  let hint: unknown;
  try {
    hint = JSON.parse(text);
  } catch (error) {
    throw new DeltaLogError(`${store.where(key)}: not JSON (${(error as Error).message})`);
  }
  const { version, parts } = (hint ?? {}) as { version?: unknown; parts?: unknown };
  if (!Number.isSafeInteger(version) || (version as number) < 0) {
    throw new DeltaLogError(`${store.where(key)}: version is ${JSON.stringify(version)}, not a version`);
  }
  if (parts !== undefined && !(Number.isSafeInteger(parts) && (parts as number) > 0)) {
    throw new DeltaLogError(`${store.where(key)}: parts is ${JSON.stringify(parts)}, not a count of parts`);
  }
  return { version: version as number, parts: (parts as number | undefined) ?? 1 };
}

/** Applies a JSON commit: one action per line. */
async function applyCommit(
  store: OutputStore,
  key: string,
  version: number,
  state: TableState,
  maxBytes: number,
): Promise<void> {
  const where = store.where(key);
  const text = await boundedText(store, key, maxBytes);
  if (text === undefined) throw new DeltaLogError(`${where}: listed in the log folder but gone when read`);
  const lines = text.split('\n');
  for (const [index, line] of lines.entries()) {
    // The newline after the last action ends the file; it starts no line.
    if (line === '' && index === lines.length - 1) continue;
    const at = `${where} line ${index + 1}`;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch (error) {
      throw new DeltaLogError(`${at}: not a JSON action (${(error as Error).message})`);
    }
    const action = actionOf(record, at);
    if (action !== undefined) state.apply(action, version, at);
  }
}

/** A log file's text, its size asked first so an oversized one is refused unread; undefined when absent. */
async function boundedText(store: OutputStore, key: string, maxBytes: number): Promise<string | undefined> {
  const size = await store.size(key);
  if (size === undefined) return undefined;
  if (size > maxBytes) {
    throw new DeltaLogError(`${store.where(key)}: ${size} bytes, more than the ${maxBytes} a log file may have here; not read`);
  }
  return store.getText(key);
}

/** A version the replay needs that the folder lacks, with the versions around it for the reader. */
function missingVersion(store: OutputStore, logFolder: string, listing: LogListing, version: number): DeltaLogError {
  const versions = [...listing.commits];
  const before = versions.filter((each) => each < version);
  const after = versions.filter((each) => each > version);
  const around = [
    before.length > 0 ? `version ${Math.max(...before)} is the last before it` : 'no version before it',
    after.length > 0 ? `${Math.min(...after)} the first after it` : 'none after it',
  ].join(', ');
  const where = store.where(`${logFolder}/${commitName(version)}`);
  return new DeltaLogError(`${where}: missing: version ${version} of the log is absent (${around})`);
}
