import type { SourcePoint } from './aggregate-bucket.js';
import type { PointSource } from './aggregates.js';
import type { SeriesPoints } from './series-points.js';

/**
 * The generated points of a series as the aggregates read them (aggregates.ts): the one place that
 * knows they come from SeriesPoints, so that a series made another way needs only another adapter.
 */
export function seriesSource(series: SeriesPoints): PointSource {
  const pointAt = (k: number): SourcePoint => ({
    timestamp: series.timestampOf(k),
    value: series.valueOf(k),
    quality: series.qualityOf(k),
    status: series.statusOf(k),
  });
  return {
    * from(time: number) {
      for (let k = series.indexAtOrAfter(time); k < series.count; k++) yield pointAt(k);
    },
    before(time: number) {
      const k = series.indexAtOrAfter(time) - 1;
      return k >= 0 ? pointAt(k) : undefined;
    },
  };
}
