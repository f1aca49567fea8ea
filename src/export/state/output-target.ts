import { relative, resolve, sep } from 'node:path';
import type { JobConfig } from '../../config/load-config.js';
import { type Logger, silentLogger } from '../../log.js';
import { createLocalStore, destinationOf as destination, openStore, type OutputStore } from '../../output/index.js';
import { CHECKPOINT_FILE } from './layout.js';

/** A job's output: its store, and the key of its checkpoint there. */
export interface Output {
  store: OutputStore;
  checkpointKey: string;
}

/** Where a job's output goes, as users name it: the folder (resolved against the working directory), or its URL. */
export function destinationOf(config: JobConfig): string {
  return destination(config.output.dir);
}

/** The output in a local folder `dir`, with its checkpoint in the folder (for `status --out`). */
export function outputAt(dir: string, logger: Logger = silentLogger): Output {
  return { store: createLocalStore(resolve(dir), logger), checkpointKey: CHECKPOINT_FILE };
}

/**
 * The store of a job's output, built once per run. A checkpoint kept elsewhere (the job's
 * `checkpoint` key, which only a local output may have) has a key relative to the output folder.
 */
export async function openOutput(config: JobConfig, logger: Logger = silentLogger): Promise<Output> {
  const { s3, azure } = config.output;
  const store = await openStore(config.output.dir, {
    logger,
    s3: s3 && {
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: s3.forcePathStyle,
      partSizeBytes: s3.partSizeMiB * 1024 * 1024,
      staging: s3.staging,
    },
    azure: azure && {
      account: azure.account,
      endpoint: azure.endpoint,
      blockSizeBytes: azure.blockSizeMiB * 1024 * 1024,
      retry: azure.retry,
      staging: azure.staging,
      // The credential comes from the environment: the run's redactor hides it from then on.
      onSecret: (value) => config.redactor.add(value),
    },
  });
  const checkpoint = config.checkpoint;
  const checkpointKey =
    checkpoint === undefined ? CHECKPOINT_FILE : relative(resolve(config.output.dir), resolve(checkpoint)).split(sep).join('/');
  return { store, checkpointKey };
}
