import { setMaxListeners } from 'node:events';
import { AbortedError } from '../../../http/errors.js';
import type { Logger } from '../../../log.js';
import type { OpenPointShard } from '../../../sink/index.js';
import { crashPoint } from '../../../util/crash-point.js';
import { InFlight } from '../../../util/in-flight.js';
import { type DatapointsStreamPlan, type NodeId, type PointsPartState, seriesRefKey } from '../../state/index.js';
import type { SeriesRef } from './points-answer.js';
import { commitShard, type PartitionContext, type PartitionOutcome, type PartitionPlan, ResumeCursorRefused } from '../../partition/index.js';
import type { ListedSeries } from './listed-series.js';
import { type PointsAnswer, requestPoints, type SentRequest, takeAnswer } from './point-requests.js';
import { MAX_QUERIES, SeriesTasks } from './series-tasks.js';

/**
 * Requests a partition keeps in flight at most. One suffices while a request carries many series;
 * the others serve a long series split into windows of time (SeriesTasks.split), which would
 * otherwise be read one request after another. The run's limiter bounds them all.
 */
export const LANES = 4;
import { SeriesSource } from './series-source.js';

/**
 * Drains one datapoints partition: its series (listed a page at a time, or its share of an explicit
 * list) are read into shards, up to MAX_QUERIES at once in each request. As for a collection, a
 * shard is committed data first, checkpoint last; the checkpoint records where the listing stands
 * and, per series not done, the timestamp of its last committed point, from which a resumed run
 * starts the series again by time (`start` = that timestamp + 1): no point lost or repeated.
 */
