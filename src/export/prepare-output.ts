import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CheckpointError, ConfigError } from '../errors.js';
import type { Logger } from '../log.js';
import {
  type Checkpoint,
  findDrift,
  isComplete,
  newCheckpoint,
  newStreamState,
  nextRun,
  parseCheckpoint,
  type StreamState,
} from './checkpoint.js';
import { MANIFEST_FILE, runDir, SUCCESS_FILE } from './layout.js';
import { type Manifest, newManifest, reconcile } from './manifest.js';
import type { StreamPlan } from './plan.js';
import type { Mirror } from './mirror.js';
import { sealRun } from './seal-run.js';

export interface PreparedOutput {
  checkpoint: Checkpoint;
  manifest: Manifest;
  resumed: boolean;
  /**
   * Deletes the folders of streams that have no committed shard. Call it after the checkpoint and
   * manifest above are saved, so that a crash in between leaves no listed file missing.
   */
  clearUncommitted(): Promise<void>;
}

/**
 * Readies the output folder for a run. With `fresh`, the planned streams' progress is forgotten
 * (other streams of the job keep theirs). Otherwise the run resumes from the checkpoint when there
 * is one; it is refused when the settings drifted or when shards the checkpoint counts are not in
 * the output folder. The old `_SUCCESS` goes either way: it comes back when this run completes.
 *
 * An incremental stream whose last run completed gets its next run here: the completed run's
 * folder is sealed, its watermark advances to the end of its window, and a new window opens from
 * there to now minus the safety lag. A run that did not complete is resumed, window and all.
 */
export async function prepareOutput(options: {
  outDir: string;
  checkpointPath: string;
  baseUrl: string;
  streams: readonly StreamPlan[];
  fresh: boolean;
  now: string;
  logger: Logger;
  /** An export to object storage: what is deleted here is deleted there too. */
  mirror?: Mirror | undefined;
}): Promise<PreparedOutput> {
  const { outDir, checkpointPath, baseUrl, streams, fresh, now, logger, mirror } = options;
  await ensureDir(outDir);
  await rm(join(outDir, SUCCESS_FILE), { force: true });
  await mirror?.remove([join(outDir, SUCCESS_FILE)]);
  const text = await readIfExists(checkpointPath);
  // With --fresh a damaged checkpoint is no obstacle; without, it is an error naming what is wrong.
  const parse = fresh ? tryParse : parseCheckpoint;
  const earlier = text === undefined ? undefined : parse(text, checkpointPath);

  let checkpoint = earlier ?? newCheckpoint(baseUrl, [], now);
  if (fresh && earlier !== undefined) {
    logger.info({ outDir, streams: streams.map((s) => s.name) }, '--fresh: deleting earlier output of the planned streams');
    // Another source's progress cannot be kept: start the whole checkpoint over.
    checkpoint = earlier.baseUrl === baseUrl ? without(earlier, streams) : newCheckpoint(baseUrl, [], now);
  }
  if (!fresh && earlier !== undefined) {
    const drift = findDrift(earlier, baseUrl, streams);
    if (drift.length > 0) {
      throw new CheckpointError(
        `The job's settings differ from the run recorded in ${checkpointPath}, so resuming would mix two different exports:\n  - ${drift.join('\n  - ')}\nRestore the settings to resume, or run with --fresh to start over.`,
      );
    }
  }

  const recorded = reconcile(await readManifest(outDir, baseUrl, now, logger), checkpoint);
  /** Folders to empty once the checkpoint above is saved: nothing in them is committed. */
  const uncommitted: string[] = [];
  for (const stream of streams) {
    const state = checkpoint.streams[stream.name];
    if (state === undefined) {
      checkpoint = withStream(checkpoint, stream.name, newStreamState(stream, now));
      uncommitted.push(stream.name);
    } else if (stream.mode === 'incremental' && isComplete(state)) {
      // The last run read its whole window: seal its folder (the run itself may have stopped
      // before it could), then the watermark moves to its end and a new window opens.
      await sealRun(outDir, baseUrl, stream.name, state, recorded.files, mirror);
      const next = nextRun(state, stream, now);
      if (next === undefined) {
        logger.info({ stream: stream.name, watermark: state.window?.until }, 'the last run ended less than safetyLag ago: nothing new to read yet');
        continue;
      }
      checkpoint = withStream(checkpoint, stream.name, next);
      uncommitted.push(runDir(stream.name, next.run));
    } else if (Object.values(state.parts).every((part) => part.nextSeq === 0)) {
      uncommitted.push(runDir(stream.name, state.run));
    }
  }

  const manifest = reconcile(recorded, checkpoint);
  if (!fresh && earlier !== undefined) {
    await assertShardsPresent(outDir, checkpoint, manifest, streams.map((s) => s.name), mirror);
  }
  return {
    checkpoint,
    manifest,
    resumed: !fresh && earlier !== undefined,
    clearUncommitted: async () => {
      for (const dir of uncommitted) {
        await rm(join(outDir, dir), { recursive: true, force: true });
        await mirror?.removeTree(join(outDir, dir));
      }
    },
  };
}

