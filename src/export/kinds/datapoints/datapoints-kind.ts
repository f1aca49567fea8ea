import type { DatapointsStreamConfig } from '../../../config/job-schema.js';
import { refusedAccess } from '../../../http/access-refused.js';
import { filterKeys } from '../../../resources/index.js';
import type { AggregateFilter } from '../../../http/platform-client.js';
import {
  countOrUnknown,
  namedFormats,
  type CountClient,
  type DryRunClient,
  type DryRunStream,
  type StreamKind,
  type StreamRun,
} from '../../partition/index.js';
import {
  type DatapointsStreamPlan,
  pointsParams,
  type PointsPlan,
  pointsShape,
  type StreamPlan,
  streamOf,
} from '../../state/index.js';
import { aggregateFilter, chainRequest, listParams } from '../collections/index.js';
import { drainPoints } from './drain-points.js';
import { emptyWindow } from './empty-window.js';
import { ListedSeries } from './listed-series.js';
import { checkListedSeries } from './refused-series.js';

/**
 * Datapoints of time series: each partition reads its share of the series (listed through the
 * timeseries collection, or given) in windows of point times; the run's window is of point times.
 */
export const datapoints: StreamKind<DatapointsStreamConfig, DatapointsStreamPlan> = {
  plan: (stream, defaultFormats) => {
    const { ids, externalIds, instanceIds, view, filter: nodeFilter, ...filter } = stream.timeseries;
    const points: PointsPlan = {
      ids,
      externalIds,
      instanceIds,
      seriesView: view,
      seriesFilter: nodeFilter,
      start: stream.start,
      end: stream.end,
      aggregates: stream.aggregates,
      granularity: stream.granularity,
      timeZone: stream.timeZone,
      options: Object.fromEntries(
        (['includeStatus', 'ignoreBadDataPoints', 'treatUncertainAsBad', 'targetUnit', 'targetUnitSystem'] as const)
          .filter((key) => stream[key] !== undefined)
          .map((key) => [key, stream[key]]),
      ),
    };
    // Aggregates exist for numeric series only: a listing for them asks for numeric series.
    const numeric = stream.aggregates !== undefined && filter.isString === undefined ? { isString: false } : {};
    const listing =
      ids === undefined && externalIds === undefined && instanceIds === undefined && view === undefined ? listParams('timeseries', stream.limit, { ...filter, ...numeric }) : [];
    // The series listing's parameters, then the points' own settings, so that a change of either is drift.
    return {
      ...namedFormats(stream, defaultFormats),
      resource: 'datapoints',
      params: [...listing, ...pointsParams(points)],
      partitions: stream.partitions,
      mode: stream.mode,
      keep: stream.keep,
      safetyLagMs: stream.safetyLag,
      updatedBetween: { min: undefined, max: undefined },
      points,
      shape: pointsShape(points),
    };
  },
  chainParams: seriesListing,
  partitionParam: 'partition',
  count: async (client, stream, state, logger, signal) => {
    // Before anything is written: a listed series the aggregates are refused for refuses the stream.
    await checkListedSeries(client, stream, state.window, signal);
    const series = await countOrUnknown(
      () => countSeries(client, stream, signal),
      (error) => {
        // A 403 or 404 is not retried and does not pass: the project, the path or the access is wrong.
        if (refusedAccess(error) !== undefined) throw error;
        logger.debug({ stream: stream.name, code: error.code }, `no item count for ${stream.name} (progress shows no total): ${error.message}`);
      },
    );
    if (series !== undefined) logger.info({ stream: stream.name, series }, `${stream.name}: ${series} time series selected`);
    return series === undefined ? {} : { series };
  },
  start: (run) => {
    const ledger = listedSeries(run);
    return { drain: (ctx, plan, log) => drainPoints(ctx, plan, log, ledger) };
  },
  cursorRefused: () => undefined,
  listedCollection: () => 'timeseries',
  firstRequest: (stream) => chainRequest('datapoints', seriesListing(stream)),
  dryRun: async (client, stream) => ({ lines: [...(await describePoints(client, stream)), `  ${stream.action()}`] }),
  emptyRun: (client, stream, state, logger, signal) =>
    emptyWindow(client, stream, state, seriesListing(stream), logger, signal),
};

