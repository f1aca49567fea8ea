/** Datapoints: the series a partition lists or is given, read into shards by windows of time. */
export { datapoints } from './datapoints-kind.js';
export { LANES } from './drain-points.js';
export { ListedSeries, SeriesRepeatedError } from './listed-series.js';
export { POINTS_PATH, type PointsClient } from './point-requests.js';
export { checkListedSeries } from './refused-series.js';
