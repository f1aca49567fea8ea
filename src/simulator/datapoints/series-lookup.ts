import { TIMESERIES_ID_BASE, TIMESERIES_ID_STRIDE, type TimeseriesSet } from '../dataset/timeseries.js';

/** A time series named by one of its three identifiers, as a datapoints query gives it. */
export type SeriesRef = { id: number } | { externalId: string } | { instanceId: { space: string; externalId: string } };

const EXTERNAL_ID = /^TS-([0-9A-Z]{6,})$/;

/**
 * The index of the time series `ref` names, or undefined when none of the collection has that
 * identifier. O(1): ids and externalIds are computed from the index, so they are read back from
 * it, then checked on the item (a few series have no externalId); an instanceId is a
 * CogniteTimeSeries node's, which the collection's `SeriesNodes` map to their series.
 */
export function seriesIndexOf(set: TimeseriesSet, ref: SeriesRef): number | undefined {
  if ('id' in ref) {
    const index = (ref.id - TIMESERIES_ID_BASE) / TIMESERIES_ID_STRIDE;
    return Number.isInteger(index) && index >= 0 && index < set.count ? index : undefined;
  }
  if ('instanceId' in ref) return set.indexOfInstance(ref.instanceId);
  const { externalId } = ref;
  const digits = EXTERNAL_ID.exec(externalId)?.[1];
  const index = digits === undefined ? Number.NaN : parseInt(digits, 36);
  // Only the canonical spelling (no extra leading zeros) is the series' externalId.
  if (!(index >= 0 && index < set.count) || set.externalIdOf(index) !== externalId) return undefined;
  return set.item(index, false).externalId === externalId ? index : undefined;
}
