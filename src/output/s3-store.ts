import type { S3StoreOptions as ObjectOptions } from './s3-bucket.js';
import { createS3Objects } from './s3-objects.js';
import { createObjectStore } from './object-store.js';
import type { OutputStore } from './store.js';

export { STAGING_MARKER } from './object-store.js';
export { S3AccessError, S3AuthError, S3OutputError } from './s3-errors.js';
export { parseS3Url } from './s3-url.js';

export interface S3StoreOptions extends ObjectOptions {
  /**
   * Local folder under which shard files are written before their upload, in a folder of
   * bulk-extract's own (`bulk-extract-staging-<hash of the URL>`). Default: the OS temp folder.
   */
  staging?: string | undefined;
}

/**
 * An output in S3 (or an S3-compatible server): shards staged locally, then uploaded (multipart)
 * by `publish`; small files single PutObjects; the lock an object created only if absent
 * (object-store.ts, object-lock.ts).
 */
export function createS3Store(options: S3StoreOptions): OutputStore {
  return createObjectStore(createS3Objects(options), { ...options, settings: 'output.s3' });
}
