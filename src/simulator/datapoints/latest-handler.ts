import { capReached, countInFlight, isStatusFault, sendStatusFault } from '../fault-response.js';
import { type Exchange, readResourceBody, sendError, sendJson, sendText } from '../respond.js';
import { increment, type RequestNotes } from '../stats.js';
import { answerItemJson, rawPointJson } from './datapoint-json.js';
import { findSeries, type PointsContext } from './datapoints-handler.js';
import { type LatestQuery, parseLatestBody } from './latest-query.js';
import { isVisible } from './point-reading.js';
import type { SeriesPoint, SeriesPoints } from './series-points.js';

/**
 * `POST {base}/timeseries/data/latest`: for each query, the series' latest point before its
 * `before` (default now) that the query's status flags let through, as `datapoints` of zero or
 * one point, in the order of the queries. Unknown series get the platform's 400 with `missing`,
 * or are left out with `ignoreUnknownIds`. Caps, latency and faults apply as on the lists; the
 * answer is no list page (not counted in `stats.pages`).
 */
export async function handleLatest(ctx: PointsContext, ex: Exchange, notes: RequestNotes): Promise<void> {
  const body = await readResourceBody(ex, notes);
  if (!body.ok) return sendError(ex, body.status, body.message);
  const parsed = parseLatestBody(body.value, ctx.clock.now());
  if (!parsed.ok) return sendError(ex, 400, parsed.message);
  const request = parsed.value;
  const capped = capReached(ctx.config.faults, ctx.rateGate, ctx.stats);
  if (capped !== undefined) return sendError(ex, 429, capped);

  const { found, missing } = findSeries(ctx, request.items);
  if (missing.length > 0 && !request.ignoreUnknownIds) {
    return sendJson(ex, 400, { error: { code: 400, message: 'Time series ids not found', missing } });
  }

  countInFlight(ex, () => ctx.stats);
  const plan = ctx.planner.plan(request.binding, 0, 1);
  if (plan.delayMs > 0) await ctx.clock.sleep(plan.delayMs);
  if (plan.fault !== undefined) increment(ctx.stats.faults, plan.fault);
  if (isStatusFault(plan.fault)) return sendStatusFault(ex, plan.fault, ctx.config.faults);

  const items = found.map(({ query, index }) => {
    const latest = latestPoint(ctx.dataset.datapoints.series(index), query);
    const points = latest === undefined ? [] : [rawPointJson(latest, query.includeStatus)];
    return answerItemJson(ctx.dataset.timeseries.item(index, false), points, undefined);
  });
  return sendText(ex, 200, `{"items":[${items.join(',')}]}`, 'application/json; charset=utf-8', {}, plan.fault);
}

/** The series' last point before `before` that the query's flags let through; undefined when none. */
function latestPoint(series: SeriesPoints, query: LatestQuery): SeriesPoint | undefined {
  let point = series.pointBefore(query.before);
  while (point !== undefined && !isVisible(point.quality, query)) point = series.pointBefore(point.timestamp);
  return point;
}
