import { createHash } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_PART_SIZE_MIB } from '../config/job-schema.js';
import type { JobConfig } from '../config/load-config.js';
import type { Logger } from '../log.js';
import type { OutputStore } from '../output/store.js';
import { writeFileAtomic } from '../util/durable-file.js';
import { CHECKPOINT_FILE, LOCK_FILE, MANIFEST_FILE } from './layout.js';
import type { Mirror } from './mirror.js';

/** Output and checkpoint paths of a job, resolved against the working directory. */
export function outputPaths(config: JobConfig): { outDir: string; checkpointPath: string; s3: boolean } {
  const s3 = isS3Url(config.output.dir);
  // An s3:// output is written through a local staging folder, which holds what the store does.
  const staging = () =>
    config.output.s3?.staging ??
    join(tmpdir(), 'bulk-extract', createHash('sha256').update(config.output.dir).digest('hex').slice(0, 16));
  const outDir = resolve(s3 ? staging() : config.output.dir);
  return { outDir, checkpointPath: resolve(config.checkpoint ?? join(outDir, CHECKPOINT_FILE)), s3 };
}

function isS3Url(dir: string): boolean {
  return dir.startsWith('s3://');
}

/** The object store of an s3:// output.dir; the AWS SDK is loaded only then. */
export async function openStore(config: JobConfig, logger: Logger): Promise<OutputStore> {
  // The SDK version is pinned (the last for Node 20): its warning that later ones need Node 22 is noise here.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const { createS3Store } = await import('../output/s3-store.js');
  const s3 = config.output.s3;
  return createS3Store({
    url: config.output.dir,
    endpoint: s3?.endpoint,
    region: s3?.region,
    forcePathStyle: s3?.forcePathStyle,
    partSizeBytes: (s3?.partSizeMiB ?? DEFAULT_PART_SIZE_MIB) * 1024 * 1024,
    logger,
  });
}

/**
 * The staging folder of an s3:// export starts each run as a copy of the store's checkpoint and
 * manifest only: the store is the output, and what the folder held before (shards not uploaded
 * when a run stopped) was never committed.
 */
export async function stage(outDir: string, mirror: Mirror): Promise<void> {
  for (const entry of await readdir(outDir)) {
    if (entry !== LOCK_FILE) await rm(join(outDir, entry), { recursive: true, force: true });
  }
  for (const name of [CHECKPOINT_FILE, MANIFEST_FILE]) {
    const text = await mirror.store.getText(name);
    if (text !== undefined) await writeFileAtomic(join(outDir, name), text);
  }
}
