import { BadResponseError, CursorLoopError, type RequestContext } from './errors.js';
import type { JsonResponse, PlatformClient } from './platform-client.js';

/**
 * One partition of a datapoint subscription, read by `POST /timeseries/subscriptions/data/list`:
 * every request repeats the same body with only the partition's `cursor` changed (none on the
 * first request of a partition that has no checkpoint, which then starts at `initializeCursors`
 * or at the subscription's start).
 */
export interface SubscriptionFeedRequest {
  /** The subscription's externalId. */
  externalId: string;
  /** The partition's index, 0..partitionCount-1. */
  partition: number;
  /** Resume from this cursor (from a checkpoint); undefined starts the partition. */
  startCursor?: string | undefined;
  /** `now` or `N[w|d|h|m]-ago`: where a partition without a cursor starts; its start of stream when absent. */
  initializeCursors?: string | undefined;
  /** Points per answer, approximate (1..100,000). */
  limit: number;
  includeStatus: boolean;
  ignoreBadDataPoints: boolean;
  treatUncertainAsBad: boolean;
  signal?: AbortSignal | undefined;
}

/** A point of an update as the platform sends it: a bad numeric point's value may be "NaN" or "±Infinity". */
export interface ChangedPoint {
  timestamp: number;
  value?: number | string;
  status?: { code: number; symbol?: string };
}

/** The series of an update. */
export interface SeriesIdentity {
  id: number;
  externalId?: string;
  instanceId?: { space: string; externalId: string };
  isString: boolean;
}

/** One update of the feed: the series, then its points written and its ranges deleted. */
export interface SeriesUpdate {
  timeSeries: SeriesIdentity;
  upserts: ChangedPoint[];
  /** `[inclusiveBegin, exclusiveEnd)`; an absent end deletes everything from the begin on. */
  deletes: { inclusiveBegin: number; exclusiveEnd?: number }[];
}

/** One answer of a partition: its updates in order, the cursor after them, and whether the feed is read to now. */
export interface SubscriptionPage {
  updates: SeriesUpdate[];
  /** The cursor this answer was asked with (undefined: the partition's start). */
  cursor: string | undefined;
  nextCursor: string;
  /** `hasNext` was false: nothing more to read for now. */
  caughtUp: boolean;
  requestId: string | undefined;
  attempts: number;
}

/**
 * Answers in a row that say more follows yet bring nothing: the platform "may rarely say true
 * with nothing there", and a feed that says so without end is a fault of the answers.
 */
export const MAX_EMPTY_PAGES = 100;

/**
 * Reads one partition of a subscription from `startCursor` until `hasNext` is false, yielding each
 * answer in order. An answer without the partition's `nextCursor`, or whose updates are not the
 * platform's shape, throws a BadResponseError naming the request and the place in the answer.
 */
export async function* drainSubscriptionFeed(
  client: Pick<PlatformClient, 'post'>,
  request: SubscriptionFeedRequest,
): AsyncGenerator<SubscriptionPage, void, undefined> {
  const path = '/timeseries/subscriptions/data/list';
  let cursor = request.startCursor;
  let empty = 0;
  for (;;) {
    const body = subscriptionBody(request, cursor);
    const response = await client.post(path, body, request.signal);
    const page = readAnswer(response, request.partition, cursor);
    yield page;
    if (page.caughtUp) return;
    empty = page.updates.length === 0 ? empty + 1 : 0;
    if (empty >= MAX_EMPTY_PAGES) {
      throw new CursorLoopError(
        `The platform answered ${MAX_EMPTY_PAGES} times in a row that more data follows in partition ` +
        `${request.partition} of subscription ${request.externalId}, and sent none: following it would never end`,
        contextOf(response),
      );
    }
    cursor = page.nextCursor;
  }
}

