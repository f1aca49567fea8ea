import { join, relative, resolve, sep } from 'node:path';
import type { JobConfig } from '../../config/load-config.js';
import type { Logger } from '../../log.js';
import { createLocalStore } from '../../output/local-store.js';
import type { OutputStore } from '../../output/store.js';
import { CHECKPOINT_FILE } from './layout.js';

/** A job's output: its store, and the key of its checkpoint there. */
export interface Output {
  store: OutputStore;
  checkpointKey: string;
}

/** Where a job's output goes, as users name it: the folder (resolved against the working directory), or s3://bucket/prefix. */
export function destinationOf(config: JobConfig): string {
  return isS3Url(config.output.dir) ? config.output.dir.replace(/\/+$/, '') : resolve(config.output.dir);
}

export function isS3Url(dir: string): boolean {
  return dir.startsWith('s3://');
}

/** The output in a local folder `dir`, with its checkpoint in the folder (for `status --out`). */
export function outputAt(dir: string, logger: Logger): Output {
  return { store: createLocalStore(resolve(dir), logger), checkpointKey: CHECKPOINT_FILE };
}

/**
 * The store of a job's output, built once per run; the AWS SDK is loaded only for an s3://
 * output.dir. A checkpoint kept elsewhere (the job's `checkpoint` key, local outputs only) has a
 * key relative to the output folder.
 */
export async function openOutput(config: JobConfig, logger: Logger): Promise<Output> {
  if (!isS3Url(config.output.dir)) {
    const dir = resolve(config.output.dir);
    const checkpoint = resolve(config.checkpoint ?? join(dir, CHECKPOINT_FILE));
    return { store: createLocalStore(dir, logger), checkpointKey: relative(dir, checkpoint).split(sep).join('/') };
  }
  // The SDK version is pinned (the last for Node 20): its warning that later ones need Node 22 is noise here.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const { createS3Store } = await import('../../output/s3-store.js');
  const s3 = config.output.s3;
  const store = createS3Store({
    url: config.output.dir,
    endpoint: s3?.endpoint,
    region: s3?.region,
    forcePathStyle: s3?.forcePathStyle,
    partSizeBytes: s3 === undefined ? undefined : s3.partSizeMiB * 1024 * 1024,
    staging: s3?.staging,
    logger,
  });
  return { store, checkpointKey: CHECKPOINT_FILE };
}
