import { type SeriesRef, seriesIndexOf } from './series-lookup.js';
import { answerOf, type ServedQuery } from './datapoints-answer.js';
import { type PointQuery, parseDatapointsBody } from './datapoints-query.js';
import { capReached, countInFlight, isStatusFault, sendStatusFault } from '../fault-response.js';
import type { FaultPlan } from '../faults.js';
import type { TimeseriesSet } from '../dataset/timeseries.js';
import { type Exchange, readResourceBody, sendError, sendJson, sendText } from '../respond.js';
import type { ServeContext } from '../serve-context.js';
import { increment, type RequestNotes } from '../stats.js';
import type { DatapointSet } from './datapoint-set.js';

/**
 * What the datapoints route reads: what every data route reads, the time series and their points.
 * The lists' context is one (the dataset holds both), named by shape here so that the datapoints
 * import nothing that imports the dataset, which makes their DatapointSet.
 */
export interface PointsContext extends ServeContext {
  dataset: { readonly timeseries: TimeseriesSet; readonly datapoints: DatapointSet };
}

/** A short page is drawn as a share of this; each query then gets that share of its own limit. */
const SHORT_SCALE = 1000;

/**
 * `POST {base}/timeseries/data/list` for an authenticated principal: the points of up to 100
 * series per request, raw or aggregated, each query with its own cursor. Caps, latency and
 * faults apply as on the collections' lists; a short page shortens every query of the answer.
 */
export async function handleDatapoints(ctx: PointsContext, ex: Exchange, notes: RequestNotes): Promise<void> {
  const body = await readResourceBody(ex, notes);
  if (!body.ok) return sendError(ex, body.status, body.message);
  const parsed = parseDatapointsBody(body.value, ctx.clock.now());
  if (!parsed.ok) return sendError(ex, 400, parsed.message);
  const request = parsed.value;
  const capped = capReached(ctx.config.faults, ctx.rateGate, ctx.stats);
  if (capped !== undefined) return sendError(ex, 429, capped);

  const { found, missing } = findSeries(ctx, request.items);
  if (missing.length > 0 && !request.ignoreUnknownIds) {
    // The platform's answer: every identifier it did not find, as given, under `missing`.
    return sendJson(ex, 400, { error: { code: 400, message: 'Time series ids not found', missing } });
  }
  const served = servedQueries(ctx, found);
  if (typeof served === 'string') return sendError(ex, 400, served);

  countInFlight(ex, () => ctx.stats);
  const plan = ctx.planner.plan(request.binding, 0, SHORT_SCALE);
  if (plan.delayMs > 0) await ctx.clock.sleep(plan.delayMs);
  const { stats } = ctx;
  if (plan.fault !== undefined) increment(stats.faults, plan.fault);
  if (isStatusFault(plan.fault)) return sendStatusFault(ex, plan.fault, ctx.config.faults);
  if (plan.shortLimit !== undefined) increment(stats.faults, 'short-page');

  const answer = answerOf(served, ctx.cursors, ctx.clock.now(), (query) => shortened(query.limit, plan));
  if (plan.fault === undefined) {
    stats.pages++;
    stats.datapoints += answer.points;
  }
  return sendText(ex, 200, answer.text, 'application/json; charset=utf-8', {}, plan.fault);
}

/**
 * The queries whose series exist, with its index; and each identifier not found, once, as given
 * (the platform's `missing`). Shared by the datapoints routes.
 */
export function findSeries<Q extends { ref: SeriesRef }>(ctx: PointsContext, queries: readonly Q[]): {
  found: { query: Q; index: number }[];
  missing: SeriesRef[];
} {
  const found: { query: Q; index: number }[] = [];
  const missing = new Map<string, SeriesRef>();
  for (const query of queries) {
    const index = seriesIndexOf(ctx.dataset.timeseries, query.ref);
    if (index === undefined) missing.set(JSON.stringify(query.ref), query.ref);
    else found.push({ query, index });
  }
  return { found, missing: [...missing.values()] };
}

/** Each found query with its series and its cursor's position; or the 400 message of the first refused. */
function servedQueries(
  ctx: PointsContext,
  found: readonly { query: PointQuery; index: number }[],
): ServedQuery[] | string {
  const served: ServedQuery[] = [];
  for (const { query, index } of found) {
    const timeseries = ctx.dataset.timeseries.item(index, false);
    if (timeseries.isString && query.aggregates.length > 0) {
      const named = JSON.stringify(query.ref);
      return `Invalid property '${query.at}.aggregates': time series ${named} is a string series; aggregates exist for numeric series only.`;
    }
    const position = positionOf(ctx, query);
    if (typeof position === 'string') return position;
    served.push({ query, timeseries, series: ctx.dataset.datapoints.series(index), position });
  }
  return served;
}

/** Where the query's cursor says to go on (undefined without a cursor); a string says why it is refused. */
function positionOf(ctx: PointsContext, query: PointQuery): number | undefined | string {
  if (query.cursor === undefined) return undefined;
  const decoded = ctx.cursors.decode(query.cursor, query.binding, ctx.clock.now(), ctx.config.faults.cursorTtlMs);
  if (decoded.ok) return decoded.state.position;
  if (decoded.reason === 'expired') increment(ctx.stats.faults, 'cursor-expired');
  return `Invalid property '${query.at}.cursor': ${decoded.message}`;
}

/** A query's limit on a short page: the drawn share of it, at least one point unless the page may be empty. */
function shortened(limit: number, plan: FaultPlan): number {
  if (plan.shortLimit === undefined) return limit;
  return Math.max(plan.shortLimit === 0 ? 0 : 1, Math.floor((limit * plan.shortLimit) / SHORT_SCALE));
}
