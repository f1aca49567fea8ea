/**
 * output/: where an export's output lives. The `OutputStore` interface and its two homes, a local
 * folder and an S3 bucket prefix, each with its lock; the reads verify and repair make. Other
 * folders import output/ through this file only.
 */
export { createLocalStore } from './local-store.js';
export { LockedError, type LockOptions, type LockOwner, type LockState } from './lock.js';
export type { LocalCopy, OutputStore } from './store.js';
