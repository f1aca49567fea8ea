import { DeltaLogError } from '../../errors.js';
import type { DeltaAction, DeltaAdd, DeltaMetaData, DeltaProtocol, DeltaTxn } from './actions.js';

/** A file the table's version references, with the version that added it. */
export interface DeltaFile extends DeltaAdd {
  /** The file's key in the output store: the table's folder and the decoded `path`. */
  key: string;
  /** The version whose commit (or checkpoint) added it. */
  version: number;
}

/** One replayed commit's commitInfo, with its version. */
export interface DeltaCommit {
  version: number;
  info: Record<string, unknown>;
}

/**
 * The state of a table while its log is replayed, by PROTOCOL.md's "Action Reconciliation": the
 * latest protocol and metaData win, a remove cancels the add of its path, the latest txn of each
 * appId wins.
 */
export class TableState {
  protocol: DeltaProtocol | undefined;
  /** The line or row the protocol came from, for the message that refuses it. */
  protocolFrom = '';
  metaData: DeltaMetaData | undefined;
  readonly files = new Map<string, DeltaFile>();
  readonly txns = new Map<string, DeltaTxn>();
  readonly commits: DeltaCommit[] = [];

  /** `root` is the table's folder in the store ('' for the store's root). */
  constructor(private readonly root: string) {}

  /** Applies one action of `version`; `where` names its line or row for errors. */
  apply(action: DeltaAction, version: number, where: string): void {
    if ('protocol' in action) {
      this.protocol = action.protocol;
      this.protocolFrom = where;
    } else if ('metaData' in action) this.metaData = action.metaData;
    else if ('add' in action) this.add(action.add, version, where);
    else if ('remove' in action) this.files.delete(this.keyOf(action.remove.path, where));
    else if ('txn' in action) this.txns.set(action.txn.appId, action.txn);
    else this.commits.push({ version, info: action.commitInfo });
  }

  private add(add: DeltaAdd, version: number, where: string): void {
    const key = this.keyOf(add.path, where);
    this.files.set(key, { ...add, key, version });
  }

  /**
   * The store key of a path: the protocol's paths are URIs relative to the table, percent-encoded.
   * Absolute URIs and paths leaving the table are refused: verify checks only files inside the table.
   */
  private keyOf(path: string, where: string): string {
    if (/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(path) || path.startsWith('/')) {
      throw new DeltaLogError(`${where}: path ${path} is absolute; this reader reads only files inside the table`);
    }
    let decoded: string;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      throw new DeltaLogError(`${where}: path ${path} is not a valid URI (a % not followed by two hex digits)`);
    }
    if (decoded.split('/').some((segment) => segment === '..' || segment === '.' || segment === '')) {
      throw new DeltaLogError(`${where}: path ${path} leaves the table or has an empty segment`);
    }
    return this.root === '' ? decoded : `${this.root}/${decoded}`;
  }
}
