import { PageItems, scanSyncPage, type ScannedSync } from '../page/index.js';
import { type ChainCommon, type ChainPage, checkItems, holdBudget, LOOP_MEMORY, MAX_PAGE_OVERSHOOT, RecentSet } from './cursor-chain.js';
import { BadResponseError, CursorLoopError, type RequestContext } from './errors.js';
import type { PlatformClient, ReadResponse } from './platform-client.js';

/**
 * A sync feed of one result set: `POST {path}` (`/models/instances/sync`) with `body`, whose `with`
 * and `select` name the set `set` only. Every request repeats it with only `cursors` added.
 */
export interface SyncRequest extends ChainCommon {
  body: Readonly<Record<string, unknown>>;
  set: string;
  /** The set's page size (`with.<set>.limit`). */
  limit: number;
}

/** A page of a sync feed: always a cursor to go on from, and whether the feed has caught up. */
export interface SyncPage extends ChainPage {
  nextCursor: string;
  /**
   * Nothing more to read for now: the page held fewer instances than the limit, the platform's
   * one signal (its answer has no `moreData`). An older platform's `moreData` is not read: a
   * short page with `moreData: true` ends the run all the same (the cursor kept, the next run
   * reads on, nothing lost), so a feed that changes faster than it is read never keeps a run going.
   */
  caughtUp: boolean;
}

/** What a sync feed needs of the platform client. */
export type SyncClient = Pick<PlatformClient, 'postRead'>;

/**
 * Reads a sync feed from `startCursor` (undefined: from its start, a backfill) until it has caught
 * up (a page shorter than the limit): yields its pages in order, the last one with `caughtUp`.
 * Each instance stays as bytes until a writer reads it. An answer that breaks the contract (the
 * set or its cursor missing, a full page whose cursor was seen before, far more instances than the
 * limit) throws.
 */
export async function* drainSyncFeed(
  client: SyncClient,
  request: SyncRequest,
): AsyncGenerator<SyncPage, void, undefined> {
  const { path, body, set, limit, signal } = request;
  if ('cursors' in body) throw new TypeError('drainSyncFeed: pass the cursor as startCursor, not in the body');
  const seen = new RecentSet(LOOP_MEMORY);
  let cursor = request.startCursor;
  if (cursor !== undefined) seen.add(cursor);
  for (let pages = 1; ; pages++) {
    const hold = await holdBudget(request, 'POST');
    let page: SyncPage;
    try {
      const sent = cursor === undefined ? body : { ...body, cursors: { [set]: cursor } };
      const response = await client.postRead(path, sent, (bytes) => scanSyncPage(bytes, set), signal, hold);
      hold?.resize(response.bytes.length);
      const ctx: RequestContext = {
        method: 'POST',
        path: response.path,
        attempts: response.attempts,
        ...(response.requestId === undefined ? {} : { requestId: response.requestId }),
      };
      const read = readSyncAnswer(response, set, ctx);
      if (read.items.length > limit * MAX_PAGE_OVERSHOOT) {
        throw new BadResponseError(`The sync answer holds ${read.items.length} instances, far beyond limit=${limit}: refusing a server that ignores the limit`, ctx);
      }
      checkItems(request, read.items, ctx);
      const caughtUp = read.items.length < limit;
      if (!caughtUp && seen.has(read.nextCursor)) {
        throw new CursorLoopError(
          `The platform returned a sync cursor it had already returned in this feed (page ${pages}) with a full page, so more data follows: following it would never end`,
          ctx,
        );
      }
      const { bytes, requestId, attempts } = response;
      page = { ...read, bytes, cursor, requestId, attempts, caughtUp, release: () => hold?.release() };
    } catch (error) {
      hold?.release();
      throw error;
    }
    yield page;
    if (page.caughtUp) return;
    seen.add(page.nextCursor);
    cursor = page.nextCursor;
  }
}

interface SyncAnswer {
  items: PageItems;
  nextCursor: string;
}

/** The set's instances and cursor: found by the scan, or taken from the parsed body and checked. */
function readSyncAnswer(response: ReadResponse<ScannedSync>, set: string, ctx: RequestContext): SyncAnswer {
  const scan = response.read;
  const answer = scan === undefined ? checkedAnswer(response.body, set, ctx) : scannedAnswer(response.bytes, scan);
  if (answer.nextCursor === undefined) {
    throw new BadResponseError(`The sync answer has no nextCursor.${set}: the feed cannot go on from it`, ctx);
  }
  return { ...answer, nextCursor: answer.nextCursor };
}

function scannedAnswer(bytes: Buffer, scan: ScannedSync): Omit<SyncAnswer, 'nextCursor'> & { nextCursor: string | undefined } {
  return { items: PageItems.scanned(bytes, scan), nextCursor: scan.nextCursor };
}

/** The checks scanSyncPage's answer stands for, on a body JSON.parse read: each names what is wrong. */
function checkedAnswer(body: unknown, set: string, ctx: RequestContext): Omit<SyncAnswer, 'nextCursor'> & { nextCursor: string | undefined } {
  const fail = (message: string): never => {
    throw new BadResponseError(message, ctx);
  };
  if (!isObject(body)) return fail("Expected a JSON object with 'items' and 'nextCursor' from the sync feed");
  const { items, nextCursor } = body;
  const instances = isObject(items) ? items[set] : undefined;
  if (!Array.isArray(instances)) return fail(`The sync answer's items.${set} is missing or not an array`);
  const cursor = isObject(nextCursor) ? nextCursor[set] : undefined;
  if (cursor !== undefined && (typeof cursor !== 'string' || cursor === '')) {
    fail(`The sync answer's nextCursor.${set} must be a non-empty string`);
  }
  return { items: PageItems.of(instances), nextCursor: cursor as string | undefined };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
