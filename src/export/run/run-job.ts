import { setMaxListeners } from 'node:events';
import type { JobConfig } from '../../config/load-config.js';
import { createPlatformClient } from '../../connect/index.js';
import { AdaptiveLimiter } from '../../http/adaptive-limiter.js';
import type { PlatformClient } from '../../http/platform-client.js';
import { AuthError } from '../../http/errors.js';
import { type Logger, silentLogger } from '../../log.js';
import { createShardSink, type ShardSink } from '../../sink/index.js';
import { type Clock, systemClock } from '../../util/clock.js';
import {
  assertTablesWritable,
  type Checkpoint,
  type Manifest,
  openOutput,
  pointWindowOf,
  type RunState,
  sentWindow,
  streamOf,
  type StreamPlan,
  syncField,
} from '../state/index.js';
import { countStreams, planStreams, type StreamCounts } from '../plan/index.js';
import { type EmptyRun, finishRun } from './finish-run.js';
import { drainPartition } from './drain-partition.js';
import { checkReadLimit, type PartitionContext, type PartitionOutcome, type PartitionPlan, type StreamDrain } from '../partition/index.js';
import { streamKind } from '../kinds/index.js';
import type { IdleStream } from './prepare-output.js';
import { LiveProgressFile } from './live-progress.js';
import { RunProgress, type RunHandle } from './run-progress.js';
import type { WorkerSpec } from '../workers/index.js';
import type { FinalizeResult } from './finalize.js';
import { runScope } from './run-scope.js';
import type { Started } from './start-run.js';

export interface RunOptions {
  config: JobConfig;
  /** Forget earlier progress of the planned streams. */
  fresh?: boolean;
  /** Read back the current runs' shards; read damaged partitions again from their first page. */
  repair?: boolean;
  /** Run only this stream. */
  stream?: string | undefined;
  /** Where the run logs (any pino logger). Default: nowhere; the result says what happened. */
  logger?: Logger | undefined;
  /** Aborting it stops fetching; what is complete is committed. */
  signal?: AbortSignal;
  clock?: Clock;
  /** This process as worker I of a job split among K (--shard I/K, --shards K). */
  worker?: WorkerSpec | undefined;
  /** Called once the run starts draining, for progress displays. */
  onStart?: (run: RunHandle) => void;
  /**
   * Called once, when the run holds the output (its lock taken, no other run in its way) and
   * before it changes anything. A run refused because another live run holds the output
   * (LockedError) never calls it.
   */
  onHeld?: () => Promise<void>;
}

export interface RunResult {
  state: RunState;
  manifest: Manifest;
  /** Errors of the partitions that failed. */
  errors: { stream: string; m: number; error: unknown }[];
  /** Streams this run read to their end without a row, with what their kind says of it (a window with no point). */
  empty: EmptyRun[];
  resumed: boolean;
  /** Rows written by this run (the manifest counts every run's). */
  rows: number;
  /** Planned streams that had nothing to read. */
  idle: IdleStream[];
  /** Whether the run changed the output folder; false when it was already complete (or had nothing to repair). */
  wrote: boolean;
  /** repair: the partitions found damaged and read again, with what was wrong. */
  damaged: Map<string, string[]>;
  /** A worker that completed: whether it ended the split job, or which workers it waits for. */
  finalize?: FinalizeResult;
}

/** For the log: what a stream's run reads (lastUpdatedTime bounds as sent, or point times) and its run folder. */
function windowOf(checkpoint: Checkpoint, name: string): Record<string, unknown> {
  const state = streamOf(checkpoint, name);
  if (state.window === null) return {};
  const run = state.run === null ? {} : { run: state.run };
  const iso = (ms: number) => new Date(ms).toISOString();
  const points = pointWindowOf(state);
  // Point times: start inclusive, end exclusive.
  if (points !== undefined) return { start: iso(points.start), end: iso(points.end), ...run };
  const sent = sentWindow(state);
  // Not a window of times (instances): the whole view, or the sync feed from where the last run ended.
  if (sent === null) return { ...run, ...syncField(state) };
  const { minLastUpdatedTime: min, maxLastUpdatedTime: max } = sent;
  return { minLastUpdatedTime: min === null ? undefined : iso(min), maxLastUpdatedTime: iso(max), ...run };
}

/**
 * Runs an export: every planned partition drains into shards under one shared request limiter;
 * progress survives interruption in the checkpoint; `_SUCCESS` is written only when every stream
 * of the job is complete. A run that is refused (drift, damage, a lock, a refused credential)
 * throws before it changes anything in the output folder.
 */