function withStream(checkpoint: Checkpoint, name: string, state: StreamState): Checkpoint {
  return { ...checkpoint, streams: { ...checkpoint.streams, [name]: state } };
}

function tryParse(text: string, file: string): Checkpoint | undefined {
  try {
    return parseCheckpoint(text, file);
  } catch {
    return undefined;
  }
}

function without(checkpoint: Checkpoint, streams: readonly StreamPlan[]): Checkpoint {
  const names = new Set(streams.map((s) => s.name));
  return {
    ...checkpoint,
    streams: Object.fromEntries(Object.entries(checkpoint.streams).filter(([name]) => !names.has(name))),
  };
}

export async function readManifest(outDir: string, baseUrl: string, now: string, logger: Logger): Promise<Manifest> {
  const text = await readIfExists(join(outDir, MANIFEST_FILE));
  if (text !== undefined) {
    try {
      return { ...(JSON.parse(text) as Manifest), state: 'running', startedAt: now };
    } catch {
      logger.warn({ outDir }, '_manifest.json is damaged: its file list starts empty');
    }
  }
  return newManifest(baseUrl, now);
}

/**
 * Every shard the checkpoint counts for the planned streams must be listed in the manifest and be
 * on disk at its recorded size; otherwise the folder is not the one the checkpoint describes
 * (moved, cleaned, another output.dir), and resuming would report rows that are not there.
 */
export async function assertShardsPresent(
  outDir: string,
  checkpoint: Checkpoint,
  manifest: Manifest,
  streams: readonly string[],
  mirror?: Mirror,
): Promise<void> {
  const missing: string[] = [];
  const listed = new Map(manifest.files.map((f) => [`${f.stream}/${f.run ?? ''}/${f.m}/${f.seq}/${f.format}`, f]));
  for (const name of streams) {
    const state = checkpoint.streams[name];
    if (state === undefined) continue;
    for (const [m, part] of Object.entries(state.parts)) {
      for (let seq = 0; seq < part.nextSeq; seq++) {
        for (const format of state.formats) {
          const file = listed.get(`${name}/${state.run ?? ''}/${m}/${seq}/${format}`);
          if (file === undefined) {
            missing.push(`${name} partition ${m}/${state.partitions} shard ${seq} (${format}): not in the manifest`);
            continue;
          }
          const path = join(outDir, file.path);
          const size =
            mirror === undefined
              ? await stat(path).then(
                  (s) => s.size,
                  () => -1,
                )
              : ((await mirror.size(path)) ?? -1);
          if (size !== file.bytes) missing.push(`${file.path}: ${size === -1 ? 'missing' : `${size} bytes, not ${file.bytes}`}`);
        }
      }
    }
  }
  if (missing.length > 0) {
    throw new CheckpointError(
      `${outDir} does not hold the shards the checkpoint counts (${missing.length} missing), so resuming would report rows that are not there:\n  - ${missing.slice(0, 5).join('\n  - ')}${missing.length > 5 ? '\n  - ...' : ''}\nWas the folder moved or cleaned, or is output.dir not the one of the run that wrote the checkpoint? Run with --fresh to start over.`,
    );
  }
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

export async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CheckpointError(`Cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`, {
      cause: error,
    });
  }
}
