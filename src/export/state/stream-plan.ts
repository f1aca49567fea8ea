import type { Mode } from '../../config/job-schema.js';
import type { DmFilter } from '../../config/dm-filter.js';
import type { QueryScope } from '../../config/instances-schema.js';
import type { Aggregate, InstanceColumn, InstanceType, PointsShape, PointTime, Resource, ViewRef } from '../../resources/index.js';
import type { StreamShape } from '../../sink/index.js';

/**
 * A stream as the checkpoint records it, to refuse a resume with other settings: a collection's,
 * a datapoints stream's or an instances stream's, told apart by `resource` (in kinds/ only). Each
 * of its partitions refers to it (PartitionPlan.stream) rather than copying its settings.
 */
export type StreamPlan = CollectionStreamPlan | DatapointsStreamPlan | InstancesStreamPlan | SubscriptionStreamPlan;

/** What every stream's plan holds. */
interface StreamPlanBase extends Omit<StreamShape, 'resource' | 'instances' | 'shape' | 'changes'> {
  name: string;
  /** Parameters from the config (filters and limit), without the run's window and `partition`. */
  params: [string, string][];
  partitions: number;
  mode: Mode;
  safetyLagMs: number;
  /** snapshot: completed snapshots to keep (undefined: all). */
  keep?: number | undefined;
  /**
   * The modes of a new export each run (incremental, snapshot) the job file would accept for this
   * stream, its other keys as they are: what a complete full export's "nothing to do" suggests.
   * Undefined: not known (a plan not made from a job file).
   */
  scheduledModes?: readonly Mode[] | undefined;
  /** The config's own lastUpdatedTime bounds (inclusive), which the run's window stays within. */
  updatedBetween: { min: number | undefined; max: number | undefined };
}

/** A stream of one of the six collections. */
export interface CollectionStreamPlan extends StreamPlanBase {
  resource: Resource;
  points?: undefined;
  instances?: undefined;
  shape?: undefined;
  subscription?: undefined;
}

/** A datapoints stream: its window's ends, raw or aggregates, the query options. */
export interface DatapointsStreamPlan extends StreamPlanBase {
  resource: 'datapoints';
  points: PointsPlan;
  /** The value columns of its shards. */
  shape: PointsShape;
  instances?: undefined;
  subscription?: undefined;
}

/** An instances stream: its view, instance type and queries (one per partition). */
export interface InstancesStreamPlan extends StreamPlanBase {
  resource: 'instances';
  instances: InstancesPlan;
  points?: undefined;
  shape?: undefined;
  subscription?: undefined;
}

/**
 * A datapoints stream that follows a datapoint subscription: each run reads the changes since the
 * run before from every partition of the subscription and writes them as change rows.
 */
export interface SubscriptionStreamPlan extends StreamPlanBase {
  resource: 'datapoint-subscription';
  subscription: SubscriptionPlan;
  /** The change rows' optional columns. */
  changes: { includeStatus: boolean };
  points?: undefined;
  instances?: undefined;
  shape?: undefined;
}

/** What a subscription stream reads: the subscription, and the options every request sends. */
export interface SubscriptionPlan {
  externalId: string;
  /** Where a partition without a cursor starts (`now`, `N[w|d|h|m]-ago`); undefined: the subscription's start. */
  initializeCursors?: string | undefined;
  includeStatus: boolean;
  ignoreBadDataPoints: boolean;
  treatUncertainAsBad: boolean;
  /** Points asked for in one answer (the stream's `limit`). */
  limit: number;
  /** The subscription's partitions, as the platform has them: read when a run starts (fixed at its creation). */
  partitionCount?: number | undefined;
}

