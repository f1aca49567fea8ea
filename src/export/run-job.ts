import { mkdir, readdir, rm } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { JobConfig } from '../config/load-config.js';
import { CheckpointError, UsageError } from '../errors.js';
import { AdaptiveLimiter } from '../http/adaptive-limiter.js';
import { createPlatformClient } from '../http/create-client.js';
import type { PlatformClient } from '../http/platform-client.js';
import type { Logger } from '../log.js';
import { schemaColumns } from '../sink/parquet/schemas.js';
import { shardOpener } from '../sink/open-shard.js';
import { type Clock, systemClock } from '../util/clock.js';
import { writeFileAtomic } from '../util/durable-file.js';
import { type Checkpoint, findDrift, isComplete, parseCheckpoint, sentBounds, streamOf } from './checkpoint.js';
import { Committer } from './committer.js';
import { type AbsorbOutcome, absorbShards } from './finalize.js';
import { CHECKPOINT_FILE, LOCK_FILE, MANIFEST_FILE, SUCCESS_FILE } from './layout.js';
import { Mirror, writeOutputText } from './mirror.js';
import type { OutputStore } from '../output/store.js';
import { acquireLock, LockedError } from './lock.js';
import { type Manifest, reconcile, type RunState } from './manifest.js';
import { exportPartition, type PartitionOutcome } from './partition-worker.js';
import { type PartitionPlan, planPartitions, planStreams, type StreamPlan } from './plan.js';
import { assertShardsPresent, ensureDir, prepareOutput, readIfExists, readManifest } from './prepare-output.js';
import { sealRun } from './seal-run.js';
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
  shardManifest,
  type ShardPlan,
  shardPaths,
  type ShardSpec,
  writePlan,
} from './shard.js';

export interface RunOptions {
  config: JobConfig;
  /** Forget earlier progress of the planned streams. */
  fresh?: boolean;
  /** Run only this stream. */
  stream?: string | undefined;
  logger: Logger;
  /** Aborting it stops fetching; what is complete is committed. */
  signal?: AbortSignal;
  clock?: Clock;
  /** This worker's shard of a job split among several (--shard I/K). */
  shard?: ShardSpec | undefined;
  /** Called with the client once it exists, for progress reporting. */
  onStart?: (run: RunHandle) => void;
}

export interface RunHandle {
  client: PlatformClient;
  plans: readonly PartitionPlan[];
  rows(): number;
  partitionsDone(): number;
}

export interface RunResult {
  state: RunState;
  manifest: Manifest;
  /** Errors of the partitions that failed. */
  errors: { stream: string; m: number; error: unknown }[];
  resumed: boolean;
  /** Rows written by this run (the manifest counts every run's). */
  rows: number;
  /** A shard that completed: whether it ended the sharded run, or which shards it waits for. */
  finalize?: FinalizeResult;
}

export interface FinalizeResult {
  finalized: boolean;
  waitingFor: number[];
}

/** For the log: what a stream's run reads (lastUpdatedTime bounds as sent) and its run folder. */
function windowOf(checkpoint: Checkpoint, name: string): Record<string, unknown> {
  const state = streamOf(checkpoint, name);
  if (state.window === null) return {};
  const { minLastUpdatedTime: min, maxLastUpdatedTime: max } = sentBounds(state.window);
  return {
    minLastUpdatedTime: min === null ? undefined : new Date(min).toISOString(),
    maxLastUpdatedTime: new Date(max).toISOString(),
    ...(state.run === null ? {} : { run: state.run }),
  };
}

/** Output and checkpoint paths of a job, resolved against the working directory. */
export function outputPaths(config: JobConfig): { outDir: string; checkpointPath: string; s3: boolean } {
  const s3 = isS3Url(config.output.dir);
  // An s3:// output is written through a local staging folder, which holds what the store does.
  const staging = () =>
    config.output.s3?.staging ??
    join(tmpdir(), 'bulk-extract', createHash('sha256').update(config.output.dir).digest('hex').slice(0, 16));
  const outDir = resolve(s3 ? staging() : config.output.dir);
  return { outDir, checkpointPath: resolve(config.checkpoint ?? join(outDir, CHECKPOINT_FILE)), s3 };
}

export function isS3Url(dir: string): boolean {
  return dir.startsWith('s3://');
}

/** The object store of an s3:// output.dir; the AWS SDK is loaded only then. */
export async function openStore(config: JobConfig, logger: Logger): Promise<OutputStore> {
  // The SDK version is pinned (the last for Node 20): its warning that later ones need Node 22 is noise here.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const { createS3Store } = await import('../output/s3-store.js');
  const s3 = config.output.s3;
  return createS3Store({
    url: config.output.dir,
    endpoint: s3?.endpoint,
    region: s3?.region,
    forcePathStyle: s3?.forcePathStyle,
    partSizeBytes: (s3?.partSizeMiB ?? 8) * 1024 * 1024,
    logger,
  });
}

/**
 * The staging folder of an s3:// export starts each run as a copy of the store's checkpoint and
 * manifest only: the store is the output, and what the folder held before (shards not uploaded
 * when a run stopped) was never committed.
 */
async function stage(outDir: string, mirror: Mirror): Promise<void> {
  for (const entry of await readdir(outDir)) {
    if (entry !== LOCK_FILE) await rm(join(outDir, entry), { recursive: true, force: true });
  }
  for (const name of [CHECKPOINT_FILE, MANIFEST_FILE]) {
    const text = await mirror.store.getText(name);
    if (text !== undefined) await writeFileAtomic(join(outDir, name), text);
  }
}

/**
 * Runs an export: every planned partition drains into shards under one shared request limiter;
 * progress survives interruption in the checkpoint; `_SUCCESS` is written only when every stream
 * of the job is complete.
 */
