import { randomUUID } from 'node:crypto';
import { VERSION } from '../../version.js';
import type { OutputStore } from '../store.js';
import type { DeltaProtocol, DeltaTxn } from './actions.js';
import { commitName, LOG_FOLDER } from './log-names.js';

/**
 * The actions of a Delta commit as this writer writes them (delta-io/delta PROTOCOL.md, "Actions"),
 * and writeCommit, which puts one version's actions into `_delta_log/%020d.json` only if no writer
 * has taken that version. Tables are unpartitioned and need reader 1 / writer 2: no table feature.
 */

/** The lowest protocol that what we write needs: reader 1, writer 2 (as Spark writes a plain table). */
export const WRITE_PROTOCOL: DeltaProtocol = Object.freeze({ minReaderVersion: 1, minWriterVersion: 2 });

/** Written as `engineInfo` of every commitInfo. */
export const ENGINE_INFO = `bulk-extract/${VERSION}`;

/** The key of commitInfo under which our own provenance (run, window, ...) goes. */
export const OWN_INFO_KEY = 'bulkExtract';

export interface MetaDataJson {
  id: string;
  format: { provider: 'parquet'; options: Record<string, string> };
  schemaString: string;
  partitionColumns: string[];
  configuration: Record<string, string>;
  createdTime: number;
}

export interface AddJson {
  path: string;
  partitionValues: Record<string, string>;
  size: number;
  modificationTime: number;
  dataChange: boolean;
  stats?: string;
}

export interface RemoveJson {
  path: string;
  deletionTimestamp: number;
  dataChange: boolean;
  extendedFileMetadata: true;
  partitionValues: Record<string, string>;
  size: number;
}

export interface CommitInfoJson {
  timestamp: number;
  operation: string;
  /** Spark's form: each value a string (a list or a mode as its text, e.g. `"[]"`). */
  operationParameters: Record<string, string>;
  operationMetrics?: Record<string, string>;
  engineInfo: string;
  [OWN_INFO_KEY]?: Record<string, unknown>;
}

/** One line of a commit. */
export type WriteAction =
  | { commitInfo: CommitInfoJson } |
  { protocol: DeltaProtocol } |
  { metaData: MetaDataJson } |
  { txn: DeltaTxn } |
  { remove: RemoveJson } |
  { add: AddJson };

export function protocolAction(): WriteAction {
  return { protocol: { ...WRITE_PROTOCOL } };
}

export interface MetaDataOptions {
  /** The table's schema as Delta writes it (sink/delta deltaSchemaString of the stream's Arrow schema). */
  schemaString: string;
  createdTime: number;
  /** The table's id; a fresh UUID when absent. */
  id?: string;
}

/** `metaData` of an unpartitioned Parquet table with no configuration. */
export function metaDataAction(options: MetaDataOptions): WriteAction {
  return {
    metaData: {
      id: options.id ?? randomUUID(),
      format: { provider: 'parquet', options: {} },
      schemaString: options.schemaString,
      partitionColumns: [],
      configuration: {},
      createdTime: wholeMillis(options.createdTime, 'createdTime'),
    },
  };
}

export interface AddOptions {
  /** The data file's path inside the table folder, decoded ('part=1-of-4/000000.parquet'); encoded here. */
  path: string;
  size: number;
  modificationTime: number;
  /** false only for a rearrangement of data already in the table; true when absent. */
  dataChange?: boolean;
  /** The file's stats as JSON (sink/delta deltaStatsJson). */
  stats?: string;
}

export function addAction(options: AddOptions): WriteAction {
  const { stats } = options;
  return {
    add: {
      path: deltaPath(options.path),
      partitionValues: {},
      size: count(options.size, 'size'),
      modificationTime: wholeMillis(options.modificationTime, 'modificationTime'),
      dataChange: options.dataChange ?? true,
      ...(stats === undefined ? {} : { stats }),
    },
  };
}

export interface RemoveOptions {
  /** As for add: decoded, relative to the table folder. */
  path: string;
  /** The removed file's size (written with extendedFileMetadata, as Spark does). */
  size: number;
  deletionTimestamp: number;
  dataChange?: boolean;
}

export function removeAction(options: RemoveOptions): WriteAction {
  return {
    remove: {
      path: deltaPath(options.path),
      deletionTimestamp: wholeMillis(options.deletionTimestamp, 'deletionTimestamp'),
      dataChange: options.dataChange ?? true,
      extendedFileMetadata: true,
      partitionValues: {},
      size: count(options.size, 'size'),
    },
  };
}

/** A transaction identifier: `version` of `appId` is committed with the rest of the commit, atomically. */
export function txnAction(appId: string, version: number, lastUpdated: number): WriteAction {
  if (appId === '') throw new TypeError('a txn needs an appId');
  return { txn: { appId, version: count(version, 'txn version'), lastUpdated: wholeMillis(lastUpdated, 'lastUpdated') } };
}

