import type { Format, StreamConfig, StreamResource } from '../../config/job-schema.js';
import type { StreamKind } from '../partition/index.js';
import type { StreamPlan } from '../state/index.js';
import { collections } from './collections/index.js';
import { datapoints } from './datapoints/index.js';
import { instances } from './instances/index.js';
import { subscription } from './subscription/index.js';

/** The kind of a stream that reads `resource`: the one place that tells the kinds apart by it. */
export function streamKind(resource: StreamResource): StreamKind {
  switch (resource) {
    case 'datapoints':
      return datapoints;
    case 'instances':
      return instances;
    case 'datapoint-subscription':
      return subscription;
    default:
      return collections;
  }
}

/** A stream of the job file, planned by its kind. */
export function planStream(stream: StreamConfig, defaultFormats: readonly Format[]): StreamPlan {
  switch (stream.resource) {
    case 'datapoints':
      return stream.subscription === undefined
        ? datapoints.plan(stream, defaultFormats)
        : subscription.plan(stream, defaultFormats);
    case 'instances':
      return instances.plan(stream, defaultFormats);
    default:
      return collections.plan(stream, defaultFormats);
  }
}
