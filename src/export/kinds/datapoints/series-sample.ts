import type { ChainClient } from '../../../http/cursor-chain.js';
import type { DatapointsStreamPlan } from '../../state/index.js';
import { explicitSeries } from './drain-points.js';
import type { SeriesRef } from './points-answer.js';
import { SeriesSource } from './series-source.js';

/** The most series a sample holds: one request of `POST /timeseries/data/latest`. */
export const SAMPLE_SERIES = 100;

/**
 * Up to SAMPLE_SERIES of the series a datapoints stream reads, found again after its run: a run
 * keeps no list of the series it read, so the sample is the first of an explicit list, or the
 * first page (limit 100, no partition) of the stream's listing: the timeseries collection with
 * its filters, or the nodes of its view that match its filter. A bounded sample, one request at
 * most, for what a run that found no point says of where the points are (empty-window.ts).
 */
export async function sampleSeries(
  client: ChainClient,
  stream: DatapointsStreamPlan,
  listing: readonly (readonly [string, string])[],
  signal?: AbortSignal,
): Promise<SeriesRef[]> {
  const { points } = stream;
  const explicit = explicitSeries(points);
  if (explicit !== undefined) return explicit.slice(0, SAMPLE_SERIES);
  const start = { cursor: null, listed: false };
  const params: (readonly [string, string])[] = [...listing.filter(([key]) => key !== 'limit'), ['limit', String(SAMPLE_SERIES)]];
  const whole = { m: 1, n: 1, limit: SAMPLE_SERIES };
  const source = points.seriesView !== undefined
    ? SeriesSource.viewNodes({ client, signal }, points.seriesView, points.seriesFilter, whole, start)
    : SeriesSource.listed({ client, signal, params }, start);
  try {
    return (await source.take())?.refs.slice(0, SAMPLE_SERIES) ?? [];
  } finally {
    await source.close();
  }
}
