/** Datapoint subscriptions: a datapoints stream that follows one writes its changes as change rows. */
export { subscription } from './subscription-kind.js';
export { ownedPartitions } from './read-subscription.js';
