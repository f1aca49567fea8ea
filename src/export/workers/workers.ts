import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { CheckpointError, UsageError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { OutputStore } from '../../output/store.js';
import { type Checkpoint, checkpointFromValue, checkStateValue, isComplete, type Manifest, pairKey, parseCheckpoint, parseJson, readManifestFile, reconcile } from '../state/index.js';

/**
 * Scale-out: k workers share one export. The (stream, partition) pairs of the job are dealt
 * round-robin to workers 0..k-1; each worker drains its pairs with its own checkpoint and manifest
 * and under its own lock, in one output folder:
 *
 *   <out>/_shards/plan.json                               the run being shared, and k
 *   <out>/_shards/shard-<i>-of-<k>.lock
 *   <out>/_shards/<plan id>/shard-<i>-of-<k>.checkpoint.json   .../shard-<i>-of-<k>.manifest.json
 *
 * The plan is the output folder's checkpoint at the moment the sharded run started (any progress it
 * had included), written by the first worker under the folder's lock. Merging the workers' files back into
 * the folder's checkpoint and manifest ends the sharded run: see finalize.ts.
 */
export const WORKERS_DIR = '_shards';
export const SHARED_RUN_FILE = 'plan.json';

/** This worker: number `index` (0-based, as Kubernetes' JOB_COMPLETION_INDEX) of `count`. */
export interface WorkerSpec {
  index: number;
  count: number;
}

export const MAX_WORKERS = 1000;

/** `I/K`, I from 0 to K-1. */
export function parseWorker(value: string, flag = '--shard'): WorkerSpec {
  const match = /^(\d+)\/(\d+)$/.exec(value.trim());
  const index = Number(match?.[1]);
  const count = Number(match?.[2]);
  if (match === null || count < 1 || count > MAX_WORKERS || index >= count) {
    throw new UsageError(
      `${flag} '${value}': expected I/K with K from 1 to ${MAX_WORKERS} and I from 0 to K-1 (shard I of K, 0-based like JOB_COMPLETION_INDEX), e.g. 0/4.`,
    );
  }
  return { index, count };
}

/**
 * This worker's index and count from `--shard I/K`, or `--shards K` and the JOB_COMPLETION_INDEX that
 * Kubernetes sets in each pod of an Indexed Job. Undefined when neither flag is given.
 */
export function resolveWorker(
  flags: { shard?: string | undefined; shards?: string | undefined },
  env: NodeJS.ProcessEnv,
): WorkerSpec | undefined {
  const fromEnv = env.JOB_COMPLETION_INDEX;
  if (flags.shard !== undefined && flags.shards !== undefined) {
    throw new UsageError('--shard I/K and --shards K are two ways to say the same thing: give one.');
  }
  if (flags.shard !== undefined) {
    const spec = parseWorker(flags.shard);
    if (fromEnv !== undefined && fromEnv !== '' && Number(fromEnv) !== spec.index) {
      throw new UsageError(
        `--shard ${flags.shard} says shard ${spec.index}, but JOB_COMPLETION_INDEX is ${fromEnv}: in an Indexed Job, pass --shards ${spec.count} and let the index come from the pod.`,
      );
    }
    return spec;
  }
  if (flags.shards === undefined) return undefined;
  if (fromEnv === undefined || fromEnv === '') {
    throw new UsageError(
      `--shards ${flags.shards} takes this worker's index from JOB_COMPLETION_INDEX (set by Kubernetes in an Indexed Job), which is not set: outside Kubernetes, pass --shard I/${flags.shards}.`,
    );
  }
  if (!/^\d+$/.test(flags.shards)) throw new UsageError(`--shards expects a whole number of shards, got '${flags.shards}'.`);
  return parseWorker(`${fromEnv}/${flags.shards}`, `JOB_COMPLETION_INDEX=${fromEnv} with --shards`);
}

export function workerName(spec: WorkerSpec): string {
  return `shard-${spec.index}-of-${spec.count}`;
}

const planSchema = z.strictObject({
  version: z.literal(1),
  /** Names the folder of this run's worker files, so files of an earlier sharded run never mix in. */
  id: z.string().regex(/^[0-9a-f]{16}$/),
  count: z.number().int().min(1).max(MAX_WORKERS),
  createdAt: z.string(),
  /** The streams split among the workers, in order. */
  streams: z.array(z.string()).min(1),
  /** The output folder's checkpoint when the sharded run started. */
  checkpoint: z.unknown(),
});

export interface SharedRun extends Omit<z.output<typeof planSchema>, 'checkpoint'> {
  checkpoint: Checkpoint;
}

export function newSharedRun(
  count: number,
  streams: readonly string[],
  checkpoint: Checkpoint,
  now: string,
): SharedRun {
  return { version: 1, id: randomBytes(8).toString('hex'), count, createdAt: now, streams: [...streams], checkpoint };
}

export const SHARED_RUN_KEY = `${WORKERS_DIR}/${SHARED_RUN_FILE}`;

/** The files (keys) of one worker of a plan. */
export function workerKeys(plan: Pick<SharedRun, 'id' | 'count'>, index: number) {
  const base = `${WORKERS_DIR}/${plan.id}/${workerName({ index, count: plan.count })}`;
  return { checkpoint: `${base}.checkpoint.json`, manifest: `${base}.manifest.json` };
}

export function workerLockKey(spec: WorkerSpec): string {
  return `${WORKERS_DIR}/${workerName(spec)}.lock`;
}

export async function readSharedRun(store: OutputStore): Promise<SharedRun | undefined> {
  const text = await store.getText(SHARED_RUN_KEY);
  if (text === undefined) return undefined;
  const path = store.where(SHARED_RUN_KEY);
  const plan = checkStateValue(parseJson(text, path), path, planSchema, 'a bulk-extract shard plan');
  return { ...plan, checkpoint: checkpointFromValue(plan.checkpoint, path) };
}

export async function writeSharedRun(store: OutputStore, plan: SharedRun): Promise<void> {
  await store.putText(SHARED_RUN_KEY, `${JSON.stringify(plan, null, 2)}\n`);
}

/** The (stream, partition) pairs of a plan in order: pair j belongs to worker j mod k. */
export function pairsOf(plan: Pick<SharedRun, 'streams' | 'checkpoint'>): { stream: string; m: number }[] {
  return plan.streams.flatMap((stream) => {
    const partitions = plan.checkpoint.streams[stream]?.partitions ?? 0;
    return Array.from({ length: partitions }, (_, i) => ({ stream, m: i + 1 }));
  });
}

/** `stream/m` keys of the pairs of worker `index`. */
export function pairsOfWorker(plan: Pick<SharedRun, 'streams' | 'checkpoint' | 'count'>, index: number): Set<string> {
  return new Set(
    pairsOf(plan)
      .filter((_, j) => j % plan.count === index)
      .map((pair) => pairKey(pair.stream, pair.m)),
  );
}

/** A worker's starting checkpoint: the plan's streams with only the worker's partitions. */
export function workerCheckpoint(plan: SharedRun, index: number): Checkpoint {
  const mine = pairsOfWorker(plan, index);
  return {
    ...plan.checkpoint,
    streams: Object.fromEntries(
      plan.streams.flatMap((name) => {
        const state = plan.checkpoint.streams[name];
        if (state === undefined) return [];
        const parts = Object.fromEntries(
          Object.entries(state.parts).filter(([m]) => mine.has(pairKey(name, Number(m)))),
        );
        return [[name, { ...state, parts }]];
      }),
    ),
  };
}

/** A worker's starting manifest: the folder's, with only the files of the worker's partitions. */
export function workerManifest(manifest: Manifest, plan: SharedRun, index: number, now: string): Manifest {
  const mine = pairsOfWorker(plan, index);
  return {
    ...manifest,
    state: 'running',
    startedAt: now,
    requests: 0,
    retries: 0,
    throttled: 0,
    files: manifest.files.filter((file) => mine.has(pairKey(file.stream, file.m))),
  };
}

/** What reading a worker's files takes. */
export interface WorkerFilesContext {
  store: OutputStore;
  plan: SharedRun;
  /** The output folder's manifest: a worker that has none of its own starts from its share of it. */
  root: Manifest;
  now: string;
  logger: Logger;
}

/** A worker's checkpoint and manifest as it left them. */
export interface WorkerRecords {
  /** Whether the worker has written its checkpoint. */
  started: boolean;
  checkpoint: Checkpoint;
  /** Its manifest, reconciled with its checkpoint. */
  manifest: Manifest;
}

/**
 * Worker `index`'s files as it left them; a worker never started is its part of the plan,
 * untouched. Files written for another run than the plan's are refused.
 */
export async function readWorker(context: WorkerFilesContext, index: number): Promise<WorkerRecords> {
  const { store, plan } = context;
  const keys = workerKeys(plan, index);
  const checkpointText = await store.getText(keys.checkpoint);
  const checkpoint =
    checkpointText === undefined
      ? workerCheckpoint(plan, index)
      : parseCheckpoint(checkpointText, store.where(keys.checkpoint), 'some');
  for (const [name, state] of Object.entries(checkpoint.streams)) {
    const planned = plan.checkpoint.streams[name];
    const sameRun = planned?.run === state.run && JSON.stringify(planned.window) === JSON.stringify(state.window);
    if (!sameRun) {
      throw new CheckpointError(
        `${store.where(keys.checkpoint)}: stream '${name}' is not at the run of ${store.where(SHARED_RUN_KEY)}; the worker's files were not written for this plan. Move the ${WORKERS_DIR} folder away to start the sharded run over.`,
      );
    }
  }
  const manifest = await readWorkerManifest(context, keys.manifest, index);
  return { started: checkpointText !== undefined, checkpoint, manifest: reconcile(manifest, checkpoint) };
}

/**
 * A worker's manifest as it left it; absent (never started) or damaged, its share of the
 * folder's manifest. A damaged one loses the list of the worker's new files, which the resume then
 * reports as missing against its checkpoint, rather than going on without them.
 */
async function readWorkerManifest(context: WorkerFilesContext, key: string, index: number): Promise<Manifest> {
  const { store, root, plan, now, logger } = context;
  const manifest = await readManifestFile(store, key, (damaged) => {
    logger.warn({ path: store.where(key) }, `a shard manifest is damaged, so its file list starts from the folder's manifest: ${damaged.message}`);
  });
  if (manifest !== undefined) return { ...manifest, state: 'running', startedAt: now };
  return workerManifest(root, plan, index, now);
}

/** Whether every partition of the worker's checkpoint is drained. */
export function workerComplete(checkpoint: Checkpoint): boolean {
  return Object.values(checkpoint.streams).every(isComplete);
}
