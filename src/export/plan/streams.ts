import type {
  DatapointsStreamConfig,
  FilterValue,
  Format,
  InstancesStreamConfig,
  StreamConfig,
  TableKind,
} from '../../config/job-schema.js';
import { splitFilters, splitScopes } from '../../config/instances-schema.js';
import { pointsParams, type PointsPlan, pointsShape, type StreamPlan } from '../state/index.js';
import { ConfigError } from '../../errors.js';
import { filterKeys } from '../../resources/index.js';

export function streamName(stream: StreamConfig): string {
  return stream.name ?? stream.resource;
}

/**
 * The streams of a job (or only `only`), with their request parameters, formats and table kind
 * (`table` set for a Delta table only). Filters are sent in the order the collection lists them
 * (resources/), so equal configs give equal requests.
 */
export function planStreams(
  streams: readonly StreamConfig[],
  defaultFormats: readonly Format[],
  only?: string,
  defaultTable: TableKind = 'files',
): StreamPlan[] {
  const selected = only === undefined ? streams : streams.filter((s) => streamName(s) === only);
  if (selected.length === 0) {
    throw new ConfigError(
      only === undefined
        ? 'streams: the job has no streams; add at least one (for example: streams: [{ resource: events }]).'
        : `--stream ${only}: no such stream; the job has ${streams.map(streamName).join(', ')}.`,
    );
  }
  return selected.map((stream): StreamPlan => {
    const table = stream.table ?? defaultTable;
    return { ...planStream(stream, defaultFormats), ...(table === 'delta' ? { table } : {}) };
  });
}

function planStream(stream: StreamConfig, defaultFormats: readonly Format[]): StreamPlan {
  if (stream.resource === 'datapoints') return planDatapoints(stream, defaultFormats);
  if (stream.resource === 'instances') return planInstances(stream, defaultFormats);
  const params = listParams(stream.resource, stream.limit, stream.filter);
  return {
    name: streamName(stream),
    resource: stream.resource,
    params,
    partitions: stream.partitions,
    formats: [...new Set(stream.formats ?? defaultFormats)],
    mode: stream.mode,
    safetyLagMs: stream.safetyLag,
    keep: stream.keep,
    metadataColumns: stream.metadataColumns,
    updatedBetween: { min: stream.filter.minLastUpdatedTime, max: stream.filter.maxLastUpdatedTime },
  };
}

/** A collection's chain parameters: `limit`, then each filter set, in the collection's order. */
function listParams(
  resource: Parameters<typeof filterKeys>[0],
  limit: number,
  filter: Readonly<Record<string, FilterValue | undefined>>,
): [string, string][] {
  const params: [string, string][] = [['limit', String(limit)]];
  for (const key of filterKeys(resource)) {
    const value = filter[key];
    if (value !== undefined) params.push([key, paramText(value)]);
  }
  return params;
}

/**
 * A datapoints stream: its parameters are the series listing's (the timeseries filters, or none
 * for explicit series), then the points' own settings, so that a change of either is drift.
 */
function planDatapoints(stream: DatapointsStreamConfig, defaultFormats: readonly Format[]): StreamPlan {
  const { ids, externalIds, ...filter } = stream.timeseries;
  const points: PointsPlan = {
    ids,
    externalIds,
    start: stream.start,
    end: stream.end,
    aggregates: stream.aggregates,
    granularity: stream.granularity,
    timeZone: stream.timeZone,
    options: Object.fromEntries(
      (['includeStatus', 'ignoreBadDataPoints', 'treatUncertainAsBad', 'targetUnit', 'targetUnitSystem'] as const)
        .filter((key) => stream[key] !== undefined)
        .map((key) => [key, stream[key]]),
    ),
  };
  // Aggregates exist for numeric series only: a listing for them asks for numeric series.
  const numeric = stream.aggregates !== undefined && filter.isString === undefined ? { isString: false } : {};
  const listing =
    ids === undefined && externalIds === undefined ? listParams('timeseries', stream.limit, { ...filter, ...numeric }) : [];
  return {
    name: streamName(stream),
    resource: 'datapoints',
    params: [...listing, ...pointsParams(points)],
    partitions: stream.partitions,
    formats: [...new Set(stream.formats ?? defaultFormats)],
    mode: stream.mode,
    safetyLagMs: stream.safetyLag,
    updatedBetween: { min: undefined, max: undefined },
    points,
    shape: pointsShape(points),
  };
}

/**
 * An instances stream: one partition per query (split), and as parameters everything that decides
 * which instances are read and how (view and its version, instance type, spaces, filter, split,
 * page size), so that a change of any of them between runs is drift.
 */
function planInstances(stream: InstancesStreamConfig, defaultFormats: readonly Format[]): StreamPlan {
  const { view, instanceType, spaces, filter, split } = stream;
  const queries = splitFilters(stream);
  const params: [string, string][] = [
    ['limit', String(stream.limit)],
    ['instanceType', instanceType],
    ['view', `${view.space}:${view.externalId}/${view.version}`],
  ];
  if (spaces !== undefined) params.push(['spaces', JSON.stringify(spaces)]);
  if (filter !== undefined) params.push(['filter', canonicalValue(filter)]);
  if (split !== undefined) params.push(['split', canonicalValue(split)]);
  return {
    name: streamName(stream),
    resource: 'instances',
    params,
    partitions: queries.length,
    formats: [...new Set(stream.formats ?? defaultFormats)],
    mode: stream.mode,
    safetyLagMs: 0,
    keep: stream.keep,
    updatedBetween: { min: undefined, max: undefined },
    instances: {
      view,
      instanceType,
      queries,
      scopes: splitScopes(stream),
      filter: splitFilters({ ...stream, split: undefined })[0],
      allowExpiredCursors: stream.allowExpiredCursorsAndAcceptMissedDeletes,
    },
  };
}

/** JSON with every object's keys sorted: the same filter, however written, is the same parameter. */
function canonicalValue(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}

/**
 * A filter's value as a chain's parameter: numbers and booleans as text, lists as JSON arrays (the
 * form GET takes), a map or a label filter as JSON with its keys sorted (the same pairs give the
 * same parameter).
 */
function paramText(value: FilterValue): string {
  if (Array.isArray(value)) return JSON.stringify(value);
  return typeof value === 'object' ? canonicalJson(value) : String(value);
}

function canonicalJson(map: object): string {
  return JSON.stringify(Object.fromEntries(Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}
