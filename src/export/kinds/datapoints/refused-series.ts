import type { PlatformClient } from '../../../http/platform-client.js';
import { queryRefused } from '../../../http/query-refused.js';
import type { DatapointsStreamPlan } from '../../state/index.js';
import { explicitSeries } from './drain-points.js';
import { POINTS_PATH } from './point-requests.js';

/** Series asked about in one request: the platform's most per datapoints request. */
export const CHECK_BATCH = 100;

/**
 * Before any partition of a datapoints stream with aggregates and an explicit series list starts,
 * asks for one aggregate point of every listed series (CHECK_BATCH a request), as the partitions'
 * first requests would: a series the platform refuses them for (a string series) refuses the
 * stream's query (E_QUERY_REFUSED) before anything is committed, so that the list fixed afterwards
 * starts clean instead of being refused as drift. Unknown series are left to the run, as ever.
 */
export async function checkListedSeries(
  client: Pick<PlatformClient, 'post'>,
  stream: DatapointsStreamPlan,
  /** The run's window of point times (the stream's state's `from` and `until`); null: none. */
  window: { from: number | null; until: number } | null,
  signal?: AbortSignal,
): Promise<void> {
  const { points } = stream;
  const refs = explicitSeries(points);
  if (points.aggregates === undefined || refs === undefined || window === null) return;
  const start = window.from ?? 0;
  const end = window.until;
  if (end <= start) return;
  const list = points.ids !== undefined ? 'ids' : points.externalIds !== undefined ? 'externalIds' : 'instanceIds';
  const fix = `Remove the series it names from timeseries.${list} of stream ${stream.name} in the job file (aggregates exist for numeric series only), or read its raw points in a stream of their own`;
  for (let at = 0; at < refs.length; at += CHECK_BATCH) {
    const body = {
      items: refs.slice(at, at + CHECK_BATCH).map((ref) => ({ ...ref, start, end, limit: 1, ...points.options })),
      aggregates: points.aggregates,
      granularity: points.granularity,
      ...(points.timeZone === undefined ? {} : { timeZone: points.timeZone }),
      ignoreUnknownIds: true,
    };
    try {
      await client.post(POINTS_PATH, body, signal);
    } catch (error) {
      throw queryRefused(error, stream.name, fix) ?? error;
    }
  }
}