/** The body of a request: the partition with its cursor, or `initializeCursors` when it has none. */
export function subscriptionBody(
  request: SubscriptionFeedRequest,
  cursor: string | undefined,
): Record<string, unknown> {
  const { externalId, partition, initializeCursors, limit } = request;
  const { includeStatus, ignoreBadDataPoints, treatUncertainAsBad } = request;
  return {
    externalId,
    partitions: [{ index: partition, ...(cursor === undefined ? {} : { cursor }) }],
    ...(cursor === undefined && initializeCursors !== undefined ? { initializeCursors } : {}),
    limit,
    includeStatus,
    ignoreBadDataPoints,
    treatUncertainAsBad,
    // The feed is read to now and left: waiting for data that has not come would only hold the run.
    pollTimeoutSeconds: 0,
  };
}

function contextOf(response: JsonResponse): RequestContext {
  return {
    method: 'POST',
    path: response.path,
    attempts: response.attempts,
    ...(response.requestId === undefined ? {} : { requestId: response.requestId }),
  };
}

/** The answer checked against the platform's shape; a BadResponseError names where it is not. */
function readAnswer(response: JsonResponse, partition: number, cursor: string | undefined): SubscriptionPage {
  const ctx = contextOf(response);
  const bad = (where: string, expected: string, got: unknown): never => {
    throw new BadResponseError(
      `The subscription answer's ${where} is not ${expected} (got ${shown(got)}): not the platform's answer`,
      ctx,
    );
  };
  const answer = response.body;
  if (!isRecord(answer)) return bad('body', 'an object', answer);
  const { updates, partitions, hasNext } = answer;
  if (!Array.isArray(updates)) return bad('updates', 'an array', updates);
  if (!Array.isArray(partitions)) return bad('partitions', 'an array', partitions);
  if (typeof hasNext !== 'boolean') return bad('hasNext', 'true or false', hasNext);
  const entry: unknown = partitions.find((one) => isRecord(one) && one.index === partition);
  const nextCursor = isRecord(entry) ? entry.nextCursor : undefined;
  if (typeof nextCursor !== 'string' || nextCursor === '') {
    return bad(`partitions entry of index ${partition}`, 'one with a nextCursor', entry);
  }
  const read = updates.map((update: unknown, u) => readUpdate(update, `updates[${u}]`, bad));
  const { requestId, attempts } = response;
  return { updates: read, cursor, nextCursor, caughtUp: !hasNext, requestId, attempts };
}

type Bad = (where: string, expected: string, got: unknown) => never;

function readUpdate(update: unknown, at: string, bad: Bad): SeriesUpdate {
  if (!isRecord(update)) return bad(at, 'an object', update);
  const { timeSeries, upserts = [], deletes = [] } = update;
  if (!isRecord(timeSeries) || !Number.isSafeInteger(timeSeries.id)) return bad(`${at}.timeSeries`, 'a series with an id', timeSeries);
  if (typeof timeSeries.isString !== 'boolean') return bad(`${at}.timeSeries.isString`, 'true or false', timeSeries.isString);
  if (!Array.isArray(upserts)) return bad(`${at}.upserts`, 'an array', upserts);
  if (!Array.isArray(deletes)) return bad(`${at}.deletes`, 'an array', deletes);
  upserts.forEach((point: unknown, p) => {
    const where = `${at}.upserts[${p}]`;
    if (!isRecord(point) || !Number.isSafeInteger(point.timestamp)) return bad(where, 'a point with an integer timestamp', point);
    const { value, status } = point;
    if (value !== undefined && typeof value !== 'number' && typeof value !== 'string') return bad(`${where}.value`, 'a number or a string', value);
    if (status !== undefined && !(isRecord(status) && Number.isSafeInteger(status.code))) return bad(`${where}.status`, 'a status with a code', status);
    return undefined;
  });
  deletes.forEach((range: unknown, d) => {
    const where = `${at}.deletes[${d}]`;
    const valid =
      isRecord(range) &&
      Number.isSafeInteger(range.inclusiveBegin) &&
      (range.exclusiveEnd === undefined || Number.isSafeInteger(range.exclusiveEnd));
    if (!valid) bad(where, 'a range {inclusiveBegin, exclusiveEnd?} of integer times', range);
  });
  return update as unknown as SeriesUpdate;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