export async function drainPoints(
  ctx: PartitionContext,
  plan: PartitionPlan<DatapointsStreamPlan>,
  log: Logger,
  listed: ListedSeries | undefined,
): Promise<PartitionOutcome> {
  const points = plan.stream.points;
  const state = ctx.committer.state.streams[plan.stream.name];
  if (state?.window === null || state === undefined) {
    throw new Error(`stream ${plan.stream.name} has no window`);
  }
  const aggregates = points.aggregates !== undefined;
  const window = { start: state.window.from ?? 0, end: state.window.until, aggregates };
  const part = ctx.committer.part(plan.stream.name, plan.m);
  const saved = part.points ?? { listing: null, listed: false, series: [], listedSeries: 0, unknown: [] };
  const tasks = new SeriesTasks(window);
  for (const series of saved.series) {
    const { start, end } = series;
    tasks.add(refOf(series), series.after, start === undefined || end === undefined ? undefined : { start, end });
  }
  const explicit = explicitSeries(points);
  // Listed series are taken once in this process, and counted: a listing that names one twice is refused.
  const view = points.seriesView;
  const ledger = explicit === undefined && view === undefined ? listed : undefined;
  ledger?.resume(plan.m, saved.series.flatMap((series) => (series.id === undefined ? [] : [series.id])));
  const listing = { cursor: saved.listing, listed: saved.listed || window.end <= window.start };
  // Stops the partition's own requests, queued or in flight, the moment it fails: a request that
  // never completes would otherwise hold the run for its attempts, and then each of its other lanes.
  const stop = new AbortController();
  const signal = AbortSignal.any([ctx.signal, stop.signal]);
  // Each request in flight, each wait for a slot, the budget or a retry listens to it: not a leak.
  setMaxListeners(16 * LANES, signal);
  // The listing holds no share of the byte budget before its requests (its pages' bytes are counted
  // as they arrive): its pages are asked for while this partition's answers hold theirs, and a page
  // of a path not seen yet waits for the whole budget (a deadlock).
  const limit = Number(plan.params.find(([key]) => key === 'limit')?.[1] ?? 1000);
  const asking = { client: ctx.client, signal, stream: plan.stream.name };
  const source = view !== undefined
    ? SeriesSource.viewNodes(asking, view, points.seriesFilter, { ...plan, limit }, listing)
    : explicit === undefined
      ? SeriesSource.listed({ ...asking, params: plan.params }, listing)
      : SeriesSource.explicit(explicit, plan.m, plan.n, listing);
  // The nodes of a view taken from its listing, counted as a listing's series are (the ledger keeps
  // ids, which nodes are not): what the checkpoint's listedSeries says of the partition's series.
  let viewNodes = saved.listedSeries;
  const unknown = [...saved.unknown];
  const unknownKeys = new Set(unknown.map(seriesRefKey));
  let seq = part.nextSeq;
  let writers: OpenPointShard[] | undefined;
  /** The tasks' positions as of the last answer appended: what a commit records. */
  const commit = async () => {
    ledger?.check(plan.m);
    const rows = writers?.[0]?.rows ?? 0;
    const files = writers === undefined ? [] : await commitShard(ctx.store, plan, seq, writers);
    writers = undefined;
    if (files.length > 0) crashPoint('after-shard-rename');
    tasks.forgetFinished();
    const position = source.position;
    const next: PointsPartState = {
      listing: position.cursor,
      listed: position.listed,
      series: tasks.tasks.map((task) => ({
        ...task.ref,
        after: task.written,
        ...(tasks.isPiece(task) ? { start: task.start, end: task.end } : {}),
      })),
      listedSeries: ledger?.count(plan.m) ?? (view === undefined ? saved.listedSeries : viewNodes),
      unknown,
    };
    await ctx.committer.commit(plan.stream.name, plan.m, files, { cursor: undefined, rows, points: next });
    if (files.length > 0) {
      log.debug({ seq, rows, series: next.series.length }, 'shard committed');
      seq++;
    }
  };
  /** Lists more series while few wait for a chain, so that a request stays full. */
  const fill = async () => {
    while (tasks.waiting < MAX_QUERIES && !source.done) {
      const page = await source.take();
      if (page === undefined) continue;
      const ids = page.refs.flatMap((ref) => ('id' in ref ? [ref.id] : []));
      ledger?.take({ m: plan.m, number: page.number, request: page.request }, ids);
      if (view !== undefined) viewNodes += page.refs.length;
      for (const ref of page.refs) tasks.add(ref, null);
    }
  };
  /** fill(), which a run stopped while a listing page is on its way ends early, not with an error. */
  const fillUnlessStopped = async () => {
    try {
      await fill();
    } catch (error) {
      if (!(error instanceof AbortedError && ctx.signal.aborted)) throw error;
    }
  };
  /**
   * Requests in flight, taken in the order they are answered. Not in the order they were sent: an
   * answer held whole behind an earlier request that waits for room in the byte budget would hold
   * the room that request waits for (the budget cannot see the wait), and the run would stall.
   * Each series is in one request at a time, so the order of answers changes only the order of
   * rows in a shard.
   */
  const lanes = new InFlight<SentRequest | undefined>();
  /** Sends requests while tasks are left that none in flight holds, up to LANES at once. */
  const launch = () => {
    while (lanes.size < LANES && tasks.askable && !ctx.signal.aborted) {
      lanes.add(requestPoints(ctx.client, tasks, points, { ...ctx, signal, spread: LANES - lanes.size }));
    }
  };
  try {
    await fill();
    launch();
    while (lanes.size > 0) {
      const sent = await lanes.next();
      if (sent === undefined) continue;
      let answer: PointsAnswer;
      try {
        answer = takeAnswer(tasks, sent);
      } catch (error) {
        sent.release();
        throw error;
      }
      try {
        if (!ctx.signal.aborted) {
          await fillUnlessStopped();
          launch();
        }
        // Written even when the run stopped meanwhile: the answer's finished series leave the
        // tasks with the commit below, and a commit without their last points would lose them.
        await write(answer);
      } finally {
        answer.release();
      }
      if (ctx.signal.aborted) {
        await commit();
        return 'interrupted';
      }
    }
    await commit();
    // No request went: a run stopped before this partition sent one (its series are left to read).
    return ctx.signal.aborted && !(source.done && tasks.open === 0) ? 'interrupted' : 'done';
  } catch (error) {
    if (error instanceof AbortedError && ctx.signal.aborted) {
      await commit();
      return 'interrupted';
    }
    stop.abort();
    // Read again from its first page (drain-partition.ts): what it listed is listed again.
    if (error instanceof ResumeCursorRefused) ledger?.restart(plan.m);
    throw error;
  } finally {
    // Answers that came after the partition failed or stopped give their room back.
    for (const sent of await lanes.settle()) sent?.release();
    await source.close();
    if (writers !== undefined) await Promise.all(writers.map((w) => w.abort()));
  }

  async function write(answer: PointsAnswer): Promise<void> {
    // Each series once: the windows of a long series are asked for, and found unknown, one by one.
    const fresh = answer.unknown.filter((ref) => !unknownKeys.has(seriesRefKey(ref)));
    if (fresh.length > 0) {
      for (const ref of fresh) unknownKeys.add(seriesRefKey(ref));
      unknown.push(...fresh);
      log.warn(
        { series: fresh.slice(0, 10), count: fresh.length },
        `the platform does not know ${fresh.length} series asked for (deleted, or never there); skipped`,
      );
    }
    if (answer.finished > 0) ctx.onSeriesDone?.(answer.finished, plan);
    const rows = answer.batch.reduce((sum, series) => sum + series.points.length, 0);
    if (rows === 0) return;
    writers ??= await ctx.sink.openPoints(plan, seq);
    for (const writer of writers) await writer.append(answer.batch);
    for (const { task, last } of answer.written) task.written = last;
    ctx.onRows(rows, plan);
    crashPoint('after-append');
    if (writers.some((w) => w.rows >= ctx.limits.maxRows || w.bytes >= ctx.limits.maxBytes)) await commit();
  }
}

/** The stream's explicit series, by the one list it gives; undefined when its series are listed. */
export function explicitSeries(points: DatapointsStreamPlan['points']): SeriesRef[] | undefined {
  if (points.ids !== undefined) return points.ids.map((id) => ({ id }));
  if (points.externalIds !== undefined) return points.externalIds.map((externalId) => ({ externalId }));
  return points.instanceIds?.map(({ space, externalId }) => ({ instanceId: { space, externalId } }));
}

type CheckpointedSeries = { id?: number | undefined; externalId?: string | undefined; instanceId?: NodeId | undefined };

/** A checkpointed series' ref: the one of id, externalId and instanceId it has (the checkpoint's reader checks it). */
function refOf(series: CheckpointedSeries): SeriesRef {
  if (series.id !== undefined) return { id: series.id };
  if (series.instanceId !== undefined) return { instanceId: { ...series.instanceId } };
  return { externalId: series.externalId! };
}
