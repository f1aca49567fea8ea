import { CheckpointError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { findDrift, pairKey, removeOwnedTree, streamOf } from '../state/index.js';
import { Committer } from './committer.js';
import { WORKER_PATIENCE_MS } from './finalize.js';
import type { OutputStore } from '../../output/store.js';
import { planPartitions } from '../plan/index.js';
import { prepareOutput } from './prepare-output.js';
import { assertShardsPresent, readManifest } from '../check/index.js';
import {
  newSharedRun,
  pairsOf,
  pairsOfWorker,
  SHARED_RUN_KEY,
  readSharedRun,
  WORKERS_DIR,
  readWorker,
  workerKeys,
  workerLockKey,
  type SharedRun,
  type WorkerSpec,
  writeSharedRun,
} from '../workers/index.js';
import { folderLock, type Setup, type Started } from './start-run.js';

/**
 * Worker `spec` of a sharded run, under the worker's own lock: the run is the one of the folder's
 * plan, which the first worker to start writes (from the folder's checkpoint, as a run without
 * workers would start); this worker drains its pairs of it, with its own checkpoint and manifest.
 */
export async function startWorker(setup: Setup, spec: WorkerSpec): Promise<Started> {
  const { store, baseUrl, streams, logger, clock, now } = setup;
  // A finalize holds every worker's lock for a moment: wait that out rather than fail.
  const what = `shard ${spec.index}/${spec.count} of ${store.location}`;
  const release = await store.lock(workerLockKey(spec), what, { patienceMs: 60_000 });
  try {
    const plan = (await readSharedRun(store)) ?? (await createSharedRun(setup, spec.count));
    if (plan.count !== spec.count) {
      throw new CheckpointError(
        `${store.where(SHARED_RUN_KEY)}: the sharded run in progress has ${plan.count} shards, this worker was given ${spec.count}. Run it with --shards ${plan.count}; a different number of shards can start once it is finalized.`,
      );
    }
    const names = streams.map((s) => s.name);
    const drift = findDrift(plan.checkpoint, baseUrl, streams);
    if (names.join() !== plan.streams.join()) {
      drift.unshift(`streams: ${plan.streams.join(', ')} in the sharded run, ${names.join(', ')} in the config`);
    }
    if (drift.length > 0) {
      throw new CheckpointError(
        `The job's settings differ from the sharded run in progress (${store.where(SHARED_RUN_KEY)}), so this shard would mix two different exports:\n  - ${drift.join('\n  - ')}\nRestore the settings to go on.`,
      );
    }
    const keys = workerKeys(plan, spec.index);
    const root = await readManifest(store, baseUrl, logger);
    const { started, checkpoint, manifest } = await readWorker({ store, plan, root, now: now(), logger }, spec.index);
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
    const mine = pairsOfWorker(plan, spec.index);
    const plans = planPartitions(streams, (name) => streamOf(plan.checkpoint, name)).filter((p) =>
      mine.has(pairKey(p.stream.name, p.m)),
    );
    return { committer, manifest, plans, resumed: started, idle: [], damaged: new Map(), release };
  } catch (error) {
    await release();
    throw error;
  }
}

/**
 * The plan of a new sharded run, written under the output folder's lock: the folder is readied
 * exactly as for a run without workers (resumed, or the next incremental window opened), and that
 * checkpoint is shared out. Another worker may have written it while this one waited for the lock.
 */
async function createSharedRun(setup: Setup, count: number): Promise<SharedRun> {
  const { store, checkpointKey, baseUrl, streams, logger, clock, now } = setup;
  const release = await folderLock(store, WORKER_PATIENCE_MS);
  try {
    const existing = await readSharedRun(store);
    if (existing !== undefined) return existing;
    const prepared = await prepareOutput({ store, checkpointKey, baseUrl, streams, fresh: false, now: now(), logger });
    await setup.beforeWrite(prepared.checkpoint);
    const { checkpoint, manifest } = prepared;
    const committer = new Committer({ store, checkpointKey, checkpoint, manifest, clock });
    await prepared.apply(() => committer.save());
    await removeEarlierWorkerFiles(store, logger);
    const plan = newSharedRun(count, streams.map((s) => s.name), committer.state, now());
    await writeSharedRun(store, plan);
    logger.info({ shards: count, pairs: pairsOf(plan).length, plan: plan.id }, `planned a sharded run of ${count} shards`);
    return plan;
  } finally {
    await release();
  }
}

/** Files of an earlier sharded run whose end was interrupted (`_shards/<plan id>/`): nothing reads them any more. */
async function removeEarlierWorkerFiles(store: OutputStore, logger: Logger): Promise<void> {
  const ids = new Set(
    (await store.list(`${WORKERS_DIR}/`)).flatMap((key) => {
      const [, id, ...rest] = key.split('/');
      return id !== undefined && rest.length > 0 ? [id] : [];
    }),
  );
  for (const id of ids) await removeOwnedTree(store, `${WORKERS_DIR}/${id}`, logger);
}
