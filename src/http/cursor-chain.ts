import { BadResponseError, CursorLoopError, type RequestContext } from './errors.js';
import type { JsonResponse } from './platform-client.js';

/**
 * A cursor chain: `GET {path}` with query `params`, or `POST {path}` with a JSON `body` (the way
 * `POST /{resource}/list` pages). Either way every request of the chain repeats the first one
 * exactly, with only `cursor` added.
 */
export type ChainRequest = ChainCommon & (
  | {
    /** Every parameter but `cursor`, in order: sent identically with every request of the chain. */
    params: readonly (readonly [string, string])[];
    body?: undefined;
  } |
  {
    /** Every property but `cursor`: sent identically with every request of the chain. */
    body: Readonly<Record<string, unknown>>;
    params?: undefined;
  }
);

interface ChainCommon {
  /** Path relative to the base URL, e.g. `/events` (GET) or `/events/list` (POST). */
  path: string;
  /** Resume from this cursor (from a checkpoint); undefined starts at the first page. */
  startCursor?: string | undefined;
  /** Aborts the request in flight and ends the chain with an AbortedError. */
  signal?: AbortSignal | undefined;
}

/** What a chain needs of the platform client. */
export interface ChainClient {
  get(path: string, params: Iterable<readonly [string, string]>, signal?: AbortSignal): Promise<JsonResponse>;
  post(path: string, body: Readonly<Record<string, unknown>>, signal?: AbortSignal): Promise<JsonResponse>;
}

export interface ChainPage {
  items: unknown[];
  /** The page's body as received; `items` was parsed from it. */
  bytes: Buffer;
  /** The cursor this page was fetched with; undefined for the first page of a chain. */
  cursor: string | undefined;
  /** The cursor of the next page; undefined on the last page. */
  nextCursor: string | undefined;
  requestId: string | undefined;
  attempts: number;
}

/** A page may exceed `limit`, but more than this many times over is a broken server, not a quirk. */
export const MAX_PAGE_OVERSHOOT = 2;
/** Cursors remembered for loop detection: catches any loop up to this long, in bounded memory. */
export const LOOP_MEMORY = 10_000;
const DEFAULT_LIMIT = 100;

/**
 * Drains one cursor chain: yields its pages in order, following `nextCursor` with exactly the
 * first request's parameters until a page comes without one. Short and empty pages that carry a
 * cursor are normal. A page that breaks the contract (not an object, `items` not an array,
 * `nextCursor` not a non-empty string, a cursor seen before, far more items than `limit`) throws.
 */
export async function* drainCursorChain(
  client: ChainClient,
  request: ChainRequest,
): AsyncGenerator<ChainPage, void, undefined> {
  const fetchPage = pageFetcher(client, request);
  const limit = limitOf(request);
  const seen = new RecentSet(LOOP_MEMORY);
  let cursor = request.startCursor;
  if (cursor !== undefined) seen.add(cursor);
  for (let pages = 1; ; pages++) {
    const response = await fetchPage(cursor);
    const ctx: RequestContext = {
      method: request.body === undefined ? 'GET' : 'POST',
      path: response.path,
      attempts: response.attempts,
      ...(response.requestId === undefined ? {} : { requestId: response.requestId }),
    };
    const { items, nextCursor } = validatePage(response.body, limit, ctx);
    if (nextCursor !== undefined && seen.has(nextCursor)) {
      throw new CursorLoopError(
        `The platform returned a cursor it had already returned in this chain (page ${pages}): following it would never end`,
        ctx,
      );
    }
    const { bytes, requestId, attempts } = response;
    yield { items, bytes, cursor, nextCursor, requestId, attempts };
    if (nextCursor === undefined) return;
    seen.add(nextCursor);
    cursor = nextCursor;
  }
}

/** The request of one page: the chain's first request with `cursor` added. */
function pageFetcher(
  client: ChainClient,
  request: ChainRequest,
): (cursor: string | undefined) => Promise<JsonResponse> {
  const { path, signal } = request;
  if (request.body !== undefined) {
    const { body } = request;
    if ('cursor' in body) throw new TypeError('drainCursorChain: pass the cursor as startCursor, not in the body');
    return (cursor) => client.post(path, cursor === undefined ? body : { ...body, cursor }, signal);
  }
  const { params } = request;
  if (params.some(([key]) => key === 'cursor')) {
    throw new TypeError('drainCursorChain: pass the cursor as startCursor, not in params');
  }
  return (cursor) => {
    const sent = cursor === undefined ? params : [...params, ['cursor', cursor] as const];
    return client.get(path, sent, signal);
  };
}

/** The chain's page size, which a page may exceed only so far. */
function limitOf(request: ChainRequest): number {
  const given = request.body === undefined ? request.params.find(([key]) => key === 'limit')?.[1] : request.body.limit;
  return given === undefined ? DEFAULT_LIMIT : Number(given);
}

function validatePage(
  body: unknown,
  limit: number,
  ctx: RequestContext,
): { items: unknown[]; nextCursor: string | undefined } {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadResponseError(`Expected a JSON object with 'items', got ${describe(body)}`, ctx);
  }
  const { items, nextCursor } = body as { items?: unknown; nextCursor?: unknown };
  if (!Array.isArray(items)) {
    throw new BadResponseError(
      items === undefined ? "The page has no 'items'" : `The page's 'items' is not an array but ${describe(items)}`,
      ctx,
    );
  }
  if (nextCursor !== undefined && (typeof nextCursor !== 'string' || nextCursor === '')) {
    throw new BadResponseError(
      `The page's 'nextCursor' must be absent or a non-empty string, got ${describe(nextCursor)}`,
      ctx,
    );
  }
  if (items.length > limit * MAX_PAGE_OVERSHOOT) {
    throw new BadResponseError(
      `The page holds ${items.length} items, far beyond limit=${limit}: refusing a server that ignores the limit`,
      ctx,
    );
  }
  return { items, nextCursor };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value === '' ? 'an empty string' : 'a string';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}

/** A set that forgets its oldest entries past `capacity`. */
class RecentSet {
  private readonly entries = new Set<string>();

  constructor(private readonly capacity: number) {}

  has(value: string): boolean {
    return this.entries.has(value);
  }

  add(value: string): void {
    this.entries.add(value);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.values().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }
}