export async function runJob(options: RunOptions): Promise<RunResult> {
  const { config, logger = silentLogger, clock = systemClock } = options;
  const streams = planStreams(config.streams, config.output.formats, options.stream, config.output.table);
  const jobStreams = planStreams(config.streams, config.output.formats, undefined, config.output.table);
  const now = () => new Date(clock.now()).toISOString();
  const startedAtMs = clock.now();
  const scope = runScope(options);
  // The client first: a bad source setting fails here, before there is a lock to release.
  const client = openClient(config, logger, clock);
  const stopAll = new AbortController();
  const signal = options.signal === undefined ? stopAll.signal : AbortSignal.any([options.signal, stopAll.signal]);
  // Every partition's request, backoff and limiter wait listen to it at once: that is not a leak.
  setMaxListeners(16 + 8 * streams.reduce((sum, s) => sum + s.partitions, 0), signal);
  let counts: StreamCounts = { items: new Map(), series: new Map() };
  let held = false;
  const hold = async () => {
    if (held) return;
    held = true;
    await options.onHeld?.();
  };
  let release = async () => {};
  const { store, checkpointKey } = await openOutput(config, logger);
  let sink: ShardSink | undefined;
  try {
    await store.prepare();
    const setup = {
      store,
      checkpointKey,
      baseUrl: config.source.baseUrl,
      streams,
      jobStreams,
      logger,
      clock,
      now,
      beforeWrite: async (checkpoint: Checkpoint) => {
        await hold();
        counts = await countStreams(client, streams, checkpoint, logger, signal);
        // Instances' columns are known now: a Delta table's schema is checked before anything is written.
        const tables = streams.filter((stream) => stream.table === 'delta').map((stream) => stream.name);
        await assertTablesWritable(store, tables, checkpoint);
      },
    };
    const start = await scope.start(setup);
    release = start.release;
    // A run with nothing to change never reached beforeWrite.
    await hold();
    const { committer, plans } = start;
    // A run with nothing to do says so once, in the summary its caller prints: its log lines are debug.
    logFindings(logger, start, committer === undefined ? 'debug' : 'info');
    if (committer === undefined) return nothingDone(start, clock.now() - startedAtMs);
    logStarted(logger, { outDir: store.location, ...scope.logFields }, streams, committer.state, start);
    // Shards are written where the store stages them before it publishes them.
    sink = createShardSink((key) => store.stage(key), config.output, { logger });
    const progress = new RunProgress(streams, plans, committer.state, () => counts);
    // Beside the lock, for status; gone before the lock is let go, by every way the run ends.
    const streamsNow = () => progress.current();
    const live = new LiveProgressFile(store, start.lockKey, plans, committer.state, logger, { streams: streamsNow });
    await live.start();
    release = async () => {
      await live.stop();
      await start.release();
    };
    const context = { store, client, committer, sink, signal, logger };
    const drains = startStreams(streams, plans, committer.state, () => counts, config.source.maxReadFactor, logger);
    const run = { config, plans, drains, progress, live, stopAll, onStart: options.onStart };
    const outcomes = await drainAll(context, run);
    const finished = await finishRun({ setup, scope, committer, client, plans, outcomes, release, signal });
    release = finished.release;
    const { resumed, idle, damaged } = start;
    return { ...finished.result, resumed, rows: progress.rows, idle, wrote: true, damaged };
  } finally {
    await sink?.close();
    await client.close();
    await release();
    await store.close();
  }
}

/**
 * Drains every plan at once under the run's limiter, holding at most the run's budget of response
 * bytes; a refused credential stops them all, a stream read past its limit stops its partitions.
 */
function drainAll(
  context: Omit<PartitionContext, 'client' | 'budget' | 'limits' | 'onRows'> & { client: PlatformClient },
  run: {
    config: JobConfig;
    plans: readonly PartitionPlan[];
    drains: ReadonlyMap<string, StreamDrain>;
    progress: RunProgress;
    live: LiveProgressFile;
    stopAll: AbortController;
    onStart: RunOptions['onStart'];
  },
): Promise<PromiseSettledResult<PartitionOutcome>[]> {
  const { config, plans, drains, progress, live, stopAll } = run;
  // The client's budget (source.maxBufferedBytes): every request of the process holds its bytes there.
  const { budget } = context.client;
  run.onStart?.(progress.handle(context.client, budget, () => context.committer.files));
  const partition: PartitionContext = {
    ...context,
    budget,
    limits: config.output.shard,
    onSeriesDone: (count: number, plan: PartitionPlan) => progress.onSeriesDone(count, plan.stream.name),
    onRows: (count: number, plan: PartitionPlan) => {
      progress.onRows(count, plan.stream.name);
      live.onRows(plan, count);
      checkReadLimit(config.source.maxReadFactor, plan.stream.name, plan, progress.streamRows(plan.stream.name));
    },
  };
  return Promise.allSettled(
    plans.map(async (plan): Promise<PartitionOutcome> => {
      try {
        const drain = drains.get(plan.stream.name);
        if (drain === undefined) throw new Error(`stream ${plan.stream.name} was not started`);
        const outcome = await drainPartition(partition, plan, drain);
        if (outcome !== 'interrupted') progress.onPartitionDone(plan.stream.name);
        return outcome;
      } catch (error) {
        if (error instanceof AuthError) stopAll.abort();
        throw error;
      } finally {
        live.onEnded(plan);
      }
    }),
  );
}

