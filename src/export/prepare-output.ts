import { CheckpointError } from '../errors.js';
import type { Logger } from '../log.js';
import type { OutputStore } from '../output/store.js';
import {
  type Checkpoint,
  findDrift,
  isComplete,
  newCheckpoint,
  newStreamState,
  nextRun,
  parseCheckpoint,
  restartPart,
  type StreamState,
} from './checkpoint.js';
import { countedShards, findDamage, sizeProblem } from './find-damage.js';
import { LOCK_FILE, MANIFEST_FILE, partDir, runDir, SUCCESS_FILE } from './layout.js';
import { type Manifest, manifestSchema, newManifest, reconcile } from './manifest.js';
import type { StreamPlan } from './streams.js';
import { type RunToSeal, sealRun } from './seal-run.js';
import { parseStateFile } from './state-file.js';

/** A planned stream that has nothing to read in this run, and why. */
export interface IdleStream {
  stream: string;
  /** complete: a full export that is done. waiting: an incremental stream's next window is still empty. */
  reason: 'complete' | 'waiting';
  /** When its last partition was committed. */
  since: string;
}

export interface PreparedOutput {
  checkpoint: Checkpoint;
  manifest: Manifest;
  resumed: boolean;
  idle: IdleStream[];
  /** With `repair`: the damaged partitions (`stream/m`), each with what is wrong; they are read again. */
  damaged: Map<string, string[]>;
  /**
   * Makes the decided changes to the output folder: the old `_SUCCESS` goes, completed runs are
   * sealed, `save` writes the checkpoint and manifest above, then folders that hold nothing
   * committed are emptied (after the save, so that a crash in between leaves no listed file missing).
   */
  apply(save: () => Promise<void>): Promise<void>;
}

export interface PrepareOptions {
  store: OutputStore;
  checkpointKey: string;
  baseUrl: string;
  streams: readonly StreamPlan[];
  fresh: boolean;
  /** Read back the current runs' shards and read damaged partitions again from their first page. */
  repair?: boolean;
  now: string;
  logger: Logger;
  /** The folder's records with a sharded run merged in; default: its checkpoint and manifest files. */
  recorded?: { checkpoint: Checkpoint; manifest: Manifest } | undefined;
}

/**
 * Decides how a run takes up the output folder, and refuses (throws) before anything in it is
 * changed: drift from the recorded run, a damaged checkpoint, shards it counts that are gone, a
 * folder this process cannot write. With `fresh`, the planned streams' progress is forgotten
 * (other streams of the job keep theirs). Otherwise the run resumes from the checkpoint.
 *
 * A stream whose last run completed gets its next run here (incremental: the next window from
 * the watermark; snapshot: a new pinned copy), after that run is sealed; a full export that is
 * complete, or an incremental one whose next window is still empty, is idle.
 */
export async function prepareOutput(options: PrepareOptions): Promise<PreparedOutput> {
  const { store, checkpointKey, baseUrl, streams, fresh, repair = false, now, logger } = options;
  const earlier = options.recorded?.checkpoint ?? (await readCheckpoint(store, checkpointKey, fresh));
  let checkpoint = earlier ?? newCheckpoint(baseUrl, [], now);
  if (fresh && earlier !== undefined) {
    logger.info({ output: store.location, streams: streams.map((s) => s.name) }, `--fresh: deleting earlier output of ${streams.map((s) => s.name).join(', ')}`);
    // Another source's progress cannot be kept: start the whole checkpoint over.
    checkpoint = earlier.baseUrl === baseUrl ? without(earlier, streams) : newCheckpoint(baseUrl, [], now);
  }
  if (!fresh && earlier !== undefined) {
    const drift = findDrift(earlier, baseUrl, streams);
    if (drift.length > 0) {
      throw new CheckpointError(
        `The job's settings differ from the run recorded in ${store.where(checkpointKey)}, so resuming would mix two different exports:\n  - ${drift.join('\n  - ')}\nRestore the settings to resume, or run with --fresh to start over.`,
      );
    }
  }

  const written = options.recorded?.manifest ?? restarted(await readManifest(store, baseUrl, logger), now);
  const recorded = reconcile(written, checkpoint);
  const toSeal: RunToSeal[] = [];
  const idle: IdleStream[] = [];
  /** Folders to empty once the checkpoint is saved: nothing in them is committed. */
  const uncommitted: string[] = [];
  for (const stream of streams) {
    const state = checkpoint.streams[stream.name];
    if (state === undefined) {
      checkpoint = withStream(checkpoint, stream.name, newStreamState(stream, now));
      uncommitted.push(stream.name);
    } else if (isComplete(state) && !repair) {
      // A completed run is sealed again (the run itself may have stopped before it could).
      toSeal.push({ stream: stream.name, state, files: recorded.files, keep: stream.keep });
      const next = nextRun(state, stream, now);
      if (next === undefined) {
        idle.push({ stream: stream.name, reason: stream.mode === 'incremental' ? 'waiting' : 'complete', since: lastCommit(state) });
        continue;
      }
      checkpoint = withStream(checkpoint, stream.name, next);
      uncommitted.push(runDir(stream.name, next.run));
    } else if (Object.values(state.parts).every((part) => part.nextSeq === 0)) {
      uncommitted.push(runDir(stream.name, state.run));
    }
  }

  const names = streams.map((s) => s.name);
  let damaged = new Map<string, string[]>();
  /** A repaired run's own seal: it goes before its files change, and comes back when it completes again. */
  const unsealed: string[] = [];
  if (repair) {
    damaged = await findDamage(store, checkpoint, recorded, names);
    for (const key of damaged.keys()) {
      const [name = '', m = ''] = key.split('/');
      const state = checkpoint.streams[name];
      if (state === undefined) continue;
      checkpoint = restartPart(checkpoint, name, Number(m), now);
      uncommitted.push(partDir(name, Number(m), state.partitions, state.run));
      const dir = runDir(name, state.run);
      if (state.run !== null) unsealed.push(`${dir}/${SUCCESS_FILE}`, `${dir}/${MANIFEST_FILE}`);
    }
  }
  const manifest = reconcile(recorded, checkpoint);
  if (!fresh && !repair && earlier !== undefined) {
    await assertShardsPresent(store, checkpoint, manifest, names);
  }
  const writtenDirs = names.flatMap((name) => {
    const state = checkpoint.streams[name];
    if (state === undefined) return [];
    const open = Object.entries(state.parts).filter(([, part]) => !part.done);
    return [name, runDir(name, state.run), ...open.map(([m]) => partDir(name, Number(m), state.partitions, state.run))];
  });
  // A run with nothing to do writes nothing: it needs no write access.
  const writes = repair ? damaged.size > 0 : idle.length < streams.length;
  const touched = [...writtenDirs, ...uncommitted];
  if (writes) {
    await store.checkWritable(
      ['', parentOf(checkpointKey), ...touched, ...touched.map(parentOf)],
      [SUCCESS_FILE, MANIFEST_FILE, LOCK_FILE, checkpointKey],
    );
  }
  return {
    checkpoint,
    manifest,
    resumed: !fresh && earlier !== undefined,
    idle,
    damaged,
    apply: async (save) => {
      await store.remove([SUCCESS_FILE, ...unsealed]);
      for (const run of toSeal) await sealRun({ store, baseUrl, logger }, run);
      await save();
      for (const dir of uncommitted) await store.removeTree(dir);
    },
  };
}