/**
 * A datapoints stream's lines: which series (and how many: the count aggregate of the listing, or
 * the explicit list), the window of point times, what each point row holds, and the requests a
 * run needs at least (one per 100 series; long series need more, found only by reading them).
 */
async function describePoints(client: DryRunClient, stream: DryRunStream<DatapointsStreamPlan>): Promise<string[]> {
  const { plan, request, pointWindow, listed, written } = stream;
  const { points } = plan;
  const explicit = points.ids?.length ?? points.externalIds?.length ?? points.instanceIds?.length;
  const listName = points.ids !== undefined ? 'ids' : points.externalIds !== undefined ? 'externalIds' : 'instanceIds';
  const filter = request.method === 'POST' ? (request.body.filter as AggregateFilter) : aggregateFilter('timeseries', request.params);
  const view = points.seriesView;
  // A view's nodes are counted only by listing them: their number is unknown before the run.
  const counted = view === undefined ? client.aggregateCount('timeseries', filter).catch(() => undefined) : undefined;
  const series = explicit ?? (await counted);
  const which = view !== undefined
    ? `the nodes of view ${view.space}:${view.externalId}/${view.version}${points.seriesFilter === undefined ? '' : ' that match its filter'}`
    : explicit === undefined ? `the series of ${listed}` : `${explicit} listed series (${listName})`;
  const window = pointWindow === undefined ? '' : ` from ${new Date(pointWindow.start).toISOString()} to ${new Date(pointWindow.end).toISOString()} (end exclusive)`;
  const what = points.aggregates === undefined ? 'raw points' : `aggregates ${points.aggregates.join(', ')} per ${points.granularity ?? '?'}`;
  const count = series === undefined ? 'series count unknown' : `${series.toLocaleString('en-US')} series`;
  const requests = series === undefined ? '' : `, at least ${Math.ceil(series / 100).toLocaleString('en-US')} request(s) of up to 100 series`;
  return [
    `stream ${plan.name}: ${what} of ${which}${window}, in ${plan.partitions} partition(s) -> ${written}`,
    `  ${count}${requests}`,
  ];
}

/**
 * A datapoints stream's series listing: `limit` and the timeseries filters of its parameters (the
 * window is of point times, not of the series' lastUpdatedTime). Empty for explicit series.
 */
function seriesListing(stream: StreamPlan): [string, string][] {
  const listing = new Set(['limit', ...filterKeys('timeseries')]);
  return stream.params.filter(([key]) => listing.has(key));
}

/**
 * A datapoints stream's series: counted when listed; else (explicit series) one page of the
 * collection proves the credential, and there is no count.
 */
async function countSeries(
  client: CountClient,
  stream: StreamPlan,
  signal: AbortSignal | undefined,
): Promise<number | undefined> {
  const params = seriesListing(stream);
  if (params.length === 0) {
    await client.get('/timeseries', [['limit', '1']], signal);
    return undefined;
  }
  return client.aggregateCount('timeseries', aggregateFilter('timeseries', params), signal);
}

/**
 * The ledger of the series a datapoints stream lists (not an explicit list): shared by the
 * stream's partitions, with what its checkpoint counts, against the platform's count of its
 * series (this run's share of it: a worker drains some of the partitions).
 */
function listedSeries(run: StreamRun<DatapointsStreamPlan>): ListedSeries | undefined {
  const { stream, plans, checkpoint, total, maxReadFactor, logger } = run;
  const points = stream.points;
  // The series of an explicit list or a view are no listing of the timeseries collection.
  const explicit = points.ids ?? points.externalIds ?? points.instanceIds ?? points.seriesView;
  if (explicit !== undefined) return undefined;
  const mine = plans.length;
  const parts = Object.entries(streamOf(checkpoint, stream.name).parts);
  const counts = new Map(parts.map(([m, part]) => [Number(m), part.points?.listedSeries ?? 0]));
  const share = () => {
    const count = total()?.series;
    return count === undefined ? undefined : Math.round((count * mine) / stream.partitions);
  };
  return new ListedSeries(stream.name, stream.partitions, counts, { factor: maxReadFactor, total: share }, logger);
}
