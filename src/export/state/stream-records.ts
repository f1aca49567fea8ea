import type { StreamResource } from '../../config/job-schema.js';
import { changeColumns, pointColumns, pointKey, type Resource, resourceSpec, shapeFromParams } from '../../resources/index.js';
import { typedColumns } from '../../sink/index.js';
import type { StreamState, UpdatedWindow } from './checkpoint-schema.js';
import type { SeriesRef } from './stream-plan.js';

/** What identifies a stream's rows in its manifest entry, with its columns (and a datapoints stream's point times). */
export interface RowKey {
  key: 'id' | 'externalId' | string[];
  columns?: { name: string; type: string }[];
  pointWindow?: PointWindow;
  unknownSeries?: SeriesRef[];
}

/** A datapoints run's point times: start inclusive, end exclusive. */
export interface PointWindow {
  start: number;
  end: number;
}

/**
 * How the records (checkpoint, manifests, logs, status, verify) hold a stream of each kind: the
 * one table outside kinds/ that tells the kinds apart.
 */
export interface StreamRecord {
  /**
   * What a run's window is of: the items' lastUpdatedTime (collections), point times (datapoints),
   * or nothing (instances: a whole view, or its sync feed from where the last run ended).
   */
  readonly window: 'lastUpdatedTime' | 'points' | 'none';
  /** An incremental run reads a change feed: a backfill first, then the changes since the run before. */
  readonly feed: boolean;
  /**
   * The rows verify reads back: items by their key, datapoints by (series, timestamp), instances
   * by (space, externalId).
   */
  readonly rows: 'items' | 'points' | 'nodes and edges' | 'changes';
  /** The stream's rows' key, as its manifest entry gives it. */
  key(state: StreamState): RowKey;
  /** The key as verify's report names it. */
  keyName(resource: StreamResource): string;
  /** The fields verify reads a row's key from, in both formats. */
  keyFields(resource: StreamResource): readonly string[];
  /**
   * A stream without a window (`window: 'none'`): what its current run reads, as status says it;
   * `since` is where that run's window began (the run before's start; null: its first run).
   */
  readonly reads: ((mode: string, since: number | null) => string) | undefined;
}

const COLLECTION: StreamRecord = {
  window: 'lastUpdatedTime',
  feed: false,
  rows: 'items',
  key: (state) => ({ key: resourceSpec(collectionRead(state.resource)).key }),
  keyName: (resource) => resourceSpec(collectionRead(resource)).key,
  keyFields: (resource) => [resourceSpec(collectionRead(resource)).key],
  reads: undefined,
};

const DATAPOINTS: StreamRecord = {
  window: 'points',
  feed: false,
  rows: 'points',
  keyName: () => '(series, timestamp)',
  // Verify reads a point's key itself: `timeseriesId` in Parquet, `id` in NDJSON.
  keyFields: () => ['timeseriesId', 'timestamp'],
  reads: undefined,
  key: (state) => {
    const shape = shapeFromParams(state.params);
    const unknownSeries = Object.values(state.parts).flatMap((part) => part.points?.unknown ?? []);
    const window = pointWindowOf(state);
    return {
      key: pointKey(shape),
      columns: typedColumns(pointColumns(shape)),
      ...(window === undefined ? {} : { pointWindow: window }),
      ...(unknownSeries.length === 0 ? {} : { unknownSeries }),
    };
  },
};

const INSTANCES: StreamRecord = {
  window: 'none',
  feed: true,
  rows: 'nodes and edges',
  keyName: () => '(space, externalId)',
  keyFields: () => ['space', 'externalId'],
  reads: (mode, since) => {
    if (mode !== 'incremental') return 'every instance of the view';
    return since === null
      ? 'the sync feed from its start (every instance of the view, then the changes made meanwhile)'
      : `the sync feed's changes since the run that started ${new Date(since).toISOString()}`;
  },
  key: (state) => {
    const columns = state.instances?.columns;
    return { key: ['space', 'externalId'], ...(columns === undefined ? {} : { columns: typedColumns(columns) }) };
  },
};

/**
 * A subscription's change rows: each run's rows are numbered per partition (changeOrder), and a
 * series lies in one partition, so (timeseriesId, changeOrder) is unique within a run; the same
 * change may come again in a later run (the platform delivers at least once).
 */
