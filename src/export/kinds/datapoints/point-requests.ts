import { AbortedError, BadResponseError, type RequestContext } from '../../../http/errors.js';
import type { PlatformClient } from '../../../http/platform-client.js';
import type { BudgetHold, ByteBudget } from '../../../page/index.js';
import { freeOwned } from '../../../util/owned-memory.js';
import type { PointBatch } from '../../../sink/index.js';
import { bucketReachMs } from '../../../resources/index.js';
import { confirmUnknown } from './confirm-unknown.js';
import { type AggregatesAsked, readAnswer, type SeriesAnswer, type SeriesRef } from './points-answer.js';
import { readScannedAnswer } from './points-scan.js';
import type { PointsPlan } from '../../state/index.js';
import { MAX_EMPTY_ANSWERS, type SeriesTask, type SeriesTasks } from './series-tasks.js';

export const POINTS_PATH = '/timeseries/data/list';

/**
 * What reading points needs of the platform client: a POST whose answer is read from its bytes
 * rather than parsed when it can be (PlatformClient.postRead).
 */
export type PointsClient = Pick<PlatformClient, 'postRead'>;

/** An answer taken in: the points to write (each series' tasks updated), and the series the platform did not know. */
export interface PointsAnswer {
  batch: PointBatch;
  /** The last timestamp of each series in the batch, to record once it is written. */
  written: { task: SeriesTask; last: number }[];
  unknown: SeriesRef[];
  /**
   * Series whose last point this answer holds (or that the platform did not know): a series read
   * in pieces counts once, with its last piece.
   */
  finished: number;
  /** Gives the answer's bytes back to the run's budget, once written. */
  release(): void;
}

/** A request's answer as received and checked, not yet taken into the tasks (takeAnswer). */
export interface SentRequest {
  queries: { task: SeriesTask }[];
  series: SeriesAnswer[];
  /** The queries the answer left out, whose series the platform confirmed it does not know. */
  unknown: number[];
  ctx: RequestContext;
  release(): void;
}

/**
 * Sends the next request of a partition's series (undefined when every series is finished) and
 * checks its answer; series it leaves out are confirmed unknown (confirmUnknown) or fail it. It
 * holds its share of the run's byte budget from before it is sent until its points are written.
 * The tasks learn of the answer only from takeAnswer, when the drain takes it: until then a
 * commit must not see it.
 */
export async function requestPoints(
  client: PointsClient,
  tasks: SeriesTasks,
  plan: PointsPlan,
  options: { signal: AbortSignal; budget?: ByteBudget | undefined; spread?: number },
): Promise<SentRequest | undefined> {
  const queries = tasks.nextQueries(options.spread);
  if (queries.length === 0) return undefined;
  const body = {
    items: queries.map(({ query }) => ({
      ...query.ref,
      start: query.start,
      end: query.end,
      limit: query.limit,
      ...plan.options,
      ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
    })),
    ...(plan.aggregates === undefined ? {} : { aggregates: plan.aggregates, granularity: plan.granularity }),
    ...(plan.timeZone === undefined ? {} : { timeZone: plan.timeZone }),
    ignoreUnknownIds: true,
  };
  const ctx: RequestContext = { method: 'POST', path: POINTS_PATH };
  const hold = await options.budget?.hold(POINTS_PATH, options.signal, () => new AbortedError('Stopped while waiting for room in the memory budget', ctx));
  let free: (() => void) | undefined;
  try {
    const asked = queries.map(({ query }) => query);
    const aggregates = aggregatesAsked(plan);
    // Read from its bytes, each point where it lies, within the request's attempts (the scan names
    // no problem, so `ctx` is enough for it); parsed when the scan leaves it to JSON.parse.
    const read = (bytes: Buffer) => readScannedAnswer(bytes, asked, aggregates, ctx);
    const response = await client.postRead(POINTS_PATH, body, read, options.signal, hold);
    hold?.resize(response.bytes.length);
    const answered: RequestContext = {
      ...ctx,
      path: response.path,
      attempts: response.attempts,
      ...(response.requestId === undefined ? {} : { requestId: response.requestId }),
    };
    const scanned = response.read;
    const { series, unknown } = scanned ?? readAnswer(response.body, asked, aggregates, answered);
    // The answer's points lie in its body and spans until written: freed then, at once, rather
    // than left to the collector (util/owned-memory.ts; only a body readBody made is freed).
    free = () => {
      scanned?.spans.free();
      freeOwned(response.bytes);
    };
    if (unknown.length > 0) {
      await confirmUnknown(client, POINTS_PATH, unknown.map((index) => asked[index]!), answered, options.signal);
    }
    return { queries, series, unknown, ctx: answered, release: () => release(hold, free) };
  } catch (error) {
    release(hold, free);
    throw error;
  }
}

/**
 * Gives an answer's room in the budget back and frees its memory, once: a second call (an answer
 * released by the drain and again by its cleanup) does nothing.
 */
function release(hold: BudgetHold | undefined, free: (() => void) | undefined): void {
  hold?.release();
  free?.();
}

/** A stream's aggregates, as its answers are checked; undefined for raw points. */
function aggregatesAsked(plan: PointsPlan): AggregatesAsked | undefined {
  if (plan.aggregates === undefined || plan.granularity === undefined) return undefined;
  return { names: plan.aggregates, reachMs: bucketReachMs(plan.granularity, plan.timeZone) };
}

/** Takes a checked answer into the tasks: where each chain stands, which series are finished. */
export function takeAnswer(tasks: SeriesTasks, sent: SentRequest): PointsAnswer {
  const written: PointsAnswer['written'] = [];
  for (const answer of sent.series) {
    const { task } = sent.queries[answer.query]!;
    tasks.answered(task, answer);
    if ((task.chain?.empty ?? 0) >= MAX_EMPTY_ANSWERS) {
      throw new BadResponseError(
        `The platform answered series ${answer.id} ${MAX_EMPTY_ANSWERS} times in a row with no points and a new cursor: following it would never end`,
        sent.ctx,
      );
    }
    const { points } = answer;
    if (points.length > 0) written.push({ task, last: points.timestamp(points.length - 1) });
  }
  for (const index of sent.unknown) sent.queries[index]!.task.finished = true;
  return {
    finished: tasks.seriesEnded(sent.queries.map(({ task }) => task)),
    batch: sent.series.filter((answer) => answer.points.length > 0),
    written,
    unknown: sent.unknown.map((index) => sent.queries[index]!.task.ref),
    release: () => sent.release(),
  };
}
