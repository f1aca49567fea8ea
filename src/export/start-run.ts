import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { JobConfig } from '../config/load-config.js';
import { CheckpointError } from '../errors.js';
import type { Logger } from '../log.js';
import { type Clock, systemClock } from '../util/clock.js';
import { findDrift, parseCheckpoint, streamOf } from './checkpoint.js';
import { Committer } from './committer.js';
import { type AbsorbOutcome, absorbShards } from './finalize.js';
import { LOCK_FILE, MANIFEST_FILE } from './layout.js';
import { acquireLock, LockedError } from './lock.js';
import { reconcile } from './manifest.js';
import type { Mirror } from './mirror.js';
import { outputPaths, stage } from './output-target.js';
import { type PartitionPlan, planPartitions, type StreamPlan } from './plan.js';
import { assertShardsPresent, prepareOutput, readIfExists, readManifest } from './prepare-output.js';
import {
  newPlan,
  pairKey,
  pairsOf,
  pairsOfShard,
  planPath,
  readPlan,
  SHARDS_DIR,
  shardCheckpoint,
  shardLockPath,
  readShardManifest,
  type ShardPlan,
  shardPaths,
  type ShardSpec,
  writePlan,
} from './shard.js';

/**
 * How a run takes its part of the output folder: the whole job under the folder's lock, or one
 * shard of a sharded run under the shard's lock (see shard.ts), and how a sharded run ends.
 */

export interface FinalizeResult {
  finalized: boolean;
  waitingFor: number[];
}

export interface Setup {
  outDir: string;
  checkpointPath: string;
  baseUrl: string;
  streams: readonly StreamPlan[];
  logger: Logger;
  clock: Clock;
  now: () => string;
  mirror?: Mirror | undefined;
}

export interface Started {
  committer: Committer;
  /** The cursor chains this process drains. */
  plans: PartitionPlan[];
  resumed: boolean;
  release: () => Promise<void>;
}

/** How long a shard waits for the output folder's lock, which other shards hold only briefly. */
const SHARD_PATIENCE_MS = 5 * 60_000;

function folderLock(setup: Setup, patienceMs = 0): Promise<() => Promise<void>> {
  return acquireLock(join(setup.outDir, LOCK_FILE), setup.outDir, setup.logger, { patienceMs });
}

/**
 * A run of the whole job in this process, under the output folder's lock. A sharded run left in
 * the folder is merged in first when none of its shards is running: this run takes over from there.
 */
export async function startWhole(setup: Setup, fresh: boolean): Promise<Started> {
  const { outDir, checkpointPath, baseUrl, streams, logger, clock, now, mirror } = setup;
  const release = await folderLock(setup);
  try {
    if (mirror !== undefined) await stage(outDir, mirror);
    const absorbed = await absorbShards({ outDir, checkpointPath, logger, now: now(), requireComplete: false });
    if (absorbed.state === 'busy') {
      throw new LockedError(
        `${outDir} has a sharded run in progress (${absorbed.plan.count} shards, since ${absorbed.plan.createdAt}) and shards ${absorbed.running.join(', ')} are running: let them finish, or run this with --shards ${absorbed.plan.count} as one of them.`,
      );
    }
    if (absorbed.state === 'merged') {
      logger.warn({ shards: absorbed.plan.count, complete: absorbed.complete }, 'took over the progress of a sharded run that no worker was running');
    }
    const prepared = await prepareOutput({
      outDir,
      checkpointPath,
      baseUrl,
      streams,
      fresh,
      now: now(),
      logger,
      mirror,
    });
    const committer = new Committer(
      outDir,
      checkpointPath,
      prepared.checkpoint,
      prepared.manifest,
      clock,
      join(outDir, MANIFEST_FILE),
      mirror,
    );
    await committer.save();
    await prepared.clearUncommitted();
    const plans = planPartitions(streams, (name) => streamOf(committer.state, name));
    return { committer, plans, resumed: prepared.resumed, release };
  } catch (error) {
    await release();
    throw error;
  }
}

/**
 * Shard `spec` of a sharded run, under the shard's own lock: the run is the one of the folder's
 * plan, which the first shard to start writes (from the folder's checkpoint, as a run without
 * shards would start); this shard drains its pairs of it, with its own checkpoint and manifest.
 */
