import type { LockOptions, LockState } from './lock.js';

/**
 * Where an export's output lives: a local folder (local-store.ts) or a bucket prefix of object
 * storage (s3-store.ts). The export layer builds one per run and does all its reading and writing
 * through it. Keys are relative paths with '/' separators, e.g. 'events/part=1-of-10/000000.parquet'.
 *
 * What a reader may rely on, for both: a file put with `putText`, `createText` or `publish`
 * appears whole or not at all; a key removed is gone for every later `list`, `size` and `getText`.
 */
export interface OutputStore {
  /** For messages and logs: the output folder, or s3://bucket/prefix (never credentials). */
  readonly location: string;
  /** Object storage: which credential reaches it, as --dry-run names it (never its value). Absent for a folder. */
  readonly credential?: string;
  /** For messages: the path (a folder) or the URL (a bucket) of `key`. */
  where(key: string): string;
  /**
   * The local file the shard `key` is written into before `publish` makes it part of the output,
   * its folder created: the key's own place in a folder (no folder on the way is a link); a file
   * in this process's staging folder for a bucket (after `prepare`).
   */
  stage(key: string): Promise<string>;
  /**
   * Makes the finished staged file of `key` durable at `key`. A folder: the file is in place
   * already (written and renamed by its writer), nothing is left to do. S3: multipart upload,
   * resolved only after CompleteMultipartUpload succeeded; then the staged file is deleted. On
   * failure the upload is aborted (best effort) and the error is an OutputError naming the key.
   */
  publish(key: string): Promise<void>;
  /** Small text files (checkpoint, manifest, markers), replaced atomically: readers see old or new, never part. */
  putText(key: string, text: string): Promise<void>;
  /**
   * Creates the small text file `key` only if nothing is there: true when this call created it,
   * false when it already existed (left as it was). Atomic and single-winner: readers see no file
   * or all of `text`, and of callers racing for one key exactly one gets true. For commits that
   * must never replace one another (a Delta log's `NNN.json`).
   * - A folder: a temp file of this call's own, fsynced, hard-linked to `key` (link fails instead of
   *   replacing anything), the temp name unlinked, the folder fsynced; missing folders are created
   *   as for putText. A symbolic link at `key` is refused (LinkInOutputError), never written
   *   through nor taken for the file; a folder there is refused too (OutputError).
   * - S3: PutObject with If-None-Match: *, which AWS S3 honours (412 when it exists). A server that
   *   ignores the condition (s3rver 4 does; the tests' server adds it) overwrites and answers true:
   *   single-winner then rests on the caller's lock alone.
   * - Azure: Put Blob with If-None-Match: *, which Azure, ADLS Gen2, OneLake and Azurite honour.
   * On S3 and Azure a request whose answer was lost is retried: the retry finds the object this call
   * wrote and answers false. A caller that must tell compares getText with its own text.
   */
  createText(key: string, text: string): Promise<boolean>;
  /** undefined when absent. */
  getText(key: string): Promise<string | undefined>;
  /** Size in bytes, undefined when absent. */
  size(key: string): Promise<number | undefined>;
  /**
   * Keys under `prefix` (a folder-like prefix ending in '/', a folder and the start of a name, or
   * ''), recursive, relative to the root, streamed: a bucket is listed a page at a time, a folder
   * one folder at a time, so memory holds a page, not the listing. In no order to rely on: S3 lists
   * by key, some S3-compatible servers (s3rver) do not.
   */
  keys(prefix: string): AsyncIterable<string>;
  /** The same keys collected and sorted, for callers that need them all at once. */
  list(prefix: string): Promise<string[]>;
  /** Deletes keys; missing ones are fine. */
  remove(keys: readonly string[]): Promise<void>;
  /**
   * Deletes the keys under the folder `dir` (a key without the trailing '/') that `owned` says this
   * program wrote, and a folder's empty folders below it (and it, once empty). Resolves to the keys
   * it left, which the caller names: nothing it cannot prove it wrote is ever deleted.
   */
  removeTree(dir: string, owned: (key: string) => boolean): Promise<string[]>;
  /** A readable stream of the file's bytes (for verify). Throws OutputError when absent. */
  read(key: string): Promise<NodeJS.ReadableStream>;
  /**
   * A file on this machine holding the bytes of `key`, for readers that need a file (a Parquet
   * footer): the file itself in a folder; for a bucket, a copy downloaded into a temporary folder
   * of the store's own under a name of its own (never the key), deleted by `release`. Throws
   * OutputError when absent.
   */
  localCopy(key: string): Promise<LocalCopy>;
  /**
   * Takes the lock `key` for one run (or one worker): refused with LockedError while another live
   * run holds it. Resolves to the function that lets it go. See each store for what "live" means.
   */
  lock(key: string, what: string, options?: LockOptions): Promise<() => Promise<void>>;
  /** What the lock `key` says, without taking it (for --dry-run and status). */
  lockState(key: string): Promise<LockState>;
  /**
   * Refuses (throws OutputError) an output this process could not write, before anything is
   * written: folders (`dirs`) and files to replace (`files`) of a folder; a bucket is probed.
   */
  checkWritable(dirs: readonly string[], files: readonly string[]): Promise<void>;
  /**
   * Refuses (throws) an output a run could not start writing, changing nothing a run reads (for
   * --dry-run): a folder that is missing and cannot be created; a bucket the credentials cannot
   * write to (one probe object, put and deleted).
   */
  probe(): Promise<void>;
  /** Readies the local side before a run: the folder (or the staging folder) exists; staging holds nothing old. */
  prepare(): Promise<void>;
  close(): Promise<void>;
}

/** A local file with a key's bytes; `release` when done with it. */
export interface LocalCopy {
  path: string;
  release(): Promise<void>;
}

/** The object operations of a bucket's store (s3-objects.ts) or a container's (azure-blobs.ts). */
export type StoreObjects = Pick<
  OutputStore,
  'location' | 'where' | 'putText' | 'getText' | 'size' | 'keys' | 'list' | 'remove' | 'read' | 'close'
> & {
  /**
   * Uploads the local file `localPath` to `key`, resolved only once the object is whole and
   * visible (S3: CompleteMultipartUpload; Azure: Put Block List); then the local file is deleted.
   * On failure the error is an OutputError naming the key.
   */
  publishFile(localPath: string, key: string): Promise<void>;
  /**
   * Creates `key` only if it does not exist (If-None-Match: *); false when it does. A server that
   * ignores the condition (s3rver 4.0.4: it checks If-None-Match on GET and HEAD only) overwrites
   * the object and answers true. A retried request that had passed answers false.
   */
  putTextIfAbsent(key: string, text: string): Promise<boolean>;
};
