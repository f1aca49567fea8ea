import { type BudgetHold, type ByteBudget, PageItems } from '../page/index.js';
import { AbortedError, BadResponseError, CursorLoopError, RepeatedPageError, type RequestContext } from './errors.js';
import type { PageResponse } from './platform-client.js';

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

export interface ChainCommon {
  /** Path relative to the base URL, e.g. `/events` (GET) or `/events/list` (POST). */
  path: string;
  /** Resume from this cursor (from a checkpoint); undefined starts at the first page. */
  startCursor?: string | undefined;
  /** Aborts the request in flight and ends the chain with an AbortedError. */
  signal?: AbortSignal | undefined;
  /**
   * The budget of response bytes held at once (the client's): each page holds its share from before
   * its request, and its bytes as they arrive, until the consumer calls `release()`. Without one, a
   * page's bytes are counted only while the client reads it.
   */
  budget?: ByteBudget | undefined;
  /**
   * Checks each page's items before the page is yielded: a problem it names (an item the request
   * did not ask for) is a BadResponseError of the page's request, and the chain stops there.
   */
  checkItems?: ((items: PageItems) => string | undefined) | undefined;
}

/** What a chain needs of the platform client; `hold`, when given, counts the answer's bytes. */
export interface ChainClient {
  getPage(
    path: string,
    params: Iterable<readonly [string, string]>,
    signal?: AbortSignal,
    hold?: BudgetHold,
  ): Promise<PageResponse>;
  postPage(
    path: string,
    body: Readonly<Record<string, unknown>>,
    signal?: AbortSignal,
    hold?: BudgetHold,
  ): Promise<PageResponse>;
}

export interface ChainPage {
  /** The page's items, read from `bytes` one at a time as the writers ask (PageItems). */
  items: PageItems;
  /** The page's body as received. */
  bytes: Buffer;
  /** The cursor this page was fetched with; undefined for the first page of a chain. */
  cursor: string | undefined;
  /** The cursor of the next page; undefined on the last page. */
  nextCursor: string | undefined;
  requestId: string | undefined;
  attempts: number;
  /** Gives the page's bytes back to the budget: call it once the page is written (or dropped). */
  release(): void;
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
 * `nextCursor` not a non-empty string, a cursor seen before, the items of a page seen before, far
 * more items than `limit`) throws.
 */
export async function* drainCursorChain(
  client: ChainClient,
  request: ChainRequest & {
    /**
     * The fingerprint of the page before `startCursor` (PageItems.fingerprint, from the
     * checkpoint): a first page that repeats it is refused as a page sent twice, as within a run.
     */
    seenPage?: string | undefined;
  },
): AsyncGenerator<ChainPage, void, undefined> {
  const fetchPage = pageFetcher(client, request);
  const limit = limitOf(request);
  const seen = new RecentSet(LOOP_MEMORY);
  /** Fingerprints of the pages read (PageItems.fingerprint), for pages sent twice under new cursors. */
  const pagesSeen = new RecentSet(LOOP_MEMORY);
  let cursor = request.startCursor;
  if (cursor !== undefined) seen.add(cursor);
  if (request.seenPage !== undefined) pagesSeen.add(request.seenPage);
  const method = request.body === undefined ? 'GET' : 'POST';
  for (let pages = 1; ; pages++) {
    const hold = await holdBudget(request, method);
    let page: ChainPage;
    try {
      const response = await fetchPage(cursor, hold);
      hold?.resize(response.bytes.length);
      const ctx: RequestContext = {
        method,
        path: response.path,
        attempts: response.attempts,
        ...(response.requestId === undefined ? {} : { requestId: response.requestId }),
      };
      const { items, nextCursor } = readPage(response, limit, ctx);
      checkItems(request, items, ctx);
      if (nextCursor !== undefined && seen.has(nextCursor)) {
        throw new CursorLoopError(
          `The platform returned a cursor it had already returned in this chain (page ${pages}): following it would never end`,
          ctx,
        );
      }
      const fingerprint = items.fingerprint();
      if (fingerprint !== '' && pagesSeen.has(fingerprint)) {
        throw new RepeatedPageError(
          `The platform answered page ${pages} with the same ${items.length} items as an earlier page of this chain, under a new cursor: following it would write them again`,
          ctx,
        );
      }
      pagesSeen.add(fingerprint);
      const { bytes, requestId, attempts } = response;
      page = { items, bytes, cursor, nextCursor, requestId, attempts, release: () => hold?.release() };
    } catch (error) {
      hold?.release();
      throw error;
    }
    yield page;
    const { nextCursor } = page;
    if (nextCursor === undefined) return;
    seen.add(nextCursor);
    cursor = nextCursor;
  }
}

