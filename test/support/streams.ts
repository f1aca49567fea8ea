import type { StreamConfig } from '../../src/config/job-schema.js';
import type {
  CollectionStreamPlan,
  DatapointsStreamPlan,
  InstancesStreamPlan,
  StreamPlan,
} from '../../src/export/state/stream-plan.js';

/** A test's settings of one kind's plan (the result is taken as that kind's). */
export type PlanOverrides =
  | Partial<CollectionStreamPlan> |
  Partial<DatapointsStreamPlan> |
  Partial<InstancesStreamPlan>;

/** A collection stream's `filter` (a datapoints stream has none: undefined). */
export function filterOf(stream: StreamConfig | undefined): unknown {
  return stream !== undefined && 'filter' in stream ? stream.filter : undefined;
}

/**
 * A stream's plan for tests of the checkpoint and status: `events` in one partition, Parquet, a
 * full export with the default lag, and no filter but `limit`; `overrides` set the rest.
 */
export function streamPlan(overrides: PlanOverrides = {}): StreamPlan {
  return {
    name: 'events',
    resource: 'events',
    params: [['limit', '1000']],
    partitions: 1,
    formats: ['parquet'],
    mode: 'full',
    safetyLagMs: 300_000,
    updatedBetween: { min: undefined, max: undefined },
    ...overrides,
  } as StreamPlan;
}

/** A datapoints stream's plan for tests of the checkpoint: `points` in 2 partitions, series listed, from 1970. */
export function pointsStreamPlan(overrides: Partial<DatapointsStreamPlan> = {}): StreamPlan {
  return streamPlan({
    name: 'points',
    resource: 'datapoints',
    partitions: 2,
    points: { start: { at: 0 }, options: {} },
    ...overrides,
  });
}
