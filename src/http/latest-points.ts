import { BadResponseError } from './errors.js';
import { type JsonResponse, requestOf } from './interpret-response.js';
import type { PlatformClient } from './platform-client.js';

/** A series as `POST /timeseries/data/latest` names it: by id, externalId or instanceId. */
export type LatestSeries =
  | { id: number } |
  { externalId: string } |
  { instanceId: { space: string; externalId: string } };

/** The newest point of one series the platform knows, as its answer names the series. */
export interface LatestPoint {
  id: number;
  externalId?: string | undefined;
  instanceId?: { space: string; externalId: string } | undefined;
  /** Its newest point's time (epoch ms) before `before`; undefined: the series holds none. */
  timestamp: number | undefined;
}

/** What to ask: up to 100 series, and the time (exclusive, epoch ms) their point must lie before. */
export interface LatestQuery {
  series: readonly LatestSeries[];
  before: number;
  /** The status flags of the points considered (absent: the platform's defaults, Good points only). */
  flags?: { ignoreBadDataPoints?: boolean | undefined; treatUncertainAsBad?: boolean | undefined } | undefined;
}

/** The platform's most series per request. */
export const MAX_LATEST_SERIES = 100;

/**
 * `POST /timeseries/data/latest` for up to 100 series (unknown ones left out: ignoreUnknownIds),
 * through the client's `post`, so bounded, limited and retried as every request: each series'
 * newest point before `before`, in the order the platform answers them.
 */
export async function latestPoints(
  client: Pick<PlatformClient, 'post'>,
  query: LatestQuery,
  signal?: AbortSignal,
): Promise<LatestPoint[]> {
  if (query.series.length < 1 || query.series.length > MAX_LATEST_SERIES) {
    throw new RangeError(`latestPoints asks for 1..${MAX_LATEST_SERIES} series, got ${query.series.length}`);
  }
  const flags = Object.fromEntries(Object.entries(query.flags ?? {}).filter(([, value]) => value !== undefined));
  const items = query.series.map((series) => ({ ...series, before: query.before, ...flags }));
  const response = await client.post('/timeseries/data/latest', { items, ignoreUnknownIds: true }, signal);
  return parseLatestPoints(response);
}

/** The answer `{"items": [{id, externalId?, instanceId?, datapoints: [] | [{timestamp, ...}]}]}`, checked. */
export function parseLatestPoints(response: JsonResponse): LatestPoint[] {
  const items = (response.body as { items?: unknown } | null)?.items;
  const wrong = (what: string) =>
    new BadResponseError(`The answer of POST /timeseries/data/latest ${what}`, requestOf('POST', response));
  if (!Array.isArray(items)) throw wrong('has no array \'items\'');
  return items.map((item: unknown, i) => {
    const { id, externalId, instanceId, datapoints } = (item ?? {}) as Record<string, unknown>;
    if (typeof id !== 'number' || !Number.isSafeInteger(id)) throw wrong(`has no integer 'id' in items[${i}]`);
    if (!Array.isArray(datapoints) || datapoints.length > 1) throw wrong(`has no 'datapoints' of 0 or 1 point in items[${i}]`);
    const timestamp = (datapoints[0] as { timestamp?: unknown } | undefined)?.timestamp;
    if (datapoints.length === 1 && (typeof timestamp !== 'number' || !Number.isSafeInteger(timestamp))) {
      throw wrong(`has a point without an integer 'timestamp' in items[${i}]`);
    }
    const point: LatestPoint = { id, timestamp: timestamp as number | undefined };
    if (typeof externalId === 'string') point.externalId = externalId;
    const node = instanceId as { space?: unknown; externalId?: unknown } | undefined;
    if (typeof node?.space === 'string' && typeof node.externalId === 'string') {
      point.instanceId = { space: node.space, externalId: node.externalId };
    }
    return point;
  });
}
