import type { JobConfig } from '../config/load-config.js';
import { CheckpointError } from '../errors.js';
import type { Logger } from '../log.js';
import { type Clock, systemClock } from '../util/clock.js';
import { findDrift, parseCheckpoint, streamOf } from './checkpoint.js';
import { Committer } from './committer.js';
import { type AbsorbOutcome, absorbShards } from './finalize.js';
import type { OutputStore } from '../output/store.js';
import { reconcile } from './manifest.js';
import { openOutput } from './output-target.js';
import { planPartitions, planStreams } from './plan.js';
import { assertShardsPresent, prepareOutput, readManifest } from './prepare-output.js';
import {
  newPlan,
  pairKey,
  pairsOf,
  pairsOfShard,
  PLAN_KEY,
  readPlan,
  SHARDS_DIR,
  shardCheckpoint,
  shardKeys,
  shardLockKey,
  readShardManifest,
  type ShardPlan,
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
  const { store, baseUrl, streams, logger, clock, now } = setup;
  // A finalize holds every shard's lock for a moment: wait that out rather than fail.
  const what = `shard ${spec.index}/${spec.count} of ${store.location}`;
  const release = await store.lock(shardLockKey(spec), what, { patienceMs: 60_000 });
  try {
    const plan = (await readPlan(store)) ?? (await createPlan(setup, spec.count));
    if (plan.count !== spec.count) {
      throw new CheckpointError(
        `${store.where(PLAN_KEY)}: the sharded run in progress has ${plan.count} shards, this worker was given ${spec.count}. Run it with --shards ${plan.count}; a different number of shards can start once it is finalized.`,
      );
    }
    const names = streams.map((s) => s.name);
    const drift = findDrift(plan.checkpoint, baseUrl, streams);
    if (names.join() !== plan.streams.join()) {
      drift.unshift(`streams: ${plan.streams.join(', ')} in the sharded run, ${names.join(', ')} in the config`);
    }
    if (drift.length > 0) {
      throw new CheckpointError(
        `The job's settings differ from the sharded run in progress (${store.where(PLAN_KEY)}), so this shard would mix two different exports:\n  - ${drift.join('\n  - ')}\nRestore the settings to go on.`,
      );
    }
    const keys = shardKeys(plan, spec.index);
    const text = await store.getText(keys.checkpoint);
    const checkpoint =
      text === undefined ? shardCheckpoint(plan, spec.index) : parseCheckpoint(text, store.where(keys.checkpoint));
    const root = await readManifest(store, baseUrl, logger);
    const own = await readShardManifest(store, keys.manifest, root, plan, spec.index, now(), logger);
    const manifest = reconcile(own, checkpoint);
    await assertShardsPresent(store, checkpoint, manifest, names);
    await setup.beforeWrite(plan.checkpoint);
    const committer = new Committer({
      store,
      checkpointKey: keys.checkpoint,
      manifestKey: keys.manifest,
      checkpoint,
      manifest,
      clock,
    });
    await committer.save();
    const mine = pairsOfShard(plan, spec.index);
    const plans = planPartitions(streams, (name) => streamOf(plan.checkpoint, name)).filter((p) =>
      mine.has(pairKey(p.stream, p.m)),
    );
    return { committer, manifest, plans, resumed: text !== undefined, idle: [], damaged: new Map(), release };
  } catch (error) {
    await release();
    throw error;
  }
}

/**
 * The plan of a new sharded run, written under the output folder's lock: the folder is readied
 * exactly as for a run without shards (resumed, or the next incremental window opened), and that
 * checkpoint is shared out. Another shard may have written it while this one waited for the lock.
 */
async function createPlan(setup: Setup, count: number): Promise<ShardPlan> {
  const { store, checkpointKey, baseUrl, streams, logger, clock, now } = setup;
  const release = await folderLock(store, SHARD_PATIENCE_MS);
  try {
    const existing = await readPlan(store);
    if (existing !== undefined) return existing;
    const prepared = await prepareOutput({ store, checkpointKey, baseUrl, streams, fresh: false, now: now(), logger });
    await setup.beforeWrite(prepared.checkpoint);
    const { checkpoint, manifest } = prepared;
    const committer = new Committer({ store, checkpointKey, checkpoint, manifest, clock });
    await prepared.apply(() => committer.save());
    await removeEarlierShardFiles(store);
    const plan = newPlan(count, streams.map((s) => s.name), committer.state, now());
    await writePlan(store, plan);
    logger.info({ shards: count, pairs: pairsOf(plan).length, plan: plan.id }, `planned a sharded run of ${count} shards`);
    return plan;
  } finally {
    await release();
  }
}

/** Files of an earlier sharded run whose end was interrupted (`_shards/<plan id>/`): nothing reads them any more. */
async function removeEarlierShardFiles(store: OutputStore): Promise<void> {
  const ids = new Set(
    (await store.list(`${SHARDS_DIR}/`)).flatMap((key) => {
      const [, id, ...rest] = key.split('/');
      return id !== undefined && rest.length > 0 ? [id] : [];
    }),
  );
  for (const id of ids) await store.removeTree(`${SHARDS_DIR}/${id}`);
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
  const { store, checkpointKey } = await openOutput(config, logger);
  const now = () => new Date(clock.now()).toISOString();
  const jobStreams = planStreams(config.streams, config.output.formats);
  try {
    return await finalizeShards({ store, checkpointKey, baseUrl: config.source.baseUrl, logger, now, jobStreams });
  } finally {
    await store.close();
  }
}

async function finalizeShards(
  setup: Pick<Setup, 'store' | 'checkpointKey' | 'baseUrl' | 'logger' | 'now' | 'jobStreams'>,
): Promise<AbsorbOutcome> {
  const { store, checkpointKey, baseUrl, logger, now } = setup;
  const release = await folderLock(store, SHARD_PATIENCE_MS);
  try {
    const options = { store, checkpointKey, baseUrl, logger, now: now(), keepOf: keepOf(setup) };
    return await absorbShards({ ...options, requireComplete: true });
  } finally {
    await release();
  }
}
