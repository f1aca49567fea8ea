/**
 * The points inside the time series: generated on demand from the seed and the start time
 * (`DatapointSet`, one series' `SeriesPoints`, each point's value and status), changed by
 * `--churn` (`DatapointChange`, the log of the changes), and served by
 * `POST /timeseries/data/list` (the body's queries, raw points and aggregates, the answer's text)
 * and `POST /timeseries/data/latest` (each series' latest point before a time);
 * and the datapoint subscriptions (`/timeseries/subscriptions...`): a feed of those changes and of
 * the points arriving, per partition of a subscription.
 */
export { DatapointSet } from './datapoint-set.js';
export { handleDatapoints, type PointsContext } from './datapoints-handler.js';
export { handleLatest } from './latest-handler.js';
export type { DatapointChange } from './point-churn.js';
export type { PointStatus, PointValue, Quality } from './point-values.js';
export type { DeletedRange } from './series-changes.js';
export type { Datapoint, SeriesPoint, SeriesPoints } from './series-points.js';
export {
  handleCreateSubscription,
  handleListSubscriptions,
  handleSubscriptionData,
  handleSubscriptionsByIds,
  SUBSCRIPTION_RETENTION_MS,
  type SubscriptionsContext,
} from './subscriptions-handler.js';
export { partitionOfSeries, type SubscriptionSpec, SubscriptionStore } from './subscriptions.js';
export { subscriptionSpecOf } from './subscription-request.js';
