import type { JobConfig } from '../../config/load-config.js';
import { BulkExtractError } from '../../errors.js';
import { type Logger, silentLogger } from '../../log.js';
import { LockedError, type LockState, type OutputStore } from '../../output/index.js';
import { metadataColumnName } from '../../resources/index.js';
import {
  type Checkpoint,
  isComplete,
  LOCK_FILE,
  newCheckpoint,
  openOutput,
  pairKey,
  type PartState,
  pointWindowOf,
  type PointWindow,
  type StreamPlan,
  syncPhase,
} from '../state/index.js';
import { pairsOfWorker, readWorkersProgress, workerLockKey, type WorkersAgreement, type WorkerSpec } from '../workers/index.js';
import { firstRequest, planPartitions, planStreams } from '../plan/index.js';
import type { ListRequest, PartitionPlan } from '../partition/index.js';
import { type IdleStream, prepareOutput } from '../run/index.js';
import { restarted } from '../check/index.js';

/** What a run would do with one stream. */
export type StreamAction =
  | { kind: 'fresh' } |
  { kind: 'new' } |
  { kind: 'idle'; idle: IdleStream } |
  { kind: 'complete'; run: string | null } |
  { kind: 'start'; run: string | null } |
  { kind: 'resume'; run: string | null; done: number; partitions: number };

export interface StreamInspection {
  plan: StreamPlan;
  /** How its chains are listed (without `partition` and `cursor`): GET with a query, or POST /list with a body. */
  request: ListRequest;
  action: StreamAction;
  /** Datapoints: the point times a run reads (the checkpoint's, or a new run's), start inclusive, end exclusive. */
  pointWindow?: { start: number; end: number } | undefined;
  /** The Parquet column each of the stream's `metadataColumns` keys becomes, in their order. */
  metadataColumns?: { key: string; column: string }[] | undefined;
}

/** A worker's share of the run (--shard I/K): its chains per stream (partition numbers). */
export interface WorkerShare {
  index: number;
  count: number;
  chains: { stream: string; partitions: number[] }[];
  /** Chains of this worker, and of the run. */
  mine: number;
  total: number;
}

/** What a run of the job would do with its output, found without changing anything. */
export interface RunInspection {
  /** The output as users name it: the folder, or s3://bucket/prefix, or an Azure URL. */
  destination: string;
  /** Object storage: the credential that reaches it (never its value); absent for a folder. */
  outputCredential?: string;
  checkpointLocation: string;
  streams: StreamInspection[];
  /** Cursor chains the run drains. */
  chains: number;
  worker?: WorkerShare;
  lock: LockState;
  /** The checkpoint the run would drain (undefined when it would be refused before deciding). */
  checkpoint: Checkpoint | undefined;
  resumed: boolean;
  idle: IdleStream[];
  /** With repair: the damaged partitions it would read again, with what is wrong. */
  damaged: Map<string, string[]>;
  /** Why the run would be refused; empty when it would start. */
  refusals: BulkExtractError[];
}

/**
 * Decides what a run of `config` would do, as the run decides it, but changes nothing: it takes
 * no lock and writes no file (an s3:// output gets one probe object, written and deleted, to prove
 * the credentials can write there). The run's refusals are collected rather than thrown.
 */
