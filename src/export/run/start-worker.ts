import { CheckpointError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { findDrift, pairKey, removeOwnedTree, streamOf } from '../state/index.js';
import { Committer } from '../partition/index.js';
import { WORKER_PATIENCE_MS } from './finalize.js';
import type { OutputStore } from '../../output/index.js';
import { planPartitions } from '../plan/index.js';
import { prepareOutput } from './prepare-output.js';
import { assertShardsPresent, readManifest } from '../check/index.js';
import {
  newAgreement,
  OLDER_WORKERS_PLACE,
  pairsOf,
  pairsOfWorker,
  readAgreement,
  readWorker,
  type WorkersAgreement,
  workerKeys,
  workerLockKey,
  WORKERS_PLACE,
  type WorkersPlace,
  workersPlace,
  type WorkerSpec,
  writeAgreement,
} from '../workers/index.js';
import { folderLock, lockWaits, type Setup, type Started } from './start-run.js';

/**
 * Worker `spec` of a split job, under the worker's own lock: the run is the one of the folder's
 * agreement, which the first worker to start writes (from the folder's checkpoint, as a run without
 * workers would start); this worker drains its pairs of it, with its own checkpoint and manifest.
 */
export async function startWorker(setup: Setup, spec: WorkerSpec): Promise<Started> {
  const { store, baseUrl, streams, logger, clock, now } = setup;
  // A finalize holds every worker's lock for a moment: wait that out rather than fail.
  const what = `worker ${spec.index}/${spec.count} of ${store.location}`;
  const place = await workersPlace(store);
  const lockKey = workerLockKey(place, spec);
  const release = await store.lock(lockKey, what, { patienceMs: 60_000, ...lockWaits(clock) });
  try {
    const agreement = (await readAgreement(store, place)) ?? (await createAgreement(setup, spec.count, place));
    if (agreement.count !== spec.count) {
      throw new CheckpointError(
        `${store.where(place.agreementKey)}: the split job in progress has ${agreement.count} workers, this worker was given ${spec.count}. Run it with --shards ${agreement.count}; a different number of workers can start once it is finalized.`,
      );
    }
    const names = streams.map((s) => s.name);
    const drift = findDrift(agreement.checkpoint, baseUrl, streams);
    if (names.join() !== agreement.streams.join()) {
      drift.unshift(`streams: ${agreement.streams.join(', ')} in the split job, ${names.join(', ')} in the config`);
    }
    if (drift.length > 0) {
      throw new CheckpointError(
        `The job's settings differ from the split job in progress (${store.where(place.agreementKey)}), so this worker would mix two different exports:\n  - ${drift.join('\n  - ')}\nRestore the settings to go on.`,
      );
    }
    const keys = workerKeys(agreement, spec.index);
    const root = await readManifest(store, baseUrl, logger);
    const context = { store, agreement, root, now: now(), logger };
    const { started, checkpoint, manifest } = await readWorker(context, spec.index);
    await assertShardsPresent(store, checkpoint, manifest, names);
    await setup.beforeWrite(agreement.checkpoint);
    const committer = new Committer({
      store,
      checkpointKey: keys.checkpoint,
      manifestKey: keys.manifest,
      checkpoint,
      manifest,
      clock,
    });
    await committer.save();
    const mine = pairsOfWorker(agreement, spec.index);
    const plans = planPartitions(streams, (name) => streamOf(agreement.checkpoint, name)).filter((p) =>
      mine.has(pairKey(p.stream.name, p.m)),
    );
    return { committer, manifest, plans, resumed: started, idle: [], damaged: new Map(), lockKey, release };
  } catch (error) {
    await release();
    throw error;
  }
}

/**
 * The agreement of a new split job, written under the output folder's lock: the folder is readied
 * exactly as for a run without workers (resumed, or the next incremental window opened), and that
 * checkpoint is shared out. Another worker may have written it while this one waited for the lock.
 */
async function createAgreement(setup: Setup, count: number, place: WorkersPlace): Promise<WorkersAgreement> {
  const { store, checkpointKey, baseUrl, streams, logger, clock, now } = setup;
  const release = await folderLock(store, clock, WORKER_PATIENCE_MS);
  try {
    const existing = await readAgreement(store, place);
    if (existing !== undefined) return existing;
    const prepared = await prepareOutput({ store, checkpointKey, baseUrl, streams, fresh: false, now: now(), logger });
    await setup.beforeWrite(prepared.checkpoint);
    const { checkpoint, manifest } = prepared;
    const committer = new Committer({ store, checkpointKey, checkpoint, manifest, clock });
    await prepared.apply(() => committer.save());
    await removeEarlierWorkerFiles(store, logger);
    const agreement = newAgreement(count, streams.map((s) => s.name), committer.state, now(), place);
    await writeAgreement(store, agreement);
    logger.info({ workers: count, pairs: pairsOf(agreement).length, agreement: agreement.id }, `planned a split job of ${count} workers`);
    return agreement;
  } finally {
    await release();
  }
}

/** Files of an earlier split job whose end was interrupted (`_workers/<id>/`): nothing reads them any more. */
async function removeEarlierWorkerFiles(store: OutputStore, logger: Logger): Promise<void> {
  for (const { dir } of [WORKERS_PLACE, OLDER_WORKERS_PLACE]) {
    const ids = new Set(
      (await store.list(`${dir}/`)).flatMap((key) => {
        const [, id, ...rest] = key.split('/');
        return id !== undefined && rest.length > 0 ? [id] : [];
      }),
    );
    for (const id of ids) await removeOwnedTree(store, `${dir}/${id}`, logger);
  }
}
