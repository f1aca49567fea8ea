import type { PointSource } from './aggregates.js';
import type { SeriesPoints } from './series-points.js';

/**
 * A series' points as the aggregates read them (aggregates.ts), as they are now: the generated
 * points with the changes `--churn` made over them. The one place that knows they come from
 * SeriesPoints, so that a series made another way needs only another adapter.
 */
export function seriesSource(series: SeriesPoints): PointSource {
  return {
    from: (time: number) => series.pointsFrom(time),
    before: (time: number) => series.pointBefore(time),
  };
}