export interface CommitInfoOptions {
  timestamp: number;
  /** Spark's names: 'WRITE', 'CREATE TABLE', ... */
  operation: string;
  operationParameters?: Record<string, string>;
  operationMetrics?: Record<string, string>;
  /** Our own provenance (run id, window, mode), written under OWN_INFO_KEY. */
  own?: Record<string, unknown>;
}

export function commitInfoAction(options: CommitInfoOptions): WriteAction {
  return {
    commitInfo: {
      timestamp: wholeMillis(options.timestamp, 'timestamp'),
      operation: options.operation,
      operationParameters: options.operationParameters ?? {},
      ...(options.operationMetrics === undefined ? {} : { operationMetrics: options.operationMetrics }),
      engineInfo: ENGINE_INFO,
      ...(options.own === undefined ? {} : { [OWN_INFO_KEY]: options.own }),
    },
  };
}

/**
 * A data file's path as an add or remove holds it: a URI relative to the table (RFC 2396), each
 * segment percent-encoded as UTF-8 (a space is %20, a % is %25, a : is %3A, so no segment reads
 * as a scheme) but for '=' kept as Spark keeps it in `part=...` folders. Decoding it
 * (decodeURIComponent) gives `path` back. Absolute paths and '.', '..' or empty segments are refused.
 */
export function deltaPath(path: string): string {
  const segments = path.split('/');
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..')) {
    throw new TypeError(`${JSON.stringify(path)} is not a path inside the table (an empty, '.' or '..' segment)`);
  }
  return segments.map((segment) => encodeURIComponent(segment).replaceAll('%3D', '=')).join('/');
}

/** The order of a commit's lines: commitInfo first (as Spark writes it), then protocol and metaData, txn, files. */
const ORDER = ['commitInfo', 'protocol', 'metaData', 'txn', 'remove', 'add'] as const;

function kindOf(action: WriteAction): (typeof ORDER)[number] {
  return Object.keys(action)[0] as (typeof ORDER)[number];
}

/**
 * The text of a commit: one JSON action per line, each line ended by '\n', in ORDER (the actions'
 * own order kept within a kind). Refuses what PROTOCOL.md says a valid version cannot hold: more
 * than one protocol, metaData or commitInfo, two txns of one appId, a path twice among the adds or
 * among the removes; version 0 without its protocol and metaData.
 */
export function commitText(version: number, actions: readonly WriteAction[]): string {
  count(version, 'version');
  const byKind = new Map<string, WriteAction[]>(ORDER.map((kind) => [kind, []]));
  for (const action of actions) {
    const keys = Object.keys(action);
    const list = byKind.get(keys[0] ?? '');
    if (keys.length !== 1 || list === undefined) throw new TypeError(`not one action: ${JSON.stringify(action)}`);
    list.push(action);
  }
  for (const kind of ['commitInfo', 'protocol', 'metaData'] as const) {
    if (byKind.get(kind)!.length > 1) throw new TypeError(`version ${version} has ${byKind.get(kind)!.length} ${kind} actions`);
  }
  if (version === 0 && (byKind.get('protocol')!.length === 0 || byKind.get('metaData')!.length === 0)) {
    throw new TypeError('version 0 needs a protocol and a metaData action');
  }
  unique(byKind.get('txn')!, (action) => ('txn' in action ? action.txn.appId : ''), 'txn appId', version);
  unique(byKind.get('add')!, (action) => ('add' in action ? action.add.path : ''), 'add path', version);
  unique(byKind.get('remove')!, (action) => ('remove' in action ? action.remove.path : ''), 'remove path', version);
  const ordered = [...actions].sort((a, b) => ORDER.indexOf(kindOf(a)) - ORDER.indexOf(kindOf(b)));
  return ordered.map((action) => `${JSON.stringify(action)}\n`).join('');
}

/**
 * Writes `version` of the table in the folder `tableFolder` of `store` ('' for the store's root):
 * `_delta_log/%020d.json` holding `actions`, created only if absent (store.createText). true when
 * this call committed the version; false when the file was there already, left as it was: another
 * writer took the version (or a retried request of this one did), and the caller decides.
 */
export async function writeCommit(
  store: OutputStore,
  tableFolder: string,
  version: number,
  actions: readonly WriteAction[],
): Promise<boolean> {
  const text = commitText(version, actions);
  const logFolder = tableFolder === '' ? LOG_FOLDER : `${tableFolder}/${LOG_FOLDER}`;
  return store.createText(`${logFolder}/${commitName(version)}`, text);
}

function unique(actions: WriteAction[], keyOf: (action: WriteAction) => string, what: string, version: number): void {
  const seen = new Set<string>();
  for (const action of actions) {
    const key = keyOf(action);
    if (seen.has(key)) throw new TypeError(`version ${version} has the ${what} ${key} twice`);
    seen.add(key);
  }
}

function count(value: number, what: string): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`${what} is ${value}, not a whole number >= 0`);
  return value;
}

/** Milliseconds since the epoch, as the protocol's times are (a Date's getTime(), Date.now()). */
function wholeMillis(value: number, what: string): number {
  if (!Number.isSafeInteger(value)) throw new TypeError(`${what} is ${value}, not whole milliseconds`);
  return value;
}
