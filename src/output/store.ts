/**
 * Where committed output lives. Keys are relative paths with '/' separators, e.g.
 * 'events/part=1-of-10/000000.parquet'.
 */
export interface OutputStore {
  /** For messages and logs: the output folder, or s3://bucket/prefix (never credentials). */
  readonly location: string;
  /**
   * Makes a finished local file durable at `key`. S3: multipart upload (Upload from lib-storage), resolved
   * only after CompleteMultipartUpload succeeded; then the local file is deleted. On failure the upload is
   * aborted (best effort) and the error is an OutputError naming the key.
   */
  publishFile(localPath: string, key: string): Promise<void>;
  /** Small text objects (checkpoint, manifest, markers): one PutObject (atomic: readers see old or new, never part). */
  putText(key: string, text: string): Promise<void>;
  /** undefined when absent (NoSuchKey / 404). */
  getText(key: string): Promise<string | undefined>;
  /** Size in bytes, undefined when absent. */
  size(key: string): Promise<number | undefined>;
  /**
   * Keys under `prefix` (a folder-like prefix ending in '/' or ''), recursive, relative to the store root,
   * sorted. Handles pagination (ContinuationToken).
   */
  list(prefix: string): Promise<string[]>;
  /** Deletes keys (missing ones are fine); batches of up to 1000 (DeleteObjects). */
  remove(keys: readonly string[]): Promise<void>;
  /** A readable stream of the object's bytes (for verify). Throws OutputError when absent. */
  read(key: string): Promise<NodeJS.ReadableStream>;
  close(): Promise<void>;
}
