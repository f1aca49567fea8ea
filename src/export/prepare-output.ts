import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CheckpointError, ConfigError } from '../errors.js';
import type { Logger } from '../log.js';
import { type Checkpoint, findDrift, newCheckpoint, newStreamState, parseCheckpoint } from './checkpoint.js';
import { MANIFEST_FILE, SUCCESS_FILE } from './layout.js';
import { type Manifest, newManifest, reconcile } from './manifest.js';
import type { StreamPlan } from './plan.js';

export interface PreparedOutput {
  checkpoint: Checkpoint;
  manifest: Manifest;
  resumed: boolean;
}

/**
 * Readies the output folder for a run: with `fresh`, forgets earlier progress of the planned streams;
 * otherwise resumes from the checkpoint when there is one, refusing settings that drifted. The old
 * `_SUCCESS` goes either way: it comes back only when this run completes.
 */
export async function prepareOutput(options: {
  outDir: string;
  checkpointPath: string;
  baseUrl: string;
  streams: readonly StreamPlan[];
  fresh: boolean;
  now: string;
  logger: Logger;
}): Promise<PreparedOutput> {
  const { outDir, checkpointPath, baseUrl, streams, fresh, now, logger } = options;
  await ensureDir(outDir);
  await rm(join(outDir, SUCCESS_FILE), { force: true });
  const text = fresh ? undefined : await readIfExists(checkpointPath);
  if (text === undefined) {
    if (fresh) {
      logger.info({ outDir }, '--fresh: deleting earlier output of the planned streams');
      for (const stream of streams) await rm(join(outDir, stream.name), { recursive: true, force: true });
      await rm(checkpointPath, { force: true });
      await rm(join(outDir, MANIFEST_FILE), { force: true });
    }
    return { checkpoint: newCheckpoint(baseUrl, streams, now), manifest: newManifest(baseUrl, now), resumed: false };
  }

  let checkpoint = parseCheckpoint(text, checkpointPath);
  const drift = findDrift(checkpoint, baseUrl, streams);
  if (drift.length > 0) {
    throw new CheckpointError(
      `The job's settings differ from the run recorded in ${checkpointPath}, so resuming would mix two different exports:\n  - ${drift.join('\n  - ')}\nRestore the settings to resume, or run with --fresh to start over.`,
    );
  }
  for (const stream of streams) {
    if (checkpoint.streams[stream.name] === undefined) {
      checkpoint = { ...checkpoint, streams: { ...checkpoint.streams, [stream.name]: newStreamState(stream, now) } };
    }
  }
  const manifestText = await readIfExists(join(outDir, MANIFEST_FILE));
  let manifest = newManifest(baseUrl, now);
  if (manifestText !== undefined) {
    try {
      manifest = { ...(JSON.parse(manifestText) as Manifest), state: 'running', startedAt: now };
    } catch {
      logger.warn(
        { outDir },
        '_manifest.json is damaged: its file list starts empty, so it will list only the shards this run writes',
      );
    }
  }
  return { checkpoint, manifest: reconcile(manifest, checkpoint), resumed: true };
}

/** Creates the output folder; a folder that cannot be created is a config error naming output.dir. */
export async function ensureDir(outDir: string): Promise<void> {
  try {
    await mkdir(outDir, { recursive: true });
  } catch (error) {
    throw new ConfigError(`output.dir: cannot create ${outDir} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`, {
      cause: error,
    });
  }
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CheckpointError(`Cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`, {
      cause: error,
    });
  }
}
