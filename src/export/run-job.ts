import { join } from 'node:path';
import type { JobConfig } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { AdaptiveLimiter } from '../http/adaptive-limiter.js';
import { createPlatformClient } from '../http/create-client.js';
import type { PlatformClient } from '../http/platform-client.js';
import type { Logger } from '../log.js';
import { schemaColumns } from '../sink/parquet/schemas.js';
import { shardOpener } from '../sink/open-shard.js';
import { type Clock, systemClock } from '../util/clock.js';
import { type Checkpoint, isComplete, sentBounds, streamOf } from './checkpoint.js';
import { SUCCESS_FILE } from './layout.js';
import type { Manifest, RunState } from './manifest.js';
import { Mirror, writeOutputText } from './mirror.js';
import { openStore, outputPaths } from './output-target.js';
import { exportPartition, type PartitionOutcome } from './partition-worker.js';
import { type PartitionPlan, planStreams } from './plan.js';
import { ensureDir } from './prepare-output.js';
import { sealRun } from './seal-run.js';
import type { ShardSpec } from './shard.js';
import { type FinalizeResult, finalizeIfLast, startShard, startWhole } from './start-run.js';

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
