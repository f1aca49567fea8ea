import { CheckpointError, ConfigError } from '../../errors.js';
import type { Mode } from '../../config/job-schema.js';
import type { Logger } from '../../log.js';
import { hasDeltaLog, type OutputStore } from '../../output/index.js';
import { type Checkpoint, findDrift, isComplete, LOCK_FILE, type Manifest, MANIFEST_FILE, newCheckpoint, newStreamState, nextWindow, pairKey, parseCheckpoint, partDir, reconcile, removeOwnedTree, restartPart, runStartMs, sameBaseUrl, windowDir, type WindowToSeal, sealWindow, type StreamPlan, type StreamState, SUCCESS_FILE } from '../state/index.js';
import { assertShardsPresent, disagreeError, disagreements, findDamage, readManifest, restarted } from '../check/index.js';

/** A planned stream that has nothing to read in this run, and why. */
export interface IdleStream {
  stream: string;
  /**
   * complete: a full export that is done. waiting: an incremental stream whose last run started no
   * earlier than this one (the clock set back, or the same millisecond): it has no window yet.
   */
  reason: 'complete' | 'waiting';
  /** complete: when its last partition was committed; waiting: when its last run started. */
  since: string;
  /** complete: the modes of a new export each run the stream would be accepted with (StreamPlan.scheduledModes). */
  scheduledModes?: readonly Mode[] | undefined;
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
  /** The folder's records with a split job merged in; default: its checkpoint and manifest files. */
  recorded?: { checkpoint: Checkpoint; manifest: Manifest } | undefined;
}

/**
 * Decides how a run takes up the output folder, and refuses (throws) before anything in it is
 * changed: drift from the recorded run, a damaged checkpoint, shards it counts that are gone, a
 * folder this process cannot write. With `fresh`, the planned streams' progress is forgotten
 * (other streams of the job keep theirs). Otherwise the run resumes from the checkpoint.
 *
 * A stream whose last run completed gets its next run here (incremental: the next window from
 * the watermark, an empty one included; snapshot: a new pinned copy), after that run is sealed; a
 * full export that is complete, or an incremental stream whose last run started no earlier than
 * this one, is idle.
 */
export async function prepareOutput(options: PrepareOptions): Promise<PreparedOutput> {
  const { store, checkpointKey, baseUrl, streams, fresh, repair = false, now, logger } = options;
  const earlier = options.recorded?.checkpoint ?? (await readCheckpoint(store, checkpointKey, fresh));
  const taken = takeUp(options, earlier);
  const read = options.recorded?.manifest ?? (await readManifest(store, baseUrl, logger));
  // The records of the folder must agree before the run goes on from them (a split job's merge was checked).
  const checked = !fresh && earlier !== undefined && options.recorded === undefined;
  const disagree = checked ? disagreements(taken, read, streams) : [];
  if (disagree.length > 0 && !repair) throw disagreeError(store, checkpointKey, disagree);
  const written = options.recorded === undefined ? restarted(read, now) : read;
  const recorded = reconcile(written, taken);
  await refuseTablesAsFiles(store, streams.filter((stream) => stream.table !== 'delta' && taken.streams[stream.name] === undefined));
  const runs = nextRuns(taken, streams, recorded, { repair, now });
  let { checkpoint } = runs;
  const names = streams.map((s) => s.name);
  let damaged = new Map<string, string[]>();
  /** A repaired run's own seal: it goes before its files change, and comes back when it completes again. */
  const unsealed: string[] = [];
  if (repair) {
    damaged = await findDamage(store, checkpoint, recorded, names);
    for (const { stream, m, text } of disagree) {
      const key = pairKey(stream, m);
      damaged.set(key, [...(damaged.get(key) ?? []), text]);
    }
    for (const key of damaged.keys()) {
      const [name = '', m = ''] = key.split('/');
      const state = checkpoint.streams[name];
      if (state === undefined) continue;
      checkpoint = restartPart(checkpoint, name, Number(m), now);
      runs.uncommitted.push(partDir(name, Number(m), state.partitions, state.run));
      const dir = windowDir(name, state.run);
      if (state.run !== null) unsealed.push(`${dir}/${SUCCESS_FILE}`, `${dir}/${MANIFEST_FILE}`);
    }
  }
  const manifest = reconcile(recorded, checkpoint);
  if (!fresh && !repair && earlier !== undefined) {
    await assertShardsPresent(store, checkpoint, manifest, names);
  }
  // A run with nothing to do writes nothing: it needs no write access.
  if (repair ? damaged.size > 0 : runs.idle.length < streams.length) {
    await assertWritable(store, checkpointKey, checkpoint, names, runs.uncommitted);
  }
  return {
    checkpoint,
    manifest,
    resumed: !fresh && earlier !== undefined,
    idle: runs.idle,
    damaged,
    apply: async (save) => {
      if (fresh && earlier !== undefined) {
        logger.info({ output: store.location, streams: names }, `--fresh: deleting earlier output of ${names.join(', ')}`);
      }
      await store.remove([SUCCESS_FILE, ...unsealed]);
      for (const run of runs.toSeal) await sealWindow({ store, baseUrl, logger }, run);
      await save();
      for (const dir of runs.uncommitted) await removeOwnedTree(store, dir, logger);
    },
  };
}