/** The checkpoint file, if there is one; with `fresh` a damaged one is no obstacle (it is replaced). */
async function readCheckpoint(store: OutputStore, key: string, fresh: boolean): Promise<Checkpoint | undefined> {
  const text = await store.getText(key);
  if (text === undefined) return undefined;
  try {
    return parseCheckpoint(text, store.where(key));
  } catch (error) {
    if (fresh) return undefined;
    throw error;
  }
}

function withStream(checkpoint: Checkpoint, name: string, state: StreamState): Checkpoint {
  return { ...checkpoint, streams: { ...checkpoint.streams, [name]: state } };
}

function without(checkpoint: Checkpoint, streams: readonly StreamPlan[]): Checkpoint {
  const names = new Set(streams.map((s) => s.name));
  return {
    ...checkpoint,
    streams: Object.fromEntries(Object.entries(checkpoint.streams).filter(([name]) => !names.has(name))),
  };
}

/** When the stream's last partition was committed (ISO 8601). */
export function lastCommit(state: StreamState): string {
  return Object.values(state.parts).reduce((latest, part) => (part.updatedAt > latest ? part.updatedAt : latest), '');
}

/**
 * The folder's `_manifest.json` as it was written. A damaged one is replaced by an empty list, with
 * a warning: the shards the checkpoint counts are then not listed, and the run refuses to resume.
 */
export async function readManifest(store: OutputStore, baseUrl: string, logger: Logger): Promise<Manifest> {
  const text = await store.getText(MANIFEST_FILE);
  if (text !== undefined) {
    try {
      return parseStateFile(text, store.where(MANIFEST_FILE), manifestSchema, 'a bulk-extract manifest');
    } catch (error) {
      if (!(error instanceof CheckpointError)) throw error;
      logger.warn({ output: store.location }, `${error.message} Its file list starts empty.`);
    }
  }
  return newManifest(baseUrl, new Date(0).toISOString());
}

/** A manifest as a new run starts it: running since `now`. */
export function restarted(manifest: Manifest, now: string): Manifest {
  return { ...manifest, state: 'running', startedAt: now };
}

/**
 * Every shard the checkpoint counts for the planned streams must be listed in the manifest and be
 * on disk at its recorded size; otherwise the folder is not the one the checkpoint describes
 * (moved, cleaned, another output.dir), and resuming would report rows that are not there.
 */
export async function assertShardsPresent(
  store: OutputStore,
  checkpoint: Checkpoint,
  manifest: Manifest,
  streams: readonly string[],
): Promise<void> {
  const missing: string[] = [];
  for (const shard of countedShards(checkpoint, manifest, streams)) {
    const problem = await sizeProblem(store, shard);
    if (problem !== undefined) missing.push(problem);
  }
  if (missing.length > 0) {
    throw new CheckpointError(
      `${store.location} does not hold the shards the checkpoint counts (${missing.length} missing), so resuming would report rows that are not there:\n  - ${missing.slice(0, 5).join('\n  - ')}${missing.length > 5 ? '\n  - ...' : ''}\nWas the folder moved or cleaned, or is output.dir not the one of the run that wrote the checkpoint? Nothing was changed. Run \`bulk-extract repair\` to read only the damaged partitions again, or run with --fresh to start over.`,
    );
  }
}

/** The folder a key is in ('' for the root). */
function parentOf(key: string): string {
  return key.slice(0, Math.max(0, key.lastIndexOf('/')));
}