const SUBSCRIPTION: StreamRecord = {
  window: 'none',
  feed: true,
  rows: 'changes',
  keyName: () => '(timeseriesId, changeOrder)',
  keyFields: () => ['timeseriesId', 'changeOrder'],
  reads: (_mode, since) =>
    since === null
      ? "the subscription's changes from its start (or initializeCursors)"
      : `the subscription's changes since the run that started ${new Date(since).toISOString()}`,
  key: (state) => ({ key: ['timeseriesId', 'changeOrder'], columns: typedColumns(changeColumns(includesStatus(state))) }),
};

/** Whether a subscription stream's change rows carry statuses, as its checkpoint's parameters say. */
function includesStatus(state: Pick<StreamState, 'params'>): boolean {
  return state.params.some(([key, value]) => key === 'includeStatus' && value === 'true');
}

/** The collection a stream reads, which its rows are items of; undefined for the other kinds. */
export function collectionOf(resource: StreamResource): Resource | undefined {
  return resource === 'datapoints' || resource === 'instances' || resource === 'datapoint-subscription' ? undefined : resource;
}

function collectionRead(resource: StreamResource): Resource {
  const collection = collectionOf(resource);
  if (collection === undefined) throw new Error(`a ${resource} stream reads no collection`);
  return collection;
}

/** How a stream reading `resource` is recorded. */
export function streamRecord(resource: string): StreamRecord {
  switch (resource) {
    case 'datapoints':
      return DATAPOINTS;
    case 'instances':
      return INSTANCES;
    case 'datapoint-subscription':
      return SUBSCRIPTION;
    default:
      return COLLECTION;
  }
}

/** A datapoints stream's window of point times; undefined for another kind or before a run. */
export function pointWindowOf(state: Pick<StreamState, 'resource' | 'window'>): PointWindow | undefined {
  if (streamRecord(state.resource).window !== 'points' || state.window === null) return undefined;
  return { start: state.window.from ?? 0, end: state.window.until };
}

/**
 * The lastUpdatedTime bounds a collection stream's run sends (min and max inclusive); null for
 * another kind or before a run.
 */
export function sentWindow(state: Pick<StreamState, 'resource' | 'window'>): SentBounds | null {
  if (streamRecord(state.resource).window !== 'lastUpdatedTime' || state.window === null) return null;
  return sentBounds(state.window);
}

/** A window's lastUpdatedTime bounds as sent: min and max inclusive. */
export interface SentBounds {
  minLastUpdatedTime: number | null;
  maxLastUpdatedTime: number;
}

/** A window as the platform's filters take it: both bounds inclusive, so `until - 1`. */
export function sentBounds(window: UpdatedWindow): SentBounds {
  return { minLastUpdatedTime: window.from, maxLastUpdatedTime: window.until - 1 };
}

/**
 * What a run of an incremental stream that follows a change feed reads: the first run a backfill
 * (an instances sync feed: every instance, then the changes made meanwhile; a subscription: its
 * changes from its start), each later run the changes since the cursors the run before it ended
 * with. Undefined for any other stream.
 */
export function syncPhase(state: Pick<StreamState, 'resource' | 'mode' | 'watermark'>): 'backfill' | 'changes' | undefined {
  if (!streamRecord(state.resource).feed || state.mode !== 'incremental') return undefined;
  return state.watermark === null ? 'backfill' : 'changes';
}

/** `{sync: phase}` for a record of an incremental instances stream's run (manifests), else nothing. */
export function syncField(state: Pick<StreamState, 'resource' | 'mode' | 'watermark'>): { sync?: 'backfill' | 'changes' } {
  const phase = syncPhase(state);
  return phase === undefined ? {} : { sync: phase };
}

/**
 * The series a datapoints stream's current run has read to their end, as its checkpoint counts
 * them: in each partition, those taken from its listing (or its share of the explicit list of
 * `explicit` series) and no longer in flight. 0 for another kind.
 */
export function seriesDoneOf(state: Pick<StreamState, 'parts' | 'partitions'>, explicit: number | undefined): number {
  let done = 0;
  for (const [m, part] of Object.entries(state.parts)) {
    const points = part.points;
    if (points === undefined) continue;
    // Entry i of an explicit list belongs to partition (i mod n) + 1.
    const n = state.partitions;
    const share = explicit === undefined || explicit < Number(m) ? 0 : Math.floor((explicit - Number(m)) / n) + 1;
    const taken = explicit === undefined ? points.listedSeries : points.listed ? share : 0;
    const keys = points.series.map((series) => series.id ?? series.externalId ?? JSON.stringify(series.instanceId));
    const inFlight = new Set(keys).size;
    done += Math.max(0, taken - inFlight);
  }
  return done;
}