export async function runJob(options: RunOptions): Promise<RunResult> {
  const { config, logger, signal = new AbortController().signal, clock = systemClock, shard } = options;
  const streams = planStreams(config.streams, config.output.formats, options.stream);
  const { outDir, checkpointPath, s3 } = outputPaths(config);
  const now = () => new Date(clock.now()).toISOString();
  if (shard !== undefined && s3) {
    throw new UsageError(
      '--shard needs an output folder that every worker shares (a ReadWriteMany volume); with an s3:// output.dir, run one worker.',
    );
  }
  if (shard !== undefined && (options.fresh === true || options.stream !== undefined)) {
    throw new UsageError(
      `--shard splits all of the job's streams among ${shard.count} workers; ${options.fresh === true ? '--fresh' : '--stream'} cannot be combined with it. Start over by running once without --shard (with --fresh), or give the shards another output.dir.`,
    );
  }
  // The client first: a bad source setting fails here, before there is a lock to release.
  const client = createPlatformClient(config.source, {
    logger,
    clock,
    configFile: config.file,
    limiter: new AdaptiveLimiter({
      maxConcurrency: config.source.concurrency,
      maxRequestsPerSecond: config.source.maxRequestsPerSecond,
      clock,
      logger,
    }),
  });
  let release = async () => {};
  let mirror: Mirror | undefined;
  try {
    if (s3) mirror = new Mirror(outDir, await openStore(config, logger));
    const setup = { outDir, checkpointPath, baseUrl: config.source.baseUrl, streams, logger, clock, now, mirror };
    await ensureDir(outDir);
    const start =
      shard === undefined ? await startWhole(setup, options.fresh ?? false) : await startShard(setup, shard);
    release = start.release;
    const { committer, plans } = start;
    logger.info(
      {
        outDir,
        ...(shard === undefined ? {} : { shard: `${shard.index}/${shard.count}` }),
        streams: streams.map((s) => ({ name: s.name, ...windowOf(committer.state, s.name) })),
        partitions: plans.length,
        resumed: start.resumed,
      },
      start.resumed ? 'resuming export' : 'starting export',
    );

    let rows = 0;
    let done = 0;
    options.onStart?.({ client, plans, rows: () => rows, partitionsDone: () => done });
    const context = {
      outDir,
      client,
      committer,
      openShard: shardOpener(outDir, config.output),
      limits: config.output.shard,
      mirror,
      signal,
      logger,
      onRows: (count: number) => {
        rows += count;
      },
    };
    const outcomes = await Promise.allSettled(
      plans.map(async (plan): Promise<PartitionOutcome> => {
        const outcome = await exportPartition(context, plan);
        if (outcome !== 'interrupted') done++;
        return outcome;
      }),
    );

    const errors = outcomes.flatMap((outcome, i) =>
      outcome.status === 'rejected'
        ? [{ stream: plans[i]?.stream ?? '?', m: plans[i]?.m ?? 0, error: outcome.reason as unknown }]
        : [],
    );
    for (const { stream, m, error } of errors) {
      logger.error({ stream, partition: m, err: error }, `partition failed: ${(error as Error).message}`);
    }
    const interrupted = outcomes.some((o) => o.status === 'fulfilled' && o.value === 'interrupted');
    // A shard's checkpoint holds its own partitions only: complete when they are.
    const jobStreams = shard === undefined ? planStreams(config.streams, config.output.formats) : streams;
    const complete = jobStreams.every(({ name }) => {
      const state = committer.state.streams[name];
      return state !== undefined && isComplete(state);
    });
    const state: RunState = errors.length > 0 ? 'failed' : interrupted ? 'interrupted' : complete ? 'complete' : 'running';
    const manifest = await committer.finish(state, {
      requests: client.stats.requests,
      retries: client.stats.retries,
      throttled: client.stats.throttled,
      schema: Object.fromEntries(
        [...new Set(streams.filter((s) => s.formats.includes('parquet')).map((s) => s.resource))].map((r) => [
          r,
          schemaColumns(r),
        ]),
      ),
    });
    const result: RunResult = { state, manifest, errors, resumed: start.resumed, rows };
    if (shard === undefined) {
      for (const stream of streams) {
        const streamState = streamOf(committer.state, stream.name);
        await sealRun(outDir, config.source.baseUrl, stream.name, streamState, manifest.files, mirror);
      }
      if (state === 'complete') await writeOutputText(join(outDir, SUCCESS_FILE), '', mirror);
    } else if (state === 'complete') {
      // The shard's lock goes first: the merge takes every shard's lock.
      await release();
      release = async () => {};
      result.finalize = await finalizeIfLast(setup);
    }
    return result;
  } finally {
    await client.close();
    await release();
    await mirror?.store.close();
  }
}

interface Setup {
  outDir: string;
  checkpointPath: string;
  baseUrl: string;
  streams: readonly StreamPlan[];
  logger: Logger;
  clock: Clock;
  now: () => string;
  mirror?: Mirror | undefined;
}

interface Started {
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
async function startWhole(setup: Setup, fresh: boolean): Promise<Started> {
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
async function startShard(setup: Setup, spec: ShardSpec): Promise<Started> {
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
    const own = await readIfExists(paths.manifest);
    const root = await readManifest(outDir, baseUrl, now(), logger);
    const manifest = reconcile(
      own === undefined ? shardManifest(root, plan, spec.index, now()) : { ...(JSON.parse(own) as Manifest), state: 'running', startedAt: now() },
      checkpoint,
    );
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
      return await acquireLock(shardLockPath(outDir, spec), `shard ${spec.index}/${spec.count} of ${outDir}`, logger);
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
async function finalizeIfLast(setup: Setup): Promise<FinalizeResult> {
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
