import { type AzureBlobs, createAzureBlobs } from './azure-blobs.js';
import type { AzureStoreOptions as BlobOptions } from './azure-container.js';
import { createObjectStore } from './object-store.js';
import type { OutputStore } from './store.js';

export { AzureAccessError, AzureAuthError, AzureOutputError } from './azure-errors.js';
export { parseAzureUrl } from './azure-url.js';
export { isAzureUrl } from '../util/output-url.js';

export interface AzureStoreOptions extends BlobOptions {
  /** Local folder under which shard files wait for their upload (as output.s3.staging). Default: the OS temp folder. */
  staging?: string | undefined;
}

/**
 * An output in Azure Blob Storage, ADLS Gen2 or OneLake: shards staged locally, then uploaded by
 * `publish` (one Put Blob, or staged blocks and one Put Block List: atomic either way); small
 * files single Put Blobs; the lock a blob created only if absent (Put Blob with If-None-Match: *,
 * object-lock.ts). The same layout and guarantees as an S3 bucket prefix (object-store.ts).
 */
export function createAzureStore(options: AzureStoreOptions): OutputStore & Pick<AzureBlobs, 'credential'> {
  const blobs = createAzureBlobs(options);
  return { ...createObjectStore(blobs, { ...options, settings: 'output.azure' }), credential: blobs.credential };
}
