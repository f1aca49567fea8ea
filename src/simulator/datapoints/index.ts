/**
 * The points inside the time series: generated on demand from the seed (`DatapointSet`, one
 * series' `SeriesPoints`, each point's value and status), and served by
 * `POST /timeseries/data/list` (the body's queries, raw points and aggregates, the answer's text).
 */
export { DatapointSet } from './datapoint-set.js';
export { handleDatapoints, type PointsContext } from './datapoints-handler.js';
export type { PointStatus, PointValue, Quality } from './point-values.js';
export type { Datapoint, SeriesPoints } from './series-points.js';