export async function inspectRun(
  config: JobConfig,
  options: { only?: string | undefined; fresh?: boolean; repair?: boolean; worker?: WorkerSpec | undefined } = {},
  logger: Logger = silentLogger,
  now: string = new Date().toISOString(),
): Promise<RunInspection> {
  const { only, fresh = false, repair = false, worker } = options;
  const streams = planStreams(config.streams, config.output.formats, only, config.output.table);
  const refusals: BulkExtractError[] = [];
  const { store, checkpointKey } = await openOutput(config, logger);
  try {
    const lock = await store.lockState(LOCK_FILE).catch(collect(refusals)) ?? { state: 'free' as const };
    if (lock.state === 'held' && lock.alive) {
      const owner = lock.owner === undefined ? '' : ` (pid ${lock.owner.pid} on ${lock.owner.host}, since ${lock.owner.startedAt})`;
      refusals.push(new LockedError(`${store.location} is in use by another bulk-extract run${owner}; a run now would be refused.`));
    }
    const split = await readWorkersProgress(store, logger, now).catch(collect(refusals));
    if (split !== undefined) refusals.push(...(await runningWorkers(store, split.agreement, worker)));
    const prepared = await prepareOutput({
      store,
      checkpointKey,
      baseUrl: config.source.baseUrl,
      streams,
      fresh,
      repair,
      now,
      logger,
      recorded:
        split === undefined
          ? undefined
          : { checkpoint: split.checkpoint, manifest: restarted(split.manifest, now) },
    }).catch(collect(refusals));
    // A folder that cannot be created; a bucket the credentials cannot write to (a probe object).
    await store.probe().catch(collect(refusals));
    // A run that would be refused before deciding still shows the plan of a new run.
    const checkpoint = prepared?.checkpoint ?? newCheckpoint(config.source.baseUrl, streams, now);
    const idle = new Map((prepared?.idle ?? []).map((i) => [i.stream, i]));
    const plans = planPartitions(streams, (name) => checkpoint.streams[name] ?? { window: null, run: null });
    return {
      destination: store.location,
      ...(store.credential === undefined ? {} : { outputCredential: store.credential }),
      checkpointLocation: store.where(checkpointKey),
      streams: streams.map((plan) => ({
        plan,
        request: firstRequest(plan, checkpoint.streams[plan.name] ?? { window: null }),
        pointWindow: pointWindowIn(plan, checkpoint),
        metadataColumns: plan.metadataColumns?.map((key) => ({ key, column: metadataColumnName(key) })),
        action: fresh ? { kind: 'fresh' } : actionOf(plan, checkpoint, prepared?.resumed ?? false, idle.get(plan.name)),
      })),
      chains: plans.length,
      ...(worker === undefined ? {} : { worker: shareOf(worker, streams, plans, checkpoint) }),
      lock,
      checkpoint: prepared?.checkpoint,
      resumed: prepared?.resumed ?? false,
      idle: prepared?.idle ?? [],
      damaged: prepared?.damaged ?? new Map<string, string[]>(),
      refusals,
    };
  } finally {
    await store.close();
  }
}

/** Records a refusal and carries on with undefined; anything else is a bug and is thrown. */
function collect(refusals: BulkExtractError[]) {
  return (error: unknown): undefined => {
    if (!(error instanceof BulkExtractError)) throw error;
    refusals.push(error);
    return undefined;
  };
}

/**
 * The split job's running workers that would refuse this run. A run without --shard is refused
 * by each one running; a worker only by itself running (the others run beside it).
 */
async function runningWorkers(
  store: OutputStore,
  { place, count }: Pick<WorkersAgreement, 'place' | 'count'>,
  worker: WorkerSpec | undefined,
): Promise<BulkExtractError[]> {
  const refusals: BulkExtractError[] = [];
  for (let index = 0; index < count; index++) {
    if (worker !== undefined && worker.index !== index) continue;
    const state = await store.lockState(workerLockKey(place, { index, count }));
    if (state.state !== 'held' || !state.alive) continue;
    const refused = worker === undefined ? 'a run without --shard now' : 'a second run of it now';
    refusals.push(new LockedError(`${store.location}: worker ${index}/${count} of a split job is running; ${refused} would be refused.`));
  }
  return refusals;
}

function actionOf(
  plan: StreamPlan,
  checkpoint: Checkpoint,
  resumed: boolean,
  idle: IdleStream | undefined,
): StreamAction {
  if (idle !== undefined) return { kind: 'idle', idle };
  const state = checkpoint.streams[plan.name];
  if (state === undefined) return { kind: 'new' };
  const parts = Object.values(state.parts);
  const done = parts.filter((p) => p.done).length;
  // A run of a sync feed's changes begins at the cursors the run before ended with.
  const begun = (p: PartState) => p.nextSeq > 0 || (p.cursor !== null && syncPhase(state) !== 'changes');
  const started = parts.some(begun);
  if (isComplete(state)) return { kind: 'complete', run: state.run };
  return resumed && (started || done > 0)
    ? { kind: 'resume', run: state.run, done, partitions: parts.length }
    : { kind: 'start', run: state.run };
}

/** A new split job's share; one in progress keeps the share of its agreement (the same for equal settings). */
function shareOf(
  worker: WorkerSpec,
  streams: StreamPlan[],
  plans: PartitionPlan[],
  checkpoint: Checkpoint,
): WorkerShare {
  const mine = pairsOfWorker({ count: worker.count, streams: streams.map((s) => s.name), checkpoint }, worker.index);
  const chains = streams
    .map((s) => {
      const partitions = plans
        .filter((p) => p.stream.name === s.name && mine.has(pairKey(p.stream.name, p.m)))
        .map((p) => p.m);
      return { stream: s.name, partitions };
    })
    .filter((c) => c.partitions.length > 0);
  return { index: worker.index, count: worker.count, chains, mine: mine.size, total: plans.length };
}

/** A datapoints stream's window of point times, as the checkpoint (or a new run) pins it. */
function pointWindowIn(plan: StreamPlan, checkpoint: Checkpoint): PointWindow | undefined {
  const state = checkpoint.streams[plan.name];
  return state === undefined ? undefined : pointWindowOf(state);
}
