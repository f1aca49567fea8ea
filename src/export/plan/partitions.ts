import { filterKeys } from '../../resources/index.js';
import type { PartitionPlan } from '../partition/index.js';
import { partDir, sentBounds, type StreamPlan, type StreamState } from '../state/index.js';

/**
 * The parameters a stream's chains send in its current run: the config's, with the
 * lastUpdatedTime bounds of the run's window in place of the config's own.
 * A checkpoint of version 1 has no window: its chains go on with the config's parameters.
 */
export function chainParams(stream: StreamPlan, state: Pick<StreamState, 'window'>): [string, string][] {
  if (stream.resource === 'datapoints') return seriesListing(stream);
  // Instances have no window: an incremental run follows the sync cursor.
  if (stream.resource === 'instances') return [...stream.params];
  if (state.window === null) return [...stream.params];
  const bounds = sentBounds(state.window);
  const values = new Map<string, string | number | null>([...stream.params, ...Object.entries(bounds)]);
  const params: [string, string][] = [['limit', String(values.get('limit'))]];
  for (const key of filterKeys(stream.resource)) {
    const value = values.get(key);
    if (value !== undefined && value !== null) params.push([key, String(value)]);
  }
  return params;
}

function partitionKey(stream: StreamPlan): string {
  return stream.resource === 'instances' ? 'query' : 'partition';
}

/**
 * A datapoints stream's series listing: `limit` and the timeseries filters of its parameters (the
 * window is of point times, not of the series' lastUpdatedTime). Empty for explicit series.
 */
function seriesListing(stream: StreamPlan): [string, string][] {
  const listing = new Set(['limit', ...filterKeys('timeseries')]);
  return stream.params.filter(([key]) => listing.has(key));
}

/** Streams x partitions: one cursor chain each, with the stream's state in the checkpoint. */
export function planPartitions(
  streams: readonly StreamPlan[],
  stateOf: (stream: string) => Pick<StreamState, 'window' | 'run'>,
): PartitionPlan[] {
  return streams.flatMap((stream) => {
    const state = stateOf(stream.name);
    const params = chainParams(stream, state);
    return Array.from({ length: stream.partitions }, (_, i): PartitionPlan => {
      const m = i + 1;
      const n = stream.partitions;
      return {
        stream,
        m,
        n,
        // An instances stream's partitions are its queries: the API has no `partition`.
        params: n === 1 || params.length === 0 ? [...params] : [...params, [partitionKey(stream), `${m}/${n}`]],
        run: state.run,
        dir: partDir(stream.name, m, n, state.run),
      };
    });
  });
}