/** Each stream's drain in this run, from its kind, given the stream's partitions in this process and its count. */
function startStreams(
  streams: readonly StreamPlan[],
  plans: readonly PartitionPlan[],
  checkpoint: Checkpoint,
  counts: () => StreamCounts,
  maxReadFactor: number,
  logger: Logger,
): Map<string, StreamDrain> {
  return new Map(
    streams.map((stream): [string, StreamDrain] => {
      const total = () => {
        const { items, series } = counts();
        return { items: items.get(stream.name), series: series.get(stream.name) };
      };
      const mine = plans.filter((plan) => plan.stream.name === stream.name);
      const run = { stream, plans: mine, checkpoint, total, maxReadFactor, logger };
      return [stream.name, streamKind(stream.resource).start(run)];
    }),
  );
}

/** The run's first line: where, which worker, each stream's window, how many partitions, resumed or not. */
function logStarted(
  logger: Logger,
  fields: Readonly<Record<string, string>>,
  streams: readonly StreamPlan[],
  checkpoint: Checkpoint,
  start: Started,
): void {
  logger.info(
    {
      ...fields,
      streams: streams.map((s) => ({ name: s.name, ...windowOf(checkpoint, s.name) })),
      partitions: start.plans.length,
      resumed: start.resumed,
    },
    start.resumed ? 'resuming export' : 'starting export',
  );
}

/** What the start of a run found: streams with nothing to do, partitions repair reads again. */
function logFindings(logger: Logger, start: Started, idleLevel: 'debug' | 'info'): void {
  for (const idle of start.idle) logger[idleLevel]({ ...idle }, idleMessage(idle));
  for (const [pair, problems] of start.damaged) {
    logger.warn({ partition: pair, problems }, `repair: reading ${pair} again: ${problems[0] ?? ''}`);
  }
}

/** The platform client of a run, with the run's own request limiter. */
function openClient(config: JobConfig, logger: Logger, clock: Clock): PlatformClient {
  return createPlatformClient(config.source, {
    logger,
    clock,
    configFile: config.file,
    redactor: config.redactor,
    limiter: new AdaptiveLimiter({
      maxConcurrency: config.source.concurrency,
      maxRequestsPerSecond: config.source.maxRequestsPerSecond,
      clock,
      logger,
    }),
  });
}

/** A run that had nothing to read or write: the output as it is, and this run's zero requests. */
function nothingDone(start: Started, durationMs: number): RunResult {
  const manifest: Manifest = { ...start.manifest, state: 'complete', requests: 0, retries: 0, throttled: 0, durationMs };
  const { idle, damaged } = start;
  return { state: 'complete', manifest, errors: [], empty: [], resumed: true, rows: 0, idle, wrote: false, damaged };
}

/** What an idle stream's log line says. */
export function idleMessage(idle: IdleStream): string {
  return idle.reason === 'complete'
    ? `${idle.stream}: complete since ${idle.since}; nothing to do: use --fresh${otherModes(idle)}`
    : `${idle.stream}: ${idleReason(idle)}`;
}

/** Why an idle stream has nothing to do, for a summary that has said "nothing to do" already. */
export function idleReason(idle: IdleStream): string {
  return idle.reason === 'complete'
    ? `complete since ${idle.since}: use --fresh to export it again${otherModes(idle)}`
    : `its last run started at ${idle.since}, and this one not later (is the clock set back?): no new window to read`;
}

/**
 * The mode a complete full export could take instead, if the stream accepts it: snapshot (a new
 * copy each run), else incremental; nothing when it accepts neither (unknown: snapshot, which
 * every kind takes).
 */
function otherModes(idle: IdleStream): string {
  const modes = idle.scheduledModes ?? ['snapshot'];
  if (modes.includes('snapshot')) return ', or mode: snapshot for a new export each run';
  if (modes.includes('incremental')) return ', or mode: incremental to read, each run, what changed since the last';
  return '';
}