/** The chain's own check of a page's items (ChainCommon.checkItems), if it has one: a problem found is thrown. */
export function checkItems(request: Pick<ChainCommon, 'checkItems'>, items: PageItems, ctx: RequestContext): void {
  const problem = request.checkItems?.(items);
  if (problem !== undefined) throw new BadResponseError(problem, ctx);
}

/** The budget's share for the next page of the chain, when the chain has a budget. */
export async function holdBudget(request: Pick<ChainCommon, 'budget' | 'signal' | 'path'>, method: string): Promise<BudgetHold | undefined> {
  const { budget, signal, path } = request;
  if (budget === undefined) return undefined;
  const ctx = { method, path };
  return budget.hold(path, signal, () => new AbortedError('Stopped while waiting for room in the memory budget', ctx));
}

/** The items and cursor of a page: found by the scan, or taken from the parsed body and checked. */
function readPage(
  response: PageResponse,
  limit: number,
  ctx: RequestContext,
): { items: PageItems; nextCursor: string | undefined } {
  const { scan } = response;
  const page =
    scan === undefined
      ? validatePage(response.body, ctx)
      : { items: PageItems.scanned(response.bytes, scan), nextCursor: scan.nextCursor };
  if (page.items.length > limit * MAX_PAGE_OVERSHOOT) {
    throw new BadResponseError(
      `The page holds ${page.items.length} items, far beyond limit=${limit}: refusing a server that ignores the limit`,
      ctx,
    );
  }
  return page;
}

/** The request of one page: the chain's first request with `cursor` added. */
function pageFetcher(
  client: ChainClient,
  request: ChainRequest,
): (cursor: string | undefined, hold: BudgetHold | undefined) => Promise<PageResponse> {
  const { path, signal } = request;
  if (request.body !== undefined) {
    const { body } = request;
    if ('cursor' in body) throw new TypeError('drainCursorChain: pass the cursor as startCursor, not in the body');
    return (cursor, hold) => client.postPage(path, cursor === undefined ? body : { ...body, cursor }, signal, hold);
  }
  const { params } = request;
  if (params.some(([key]) => key === 'cursor')) {
    throw new TypeError('drainCursorChain: pass the cursor as startCursor, not in params');
  }
  return (cursor, hold) => {
    const sent = cursor === undefined ? params : [...params, ['cursor', cursor] as const];
    return client.getPage(path, sent, signal, hold);
  };
}

/** The chain's page size, which a page may exceed only so far. */
function limitOf(request: ChainRequest): number {
  const given = request.body === undefined ? request.params.find(([key]) => key === 'limit')?.[1] : request.body.limit;
  return given === undefined ? DEFAULT_LIMIT : Number(given);
}

/** The checks scanPage's answer stands for, on a body JSON.parse read: each names what is wrong. */
function validatePage(body: unknown, ctx: RequestContext): { items: PageItems; nextCursor: string | undefined } {
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
  return { items: PageItems.of(items), nextCursor };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value === '' ? 'an empty string' : 'a string';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}

/** A set that forgets its oldest entries past `capacity`. */
export class RecentSet {
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