export async function startShard(setup: Setup, spec: ShardSpec): Promise<Started> {
  const { outDir, baseUrl, streams, logger, clock, now } = setup;
  const release = await shardLock(outDir, spec, logger);
  try {
    const plan = (await readPlan(outDir)) ?? (await createPlan(setup, spec.count));
    if (plan.count !== spec.count) {
      throw new CheckpointError(
        `${planPath(outDir)}: the sharded run in progress has ${plan.count} shards, this worker was given ${spec.count}. Run it with --shards ${plan.count}; a different number of shards can start once it is finalized.`,
      );
    }
    const names = streams.map((s) => s.name);
    const drift = findDrift(plan.checkpoint, baseUrl, streams);
    if (names.join() !== plan.streams.join()) {
      drift.unshift(`streams: ${plan.streams.join(', ')} in the sharded run, ${names.join(', ')} in the config`);
    }
    if (drift.length > 0) {
      throw new CheckpointError(
        `The job's settings differ from the sharded run in progress (${planPath(outDir)}), so this shard would mix two different exports:\n  - ${drift.join('\n  - ')}\nRestore the settings to go on.`,
      );
    }
    const paths = shardPaths(outDir, plan, spec.index);
    const text = await readIfExists(paths.checkpoint);
    const checkpoint = text === undefined ? shardCheckpoint(plan, spec.index) : parseCheckpoint(text, paths.checkpoint);
    const root = await readManifest(outDir, baseUrl, now(), logger);
    const own = await readShardManifest(paths.manifest, root, plan, spec.index, now(), logger);
    const manifest = reconcile(own, checkpoint);
    await assertShardsPresent(outDir, checkpoint, manifest, names);
    await mkdir(join(outDir, SHARDS_DIR, plan.id), { recursive: true });
    const committer = new Committer(outDir, paths.checkpoint, checkpoint, manifest, clock, paths.manifest);
    await committer.save();
    const mine = pairsOfShard(plan, spec.index);
    const plans = planPartitions(streams, (name) => streamOf(plan.checkpoint, name)).filter((p) =>
      mine.has(pairKey(p.stream, p.m)),
    );
    return { committer, plans, resumed: text !== undefined, release };
  } catch (error) {
    await release();
    throw error;
  }
}

/** The shard's lock, in `_shards/`, which a finalize deletes when it is empty. */
async function shardLock(outDir: string, spec: ShardSpec, logger: Logger): Promise<() => Promise<void>> {
  for (let attempt = 0; ; attempt++) {
    await mkdir(join(outDir, SHARDS_DIR), { recursive: true });
    try {
      // A finalize holds every shard's lock for a moment: wait that out rather than fail.
      const what = `shard ${spec.index}/${spec.count} of ${outDir}`;
      return await acquireLock(shardLockPath(outDir, spec), what, logger, { patienceMs: 60_000 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt === 2) throw error;
    }
  }
}

/**
 * The plan of a new sharded run, written under the output folder's lock: the folder is readied
 * exactly as for a run without shards (resumed, or the next incremental window opened), and that
 * checkpoint is shared out. Another shard may have written it while this one waited for the lock.
 */
async function createPlan(setup: Setup, count: number): Promise<ShardPlan> {
  const { outDir, checkpointPath, baseUrl, streams, logger, clock, now } = setup;
  const release = await folderLock(setup, SHARD_PATIENCE_MS);
  try {
    const existing = await readPlan(outDir);
    if (existing !== undefined) return existing;
    const prepared = await prepareOutput({
      outDir,
      checkpointPath,
      baseUrl,
      streams,
      fresh: false,
      now: now(),
      logger,
    });
    const committer = new Committer(outDir, checkpointPath, prepared.checkpoint, prepared.manifest, clock);
    await committer.save();
    await prepared.clearUncommitted();
    // Shard files of an earlier sharded run whose end was interrupted: nothing reads them any more.
    for (const entry of await readdir(join(outDir, SHARDS_DIR), { withFileTypes: true })) {
      if (entry.isDirectory()) await rm(join(outDir, SHARDS_DIR, entry.name), { recursive: true, force: true });
    }
    const plan = newPlan(count, streams.map((s) => s.name), committer.state, now());
    await writePlan(outDir, plan);
    logger.info({ shards: count, pairs: pairsOf(plan).length, plan: plan.id }, 'planned a sharded run');
    return plan;
  } finally {
    await release();
  }
}

/** After a shard completed: the last shard to finish merges them all and ends the run. */
export async function finalizeIfLast(setup: Setup): Promise<FinalizeResult> {
  const outcome = await finalizeShards(setup);
  switch (outcome.state) {
    case 'none': // another shard ended the run between this one's end and now
    case 'merged':
      return { finalized: true, waitingFor: [] };
    case 'busy':
      setup.logger.info({ running: outcome.running }, 'shard complete; the last shard to finish ends the run');
      return { finalized: false, waitingFor: outcome.running };
    case 'incomplete':
      setup.logger.info({ incomplete: outcome.incomplete }, 'shard complete; other shards have partitions left');
      return { finalized: false, waitingFor: outcome.incomplete };
  }
}

/** `bulk-extract finalize`: ends the folder's sharded run if every shard is complete. */
export async function finalizeJob(
  config: JobConfig,
  logger: Logger,
  clock: Clock = systemClock,
): Promise<AbsorbOutcome> {
  const { outDir, checkpointPath } = outputPaths(config);
  const now = () => new Date(clock.now()).toISOString();
  return finalizeShards({ outDir, checkpointPath, baseUrl: config.source.baseUrl, streams: [], logger, clock, now });
}

async function finalizeShards(setup: Setup): Promise<AbsorbOutcome> {
  const { outDir, checkpointPath, logger, now } = setup;
  const release = await folderLock(setup, SHARD_PATIENCE_MS);
  try {
    return await absorbShards({ outDir, checkpointPath, logger, now: now(), requireComplete: true });
  } finally {
    await release();
  }
}