/**
 * The checkpoint this run starts from: the recorded one, refused if the job's settings drifted
 * from it; with `fresh`, the recorded one without the planned streams (or a new one for another
 * source).
 */
function takeUp(options: PrepareOptions, earlier: Checkpoint | undefined): Checkpoint {
  const { store, checkpointKey, baseUrl, streams, fresh, now } = options;
  if (earlier === undefined) return newCheckpoint(baseUrl, [], now);
  if (fresh) {
    // Another source's progress cannot be kept: start the whole checkpoint over.
    return sameBaseUrl(earlier.baseUrl, baseUrl) ? without(earlier, streams) : newCheckpoint(baseUrl, [], now);
  }
  const drift = findDrift(earlier, baseUrl, streams);
  if (drift.length > 0) {
    throw new CheckpointError(
      `The job's settings differ from the run recorded in ${store.where(checkpointKey)}, so resuming would mix two different exports:\n  - ${drift.join('\n  - ')}\nRestore the settings to resume, or run with --fresh to start over.`,
    );
  }
  return earlier;
}

interface NextRuns {
  checkpoint: Checkpoint;
  /** Completed runs to seal (again: the run itself may have stopped before it could). */
  toSeal: WindowToSeal[];
  idle: IdleStream[];
  /** Folders to empty once the checkpoint is saved: nothing in them is committed. */
  uncommitted: string[];
}

/**
 * What each planned stream reads in this run: a new stream starts; a completed run is sealed and
 * followed by the stream's next run, or the stream is idle; a run that committed nothing starts
 * in an empty folder. With `repair`, completed runs stay as they are (their shards are checked).
 */
function nextRuns(
  checkpoint: Checkpoint,
  streams: readonly StreamPlan[],
  recorded: Manifest,
  { repair, now }: { repair: boolean; now: string },
): NextRuns {
  const runs: NextRuns = { checkpoint, toSeal: [], idle: [], uncommitted: [] };
  for (const stream of streams) {
    const state = runs.checkpoint.streams[stream.name];
    if (state === undefined) {
      const started = newStreamState(stream, now);
      runs.checkpoint = withStream(runs.checkpoint, stream.name, started);
      // A Delta table's files stay until a version that no longer references them is committed.
      runs.uncommitted.push(stream.table === 'delta' ? windowDir(stream.name, started.run) : stream.name);
    } else if (isComplete(state) && !repair) {
      runs.toSeal.push({ stream: stream.name, state, files: recorded.files, keep: stream.keep });
      const next = nextWindow(state, stream, now);
      if (next === undefined) {
        const reason = stream.mode === 'incremental' ? 'waiting' : 'complete';
        const since = reason === 'waiting' && state.run !== null ? new Date(runStartMs(state.run)).toISOString() : lastCommit(state);
        const { scheduledModes } = stream;
        runs.idle.push({ stream: stream.name, reason, since, scheduledModes });
        continue;
      }
      runs.checkpoint = withStream(runs.checkpoint, stream.name, next);
      runs.uncommitted.push(windowDir(stream.name, next.run));
    } else if (Object.values(state.parts).every((part) => part.nextSeq === 0)) {
      runs.uncommitted.push(windowDir(stream.name, state.run));
    }
  }
  return runs;
}

/**
 * Refuses a stream of plain files starting in a folder that holds a Delta table: the cleanup of a
 * new stream's folder would delete the table's data files and leave its log naming them.
 */
async function refuseTablesAsFiles(store: OutputStore, streams: readonly StreamPlan[]): Promise<void> {
  for (const stream of streams) {
    if (!(await hasDeltaLog(store, stream.name))) continue;
    throw new ConfigError(
      `${store.where(stream.name)} is a Delta table (it has a _delta_log), and the job makes stream '${stream.name}' plain files: give it table: delta, or another name or output.dir`,
    );
  }
}

/** Refuses, before any write, a run whose folders or files this process may not write. */
async function assertWritable(
  store: OutputStore,
  checkpointKey: string,
  checkpoint: Checkpoint,
  names: readonly string[],
  uncommitted: readonly string[],
): Promise<void> {
  const written = names.flatMap((name) => {
    const state = checkpoint.streams[name];
    if (state === undefined) return [];
    const open = Object.entries(state.parts).filter(([, part]) => !part.done);
    const parts = open.map(([m]) => partDir(name, Number(m), state.partitions, state.run));
    return [name, windowDir(name, state.run), ...parts];
  });
  const touched = [...written, ...uncommitted];
  await store.checkWritable(
    ['', parentOf(checkpointKey), ...touched, ...touched.map(parentOf)],
    [SUCCESS_FILE, MANIFEST_FILE, LOCK_FILE, checkpointKey],
  );
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

/** The folder a key is in ('' for the root). */
function parentOf(key: string): string {
  return key.slice(0, Math.max(0, key.lastIndexOf('/')));
}