/** What an instances stream reads: one query per partition, each one cursor chain. */
export interface InstancesPlan {
  view: ViewRef;
  instanceType: InstanceType;
  /** The filter of each query (splitFilters), in order: partition m reads query m; undefined: none. */
  queries: (DmFilter | undefined)[];
  /** What each query holds (splitScopes), in the same order: every instance read is checked against its query's. */
  scopes: QueryScope[];
  /** The stream's filter and spaces without its split: what its queries read together (counted for the read limit). */
  filter?: DmFilter | undefined;
  /**
   * The view's columns (instanceColumns): read from the platform when the stream's run starts and
   * kept in the checkpoint, so that a resumed run writes the same schema. Undefined until then.
   */
  columns?: InstanceColumn[] | undefined;
  /** incremental: go on from an expired sync cursor (the stream's allowExpiredCursorsAndAcceptMissedDeletes). */
  allowExpiredCursors?: boolean | undefined;
}

/**
 * What a datapoints stream reads, besides which series: the window's ends as the job file gives
 * them (resolved when a run starts, then pinned in the checkpoint), raw points or aggregates, and
 * the query options passed through to every query.
 */
/** A data-model node's key: a time series that lives in the data model is named by it. */
export interface NodeId {
  space: string;
  externalId: string;
}

/** A datapoints query names its series by id, by externalId, or by instanceId (a data-model node). */
export type SeriesRef = { id: number } | { externalId: string } | { instanceId: NodeId };

/** A series' identity as text, the same for the same series however it is held (a Set's or a Map's key). */
export function seriesRefKey(ref: SeriesRef): string {
  if ('id' in ref) return `id ${ref.id}`;
  if ('externalId' in ref) return `externalId ${ref.externalId}`;
  return `instanceId ${JSON.stringify([ref.instanceId.space, ref.instanceId.externalId])}`;
}

export interface PointsPlan {
  /** Explicit series, by one of the three; none: the series are listed through the timeseries collection. */
  ids?: readonly number[] | undefined;
  externalIds?: readonly string[] | undefined;
  instanceIds?: readonly NodeId[] | undefined;
  /** Data-model series: the nodes of this view (that match `seriesFilter`), listed through the instances list. */
  seriesView?: ViewRef | undefined;
  seriesFilter?: DmFilter | undefined;
  start: PointTime;
  end?: PointTime | undefined;
  /** Aggregates instead of raw points, with their granularity (and time zone). */
  aggregates?: readonly Aggregate[] | undefined;
  granularity?: string | undefined;
  timeZone?: string | undefined;
  /** Per-query options, sent as given (absent: the platform's default). */
  options: QueryOptions;
}

export interface QueryOptions {
  includeStatus?: boolean;
  ignoreBadDataPoints?: boolean;
  treatUncertainAsBad?: boolean;
  targetUnit?: string;
  targetUnitSystem?: string;
}

/**
 * The settings a resume must not change, as a stream's parameters (after the series listing's):
 * a change is drift, named by its key.
 */
export function pointsParams(plan: PointsPlan): [string, string][] {
  const params: [string, string][] = [];
  const add = (key: string, value: unknown) => {
    if (value !== undefined) params.push([key, typeof value === 'string' ? value : JSON.stringify(value)]);
  };
  add('ids', plan.ids);
  add('externalIds', plan.externalIds);
  add('instanceIds', plan.instanceIds);
  add('view', plan.seriesView);
  add('filter', plan.seriesFilter);
  add('start', timeText(plan.start));
  add('end', plan.end === undefined ? undefined : timeText(plan.end));
  add('aggregates', plan.aggregates?.join(','));
  add('granularity', plan.granularity);
  add('timeZone', plan.timeZone);
  for (const [key, value] of Object.entries(plan.options)) add(key, value);
  return params;
}

/** `1700000000000` or `30d-ago` as a parameter (the form given, so a relative end is not drift). */
function timeText(time: PointTime): string {
  return 'at' in time ? String(time.at) : `${time.agoMs}ms-ago`;
}

export function pointsShape(plan: PointsPlan): PointsShape {
  const { aggregates, granularity } = plan;
  const nodes = plan.instanceIds !== undefined || plan.seriesView !== undefined;
  return {
    aggregates,
    granularity,
    includeStatus: plan.options.includeStatus === true,
    ...(nodes ? { instanceColumns: true as const } : {}),
  };
}
