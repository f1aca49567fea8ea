import type { Logger } from '../../log.js';
import type { Clock } from '../../util/clock.js';
import { type Checkpoint, isComplete, LOCK_FILE, type Manifest, windowDir, streamOf, type StreamPlan, SUCCESS_FILE } from '../state/index.js';
import { Committer, type PartitionPlan } from '../partition/index.js';
import { holdWorkers } from '../workers/index.js';
import { LockedError, type LockOptions, type OutputStore } from '../../output/index.js';
import { planPartitions } from '../plan/index.js';
import { type IdleStream, prepareOutput } from './prepare-output.js';
import { restarted } from '../check/index.js';

/**
 * How a run takes its part of the output folder: the whole job under the folder's lock (here), or
 * one worker of a split job under the worker's lock (start-worker.ts). Every start first decides
 * what it will change, refusing (throwing) before it changes anything.
 */

export interface Setup {
  store: OutputStore;
  checkpointKey: string;
  baseUrl: string;
  /** The streams this run drains (all of the job's, or the one of --stream). */
  streams: readonly StreamPlan[];
  /** Every stream of the job: `_SUCCESS` says all of them are complete. */
  jobStreams: readonly StreamPlan[];
  logger: Logger;
  clock: Clock;
  now: () => string;
  /**
   * Called once the run's changes to the output folder are decided, before the first is made,
   * with the checkpoint the run will drain: a refusal thrown here leaves the folder as it was.
   */
  beforeWrite: (checkpoint: Checkpoint) => Promise<void>;
}

export interface Started {
  /** Undefined when the folder already is what this run would leave: every stream idle, nothing written. */
  committer: Committer | undefined;
  /** The manifest the run starts from. */
  manifest: Manifest;
  /** The cursor chains this process drains. */
  plans: PartitionPlan[];
  resumed: boolean;
  /** Streams with nothing to read in this run. */
  idle: IdleStream[];
  /** repair: the partitions found damaged (`stream/m`), each with what is wrong. */
  damaged: Map<string, string[]>;
  /** The lock this run holds (the folder's, or its worker's): its progress file lies beside it. */
  lockKey: string;
  release: () => Promise<void>;
}

/** The output folder's lock; a live owner is waited for up to `patienceMs` on `clock` (0: refused at once). */
export function folderLock(store: OutputStore, clock: Clock, patienceMs = 0): Promise<() => Promise<void>> {
  return store.lock(LOCK_FILE, store.location, { patienceMs, ...lockWaits(clock) });
}

/** A lock's waiting on the run's clock, so that a run's waits for a lock are timed as its others are. */
export function lockWaits(clock: Clock): Pick<LockOptions, 'sleep' | 'now'> {
  return { sleep: (ms) => clock.sleep(ms), now: () => clock.now() };
}

export function keepOf(setup: Pick<Setup, 'jobStreams'>): (stream: string) => number | undefined {
  return (stream) => setup.jobStreams.find((s) => s.name === stream)?.keep;
}

/**
 * A run of the whole job in this process, under the output folder's lock. A split job left in
 * the folder is merged in first when none of its workers is running: this run takes over from there.
 */
export async function startWhole(setup: Setup, mode: { fresh: boolean; repair: boolean }): Promise<Started> {
  const { store, checkpointKey, baseUrl, streams, logger, clock, now } = setup;
  const release = await folderLock(store, clock);
  let releaseWorkers = async () => {};
  try {
    const workers = await holdWorkers({ store, checkpointKey, baseUrl, logger, now: now(), keepOf: keepOf(setup) });
    if (workers.state === 'busy') {
      throw new LockedError(
        `${store.location} has a split job in progress (${workers.agreement.count} workers, since ${workers.agreement.createdAt}) and workers ${workers.running.join(', ')} are running: let them finish, or run this with --shards ${workers.agreement.count} as one of them.`,
      );
    }
    const held = workers.state === 'held' ? workers : undefined;
    if (held !== undefined) releaseWorkers = () => held.release();
    const prepared = await prepareOutput({
      store,
      checkpointKey,
      baseUrl,
      streams,
      ...mode,
      now: now(),
      logger,
      recorded:
        held === undefined ? undefined : { checkpoint: held.checkpoint, manifest: restarted(held.manifest, now()) },
    });
    const started = {
      manifest: prepared.manifest,
      plans: planPartitions(streams, (name) => streamOf(prepared.checkpoint, name)),
      resumed: prepared.resumed,
      idle: prepared.idle,
      damaged: prepared.damaged,
      lockKey: LOCK_FILE,
      release,
    };
    const settled = mode.repair
      ? prepared.damaged.size === 0
      : prepared.idle.length === streams.length && (await isSettled(setup, prepared.checkpoint));
    if (held === undefined && settled) return { ...started, committer: undefined };

    await setup.beforeWrite(prepared.checkpoint);
    if (held !== undefined) {
      logger.warn({ workers: held.agreement.count, complete: held.complete }, `took over the progress of a split job (${held.agreement.count} workers) that no worker was running`);
      await held.absorb();
      await releaseWorkers();
      releaseWorkers = async () => {};
    }
    const { checkpoint, manifest } = prepared;
    const committer = new Committer({ store, checkpointKey, checkpoint, manifest, clock });
    await prepared.apply(() => committer.save());
    return { ...started, committer };
  } catch (error) {
    await releaseWorkers();
    await release();
    throw error;
  }
}

/**
 * Whether the folder already is what a run of idle streams would leave: the runs of the streams
 * sealed, and `_SUCCESS` present when every stream of the job is complete.
 */
async function isSettled(setup: Setup, checkpoint: Checkpoint): Promise<boolean> {
  const { store, jobStreams } = setup;
  const exists = async (key: string) => (await store.size(key)) !== undefined;
  for (const { name } of setup.streams) {
    const run = checkpoint.streams[name]?.run ?? null;
    if (run !== null && !(await exists(`${windowDir(name, run)}/${SUCCESS_FILE}`))) return false;
  }
  const jobComplete = jobStreams.every(({ name }) => {
    const state = checkpoint.streams[name];
    return state !== undefined && isComplete(state);
  });
  return !jobComplete || (await exists(SUCCESS_FILE));
}
