import { resolve } from 'node:path';
import type { Logger } from '../log.js';
import { createLocalStore } from './local-store.js';
import type { AzureStoreOptions } from './azure-store.js';
import type { S3StoreOptions } from './s3-store.js';
import type { OutputStore } from './store.js';
import { isAzureUrl } from '../util/output-url.js';

/** What opening a store needs besides where it is. */
export interface StoreOptions {
  logger: Logger;
  /** Settings of an s3:// output (the job's output.s3, its region filled in from AWS_REGION); unused for a folder. */
  s3?: Omit<S3StoreOptions, 'url' | 'logger'> | undefined;
  /** Settings of an Azure output (the job's output.azure); unused for a folder. */
  azure?: Omit<AzureStoreOptions, 'url' | 'logger'> | undefined;
}

/** Where an output goes, as users name it: the folder (resolved against the working directory), or its URL. */
export function destinationOf(dir: string): string {
  return isObjectStorageUrl(dir) ? dir.replace(/\/+$/, '') : resolve(dir);
}

/** Whether `dir` names a bucket prefix (s3://bucket/prefix) rather than a folder. */
function isS3Url(dir: string): boolean {
  return dir.startsWith('s3://');
}

/** Whether `dir` names object storage (s3://, or one of the Azure forms) rather than a folder. */
export function isObjectStorageUrl(dir: string): boolean {
  return isS3Url(dir) || isAzureUrl(dir);
}

/**
 * The store of the output `dir`, chosen once: a local folder, a bucket prefix for an s3:// URL,
 * a container prefix for an Azure URL (each SDK is loaded only then). Callers never ask which.
 */
export async function openStore(dir: string, options: StoreOptions): Promise<OutputStore> {
  if (isS3Url(dir)) {
    const { createS3Store } = await import('./s3-store.js');
    return createS3Store({ ...options.s3, url: dir, logger: options.logger });
  }
  if (isAzureUrl(dir)) {
    const { createAzureStore } = await import('./azure-store.js');
    return createAzureStore({ ...options.azure, url: dir, logger: options.logger });
  }
  return createLocalStore(resolve(dir), options.logger);
}
