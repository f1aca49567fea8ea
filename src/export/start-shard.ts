import { mkdir, readdir, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { JobConfig } from '../config/load-config.js';
import { CheckpointError } from '../errors.js';
import type { Logger } from '../log.js';
import { type Clock, systemClock } from '../util/clock.js';
import { findDrift, parseCheckpoint, streamOf } from './checkpoint.js';
import { Committer } from './committer.js';
import { type AbsorbOutcome, absorbShards } from './finalize.js';
import { acquireLock } from './lock.js';
import { reconcile } from './manifest.js';
import { outputPaths } from './output-target.js';
import { planPartitions, planStreams } from './plan.js';
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
import { type FinalizeResult, folderLock, keepOf, type Setup, type Started } from './start-run.js';

/** How long a shard waits for the output folder's lock, which other shards hold only briefly. */
const SHARD_PATIENCE_MS = 5 * 60_000;

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
    const root = await readManifest(outDir, baseUrl, logger);
    const own = await readShardManifest(paths.manifest, root, plan, spec.index, now(), logger);
    const manifest = reconcile(own, checkpoint);
    await assertShardsPresent(outDir, checkpoint, manifest, names);
    await setup.beforeWrite(plan.checkpoint);
    await mkdir(join(outDir, SHARDS_DIR, plan.id), { recursive: true });
    const committer = new Committer(outDir, paths.checkpoint, checkpoint, manifest, clock, paths.manifest);
    await committer.save();
    const mine = pairsOfShard(plan, spec.index);
    const plans = planPartitions(streams, (name) => streamOf(plan.checkpoint, name)).filter((p) =>
      mine.has(pairKey(p.stream, p.m)),
    );
    return { committer, manifest, plans, resumed: text !== undefined, idle: [], damaged: new Map(), release };
  } catch (error) {
    await release();
    // A refused shard leaves no empty _shards folder behind.
    if ((await readPlan(outDir).catch(() => undefined)) === undefined) {
      await rmdir(join(outDir, SHARDS_DIR)).catch(() => undefined);
    }
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
      outDir, checkpointPath, baseUrl, streams, fresh: false, now: now(),
      logger,
    });
    await setup.beforeWrite(prepared.checkpoint);
    const committer = new Committer(outDir, checkpointPath, prepared.checkpoint, prepared.manifest, clock);
    await prepared.apply(() => committer.save());
    // Shard files of an earlier sharded run whose end was interrupted: nothing reads them any more.
    for (const entry of await readdir(join(outDir, SHARDS_DIR), { withFileTypes: true })) {
      if (entry.isDirectory()) await rm(join(outDir, SHARDS_DIR, entry.name), { recursive: true, force: true });
    }
    const plan = newPlan(count, streams.map((s) => s.name), committer.state, now());
    await writePlan(outDir, plan);
    logger.info({ shards: count, pairs: pairsOf(plan).length, plan: plan.id }, `planned a sharded run of ${count} shards`);
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
  const jobStreams = planStreams(config.streams, config.output.formats);
  return finalizeShards({ outDir, checkpointPath, baseUrl: config.source.baseUrl, logger, now, jobStreams });
}

async function finalizeShards(setup: Pick<Setup, 'outDir' | 'checkpointPath' | 'baseUrl' | 'logger' | 'now' | 'jobStreams'>): Promise<AbsorbOutcome> {
  const { outDir, checkpointPath, baseUrl, logger, now } = setup;
  const release = await folderLock(setup, SHARD_PATIENCE_MS);
  try {
    const options = { outDir, checkpointPath, baseUrl, logger, now: now(), keepOf: keepOf(setup) };
    return await absorbShards({ ...options, requireComplete: true });
  } finally {
    await release();
  }
}
