import { describe, expect, it } from 'vitest';
import { MAX_PAGE_OVERSHOOT } from '../../src/http/cursor-chain.js';
import { AbortedError, BadResponseError, CursorLoopError, type RequestError } from '../../src/http/errors.js';
import type { ReadResponse } from '../../src/http/platform-client.js';
import { drainSyncFeed, type SyncClient, type SyncPage, type SyncRequest } from '../../src/http/sync-chain.js';
import { ByteBudget } from '../../src/page/byte-budget.js';
import { MAX_JSON_DEPTH } from '../../src/util/json-limits.js';

const SET = 'instances';
const PATH = '/models/instances/sync';
/** The path the fake client says it requested, as the platform client does: with the project's prefix. */
const FULL_PATH = `/api/v1/projects/fake${PATH}`;
const LIMIT = 3;
const VIEW = { type: 'view', space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };
const BODY = {
  with: { [SET]: { nodes: { filter: { hasData: [VIEW] } }, limit: LIMIT } },
  select: { [SET]: { sources: [{ source: VIEW, properties: ['*'] }] } },
};
const REQUEST: SyncRequest = { path: PATH, body: BODY, set: SET, limit: LIMIT };

/** Lets every settled promise run its callbacks. */
const settle = () => new Promise((done) => setImmediate(done));

const node = (id: number) => ({ instanceType: 'node', space: 'sp', externalId: `n${id}`, version: 1, properties: {} });

/**
 * An answer of the sync feed: the set's instances and its cursor (left out when undefined); an
 * older platform's `moreData` too, when given.
 */
function answer(ids: readonly number[], next: string | undefined, moreData?: boolean): Record<string, unknown> {
  return {
    items: { [SET]: ids.map(node) },
    ...(next === undefined ? {} : { nextCursor: { [SET]: next } }),
    ...(moreData === undefined ? {} : { moreData }),
  };
}

/**
 * How an answer reaches the feed: as written (`scan`: scanSyncPage reads a plain answer), or with a
 * first key written with an escape (`parse`: scanSyncPage leaves it, the feed checks JSON.parse's value).
 */
type Route = 'scan' | 'parse';

function text(given: unknown, route: Route): string {
  if (typeof given === 'string') return given;
  const json = JSON.stringify(given);
  if (route === 'scan' || given === null || typeof given !== 'object' || Array.isArray(given)) return json;
  return json === '{}' ? '{"\\u0078":0}' : `{"\\u0078":0,${json.slice(1)}`;
}

interface Sent {
  path: string;
  body: Record<string, unknown>;
  signal: AbortSignal | undefined;
  /** Bytes the budget held when the request went out. */
  held: number | undefined;
  /** Whether scanSyncPage read the answer (else the feed got JSON.parse's value). */
  scanned: boolean;
}

interface Fake {
  client: SyncClient;
  sent: Sent[];
}

/**
 * A client whose answer to each request is `respond(cursor sent in cursors.<set>, request index)`:
 * an object (JSON.stringify'd, by `route`) or the body's text. As PlatformClient.postRead does, it
 * runs `read` on the bytes and parses them only when `read` leaves them.
 */
function fakeClient(
  respond: (cursor: string | undefined, index: number) => unknown,
  options: { route?: Route; budget?: ByteBudget } = {},
): Fake {
  const sent: Sent[] = [];
  const client: SyncClient = {
    postRead<T>(
      path: string,
      body: Readonly<Record<string, unknown>>,
      read: (bytes: Buffer) => T | undefined,
      signal?: AbortSignal,
    ): Promise<ReadResponse<T>> {
      const index = sent.length;
      // A feed that never stops (a broken loop check) fails here, not at the test's timeout.
      if (index >= 50) throw new Error('the feed sent 50 requests: it does not stop');
      const cursors = body.cursors as Record<string, string> | undefined;
      const bytes = Buffer.from(text(respond(cursors?.[SET], index), options.route ?? 'scan'));
      const value = read(bytes);
      const held = options.budget?.held;
      sent.push({ path, body: structuredClone(body), signal, held, scanned: value !== undefined });
      return Promise.resolve({
        body: value === undefined ? JSON.parse(bytes.toString('utf8')) : undefined,
        bytes,
        read: value,
        path: FULL_PATH,
        requestId: `fake-${index + 1}`,
        attempts: 1,
      });
    },
  };
  return { client, sent };
}

/** A feed whose answer to each cursor ('' for none) is given; any other cursor fails the test. */
function feed(answers: Record<string, unknown>, options: { route?: Route; budget?: ByteBudget } = {}): Fake {
  return fakeClient((cursor) => {
    const key = cursor ?? '';
    if (!Object.hasOwn(answers, key)) throw new Error(`the feed asked for cursor ${JSON.stringify(cursor)}, which the test did not expect`);
    return answers[key];
  }, options);
}

async function collect(client: SyncClient, request: SyncRequest): Promise<SyncPage[]> {
  const pages: SyncPage[] = [];
  for await (const page of drainSyncFeed(client, request)) pages.push(page);
  return pages;
}

/** Drains into `pages` (so a test sees what was yielded before a failure) and returns the error. */
async function drainUntilError(client: SyncClient, request: SyncRequest, pages: SyncPage[]): Promise<RequestError> {
  try {
    for await (const page of drainSyncFeed(client, request)) pages.push(page);
  } catch (error) {
    return error as RequestError;
  }
  throw new Error(`the feed ended without an error after ${pages.length} pages`);
}

/** The numbers of the nodes the pages hold, in order (node(id) writes them into externalId). */
const ids = (pages: readonly SyncPage[]) =>
  pages.flatMap((page) => page.items.toArray().map((item) => idOf(item as ReturnType<typeof node>)));
const idOf = ({ externalId }: { externalId: string }) => Number(externalId.slice(1));
const steps = (pages: readonly SyncPage[]) => pages.map((page) => [page.cursor, page.nextCursor, page.caughtUp]);

describe.each(['scan', 'parse'] as const)('a sync feed, answers read by %s', (route) => {
  it("follows the set's cursor in cursors.<set>, repeating the body and sending no cursor", async () => {
    const given = [answer([1, 2, 3], 'A'), answer([4, 5, 6], 'B'), answer([7], 'C')];
    const { client, sent } = feed({ '': given[0], 'A': given[1], 'B': given[2] }, { route });
    const before = structuredClone(BODY);
    const pages = await collect(client, REQUEST);
    expect(steps(pages)).toEqual([[undefined, 'A', false], ['A', 'B', false], ['B', 'C', true]]);
    expect(ids(pages)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(sent.map((s) => s.scanned), 'the answers took the route under test').toEqual(Array(3).fill(route === 'scan'));
    expect(sent.map((s) => s.path)).toEqual([PATH, PATH, PATH]);
    expect(sent[0]?.body).toStrictEqual(BODY);
    expect(sent[1]?.body).toStrictEqual({ ...BODY, cursors: { [SET]: 'A' } });
    expect(sent[2]?.body).toStrictEqual({ ...BODY, cursors: { [SET]: 'B' } });
    sent.forEach((s) => expect(s.body).not.toHaveProperty('cursor'));
    expect(BODY, 'the caller\'s body is left as it was').toStrictEqual(before);
    expect(pages.map((p) => [p.requestId, p.attempts])).toEqual([['fake-1', 1], ['fake-2', 1], ['fake-3', 1]]);
    pages.forEach((page, i) => expect(page.bytes.toString(), 'each page keeps its answer\'s bytes').toBe(text(given[i], route)));
  });

  it('a full page goes on and a short page is caught up', async () => {
    const { client, sent } = feed({ '': answer([1, 2, 3], 'A'), 'A': answer([4, 5], 'B') }, { route });
    const pages = await collect(client, REQUEST);
    expect(steps(pages)).toEqual([[undefined, 'A', false], ['A', 'B', true]]);
    expect(sent).toHaveLength(2);
  });

  it('an empty page is caught up', async () => {
    const pages = await collect(feed({ '': answer([], 'A') }, { route }).client, REQUEST);
    expect(steps(pages)).toEqual([[undefined, 'A', true]]);
  });

  it("an older platform's moreData is not read: false on a full page goes on, true on a short page is caught up", async () => {
    const { client, sent } = feed({ '': answer([1, 2, 3], 'A', false), 'A': answer([4], 'B', true) }, { route });
    const pages = await collect(client, REQUEST);
    expect(steps(pages)).toEqual([[undefined, 'A', false], ['A', 'B', true]]);
    expect(ids(pages)).toEqual([1, 2, 3, 4]);
    expect(sent).toHaveLength(2);
  });

  it('a resumed feed starts from startCursor: its first request carries it in cursors.<set>', async () => {
    const { client, sent } = feed({ S: answer([6, 7, 8], 'T'), T: answer([9], 'U') }, { route });
    const pages = await collect(client, { ...REQUEST, startCursor: 'S' });
    expect(steps(pages)).toEqual([['S', 'T', false], ['T', 'U', true]]);
    expect(sent.map((s) => s.body)).toStrictEqual([{ ...BODY, cursors: { [SET]: 'S' } }, { ...BODY, cursors: { [SET]: 'T' } }]);
  });

  it('a caught-up page may hand back the cursor it was asked with (nothing changed since)', async () => {
    const pages = await collect(feed({ S: answer([], 'S') }, { route }).client, { ...REQUEST, startCursor: 'S' });
    expect(steps(pages)).toEqual([['S', 'S', true]]);
    const short = await collect(feed({ S: answer([1], 'S') }, { route }).client, { ...REQUEST, startCursor: 'S' });
    expect(steps(short), 'a short page').toEqual([['S', 'S', true]]);
  });

  it(`limit x ${MAX_PAGE_OVERSHOOT} instances are tolerated; the feed goes on after them`, async () => {
    const many = Array.from({ length: LIMIT * MAX_PAGE_OVERSHOOT }, (_, i) => i);
    const pages = await collect(feed({ '': answer(many, 'A'), 'A': answer([], 'B') }, { route }).client, REQUEST);
    expect(ids(pages)).toEqual(many);
  });

  it('other result sets and typing around the set are passed over; its instances become NDJSON lines', async () => {
    const given = {
      typing: { [SET]: { sp: { CogniteAsset: { name: { type: 'text' } } } } },
      items: { before: [node(90)], [SET]: [node(1), node(2)], after: [node(91)] },
      nextCursor: { before: 'cb', [SET]: 'A', after: 'ca' },
    };
    const [page, ...rest] = await collect(feed({ '': given }, { route }).client, REQUEST);
    expect(rest).toEqual([]);
    expect(page).toMatchObject({ nextCursor: 'A', caughtUp: true });
    expect(Buffer.from(page!.items.lines()).toString()).toBe(`${JSON.stringify(node(1))}\n${JSON.stringify(node(2))}\n`);
  });

  it(`an answer exactly ${MAX_JSON_DEPTH} levels deep is read`, async () => {
    // The answer's object, items, the set's array and the instance are four of the levels.
    const inner = `${'['.repeat(MAX_JSON_DEPTH - 4)}${']'.repeat(MAX_JSON_DEPTH - 4)}`;
    const given = { items: { [SET]: ['INNER'] }, nextCursor: { [SET]: 'c' } };
    const body = text(given, route).replace('"INNER"', `{"x":${inner}}`);
    const { client, sent } = fakeClient(() => body);
    const [page] = await collect(client, REQUEST);
    expect(sent[0]?.scanned).toBe(route === 'scan');
    expect(Buffer.from(page!.items.lines()).toString()).toBe(`{"x":${inner}}\n`);
  });

  it('the instances are the answer\'s, kept as its bytes when the scan read them', async () => {
    const [page] = await collect(feed({ '': answer([1, 2], 'A') }, { route }).client, REQUEST);
    expect(page?.items.toArray()).toEqual([node(1), node(2)]);
    expect(page?.items.itemBytes(0) !== undefined).toBe(route === 'scan');
  });
});

describe.each(['scan', 'parse'] as const)('the caller\'s check of each page (checkItems), answers read by %s', (route) => {
  it('a problem it names fails the feed with E_BAD_RESPONSE naming the request, before the page is yielded', async () => {
    const { client, sent } = feed({ '': answer([1, 2, 3], 'A'), 'A': answer([4, 5], 'B') }, { route });
    const seen: string[][] = [];
    const checkItems = (items: SyncPage['items']) => {
      const keys = Array.from({ length: items.length }, (_, i) => `${items.key(i).space}:${items.key(i).externalId}`);
      seen.push(keys);
      return keys.includes('sp:n4') ? 'Instance sp:n4 is not one the query asks for' : undefined;
    };
    const pages: SyncPage[] = [];
    const error = await drainUntilError(client, { ...REQUEST, checkItems }, pages);
    expect(seen).toEqual([['sp:n1', 'sp:n2', 'sp:n3'], ['sp:n4', 'sp:n5']]);
    expect(ids(pages)).toEqual([1, 2, 3]);
    expect(error).toBeInstanceOf(BadResponseError);
    expect(error.message).toBe(`Instance sp:n4 is not one the query asks for (POST ${FULL_PATH}, request id fake-2, after 1 attempt)`);
    expect(sent).toHaveLength(2);
  });
});

describe('answers that break the contract', () => {
  /**
   * A feed whose first answer is `given`: the error, after checking what every such error shares.
   * `scanned`: whether scanSyncPage must have read the answer (the check then ran on its scan).
   */
  async function rejectFirst(given: unknown, route: Route = 'scan', scanned = false): Promise<RequestError> {
    const { client, sent } = fakeClient(() => given, { route });
    const pages: SyncPage[] = [];
    const error = await drainUntilError(client, REQUEST, pages);
    expect(pages).toEqual([]);
    expect(sent.map((s) => s.scanned)).toEqual([scanned]);
    expect(error).toBeInstanceOf(BadResponseError);
    expect(error).toMatchObject({ code: 'E_BAD_RESPONSE', method: 'POST', path: FULL_PATH, requestId: 'fake-1', attempts: 1, retryable: false });
    expect(error.message).toContain(`(POST ${FULL_PATH}, request id fake-1, after 1 attempt)`);
    return error;
  }

  describe.each(['scan', 'parse'] as const)('read by %s', (route) => {
    it.each([
      ['the set missing from items', { items: { other: [node(1)] }, nextCursor: { [SET]: 'c' } }],
      ['items empty', { items: {}, nextCursor: { [SET]: 'c' } }],
      ['no items', { nextCursor: { [SET]: 'c' } }],
      ['items an array (the list shape)', { items: [node(1)], nextCursor: { [SET]: 'c' } }],
      ['items of the set an object', { items: { [SET]: { 0: node(1) } }, nextCursor: { [SET]: 'c' } }],
      ['items of the set null', { items: { [SET]: null }, nextCursor: { [SET]: 'c' } }],
      ['items of the set a string', { items: { [SET]: '[]' }, nextCursor: { [SET]: 'c' } }],
    ])('%s: names items.<set>', async (_name, given) => {
      const error = await rejectFirst(given, route);
      expect(error.message).toContain(`The sync answer's items.${SET} is missing or not an array`);
    });

    it.each([
      ['no nextCursor', { items: { [SET]: [] } }, true],
      ['nextCursor empty', { items: { [SET]: [] }, nextCursor: {} }, true],
      ['nextCursor for another set only', { items: { [SET]: [] }, nextCursor: { other: 'c' } }, true],
      ['nextCursor a string (the list shape)', { items: { [SET]: [] }, nextCursor: 'c' }, false],
    ])('%s: says there is no nextCursor.<set>', async (_name, given, scannable) => {
      const error = await rejectFirst(given, route, scannable && route === 'scan');
      expect(error.message).toContain(`The sync answer has no nextCursor.${SET}: the feed cannot go on from it`);
    });

    it.each([
      ['an empty string', ''],
      ['a number', 7],
      ['null', null],
      ['an object', { c: 'x' }],
    ])('nextCursor.<set> %s: names it and what it must be', async (_name, cursor) => {
      const error = await rejectFirst({ items: { [SET]: [] }, nextCursor: { [SET]: cursor } }, route);
      expect(error.message).toContain(`The sync answer's nextCursor.${SET} must be a non-empty string`);
    });

    it.each([['"true" (a string)', 'true'], ['null', null], ['1', 1]])('an older platform\'s moreData %s is passed over', async (_name, moreData) => {
      const pages = await collect(feed({ '': { items: { [SET]: [node(1)] }, nextCursor: { [SET]: 'c' }, moreData } }, { route }).client, REQUEST);
      expect(steps(pages)).toEqual([[undefined, 'c', true]]);
      expect(ids(pages)).toEqual([1]);
    });

    it('far more instances than the limit: names the count and the limit', async () => {
      const error = await rejectFirst(answer(Array.from({ length: 100 }, (_, i) => i), 'c'), route, route === 'scan');
      expect(error.message).toContain(`The sync answer holds 100 instances, far beyond limit=${LIMIT}`);
    });

    it(`limit x ${MAX_PAGE_OVERSHOOT} + 1 instances are refused`, async () => {
      const many = Array.from({ length: LIMIT * MAX_PAGE_OVERSHOOT + 1 }, (_, i) => i);
      const error = await rejectFirst(answer(many, 'c'), route, route === 'scan');
      expect(error.message).toContain(`holds ${LIMIT * MAX_PAGE_OVERSHOOT + 1} instances, far beyond limit=${LIMIT}`);
    });
  });

  it.each([
    ['a JSON array', [answer([1], 'c')]],
    ['null', null],
    ['a string', 'text'],
    ['a number', 42],
  ])('a body that is %s: expects an object', async (_name, given) => {
    const error = await rejectFirst(typeof given === 'string' ? JSON.stringify(given) : given);
    expect(error.message).toContain("Expected a JSON object with 'items' and 'nextCursor' from the sync feed");
  });

  it('a bad second page fails after the first was yielded, naming the second request', async () => {
    const { client, sent } = feed({ '': answer([1, 2, 3], 'A'), 'A': { items: { [SET]: 'oops' }, nextCursor: { [SET]: 'B' } } });
    const pages: SyncPage[] = [];
    const error = await drainUntilError(client, REQUEST, pages);
    expect(ids(pages)).toEqual([1, 2, 3]);
    expect(error).toBeInstanceOf(BadResponseError);
    expect(error).toMatchObject({ requestId: 'fake-2' });
    expect(sent).toHaveLength(2);
  });
});

describe('cursor loops', () => {
  it.each(['scan', 'parse'] as const)('A -> B -> A on full pages (more data follows) is E_CURSOR_LOOP at page 3 (%s)', async (route) => {
    const { client, sent } = feed({ '': answer([1, 2, 3], 'A'), 'A': answer([4, 5, 6], 'B'), 'B': answer([7, 8, 9], 'A') }, { route });
    const pages: SyncPage[] = [];
    const error = await drainUntilError(client, REQUEST, pages);
    expect(steps(pages)).toEqual([[undefined, 'A', false], ['A', 'B', false]]);
    expect(error).toBeInstanceOf(CursorLoopError);
    expect(error).toMatchObject({ code: 'E_CURSOR_LOOP', method: 'POST', path: FULL_PATH, requestId: 'fake-3', retryable: false });
    expect(error.message).toContain('already returned in this feed (page 3) with a full page, so more data follows');
    expect(sent).toHaveLength(3);
  });

  it('a full page handing back its own cursor (A -> A) is E_CURSOR_LOOP', async () => {
    const { client, sent } = feed({ '': answer([1, 2, 3], 'A'), 'A': answer([4, 5, 6], 'A') });
    const pages: SyncPage[] = [];
    const error = await drainUntilError(client, REQUEST, pages);
    expect(pages).toHaveLength(1);
    expect(error).toBeInstanceOf(CursorLoopError);
    expect(error.message).toContain('(page 2)');
    expect(sent).toHaveLength(2);
  });

  it('a feed resumed at S whose first answer hands back S on a full page is E_CURSOR_LOOP on its first page', async () => {
    const { client, sent } = feed({ S: answer([1, 2, 3], 'S') });
    const pages: SyncPage[] = [];
    const error = await drainUntilError(client, { ...REQUEST, startCursor: 'S' }, pages);
    expect(pages).toEqual([]);
    expect(error).toBeInstanceOf(CursorLoopError);
    expect(error.message).toContain('(page 1)');
    expect(sent).toHaveLength(1);
  });
});

describe('the byte budget', () => {
  const first = answer([1, 2, 3], 'A');
  const size = Buffer.byteLength(JSON.stringify(first));

  it('each page holds its bytes from before its request until the consumer releases it', async () => {
    const budget = new ByteBudget(100_000);
    const { client, sent } = feed({ '': first, 'A': answer([4, 5, 6], 'B'), 'B': answer([], 'C') }, { budget });
    const pages = drainSyncFeed(client, { ...REQUEST, budget });

    const one = (await pages.next()).value as SyncPage;
    expect(sent[0]?.held, 'a path not seen yet holds the whole budget while its first request is out').toBe(100_000);
    expect(budget.held, 'then the page holds its real size').toBe(size);
    expect(one.bytes.length).toBe(size);
    expect(budget.pages).toBe(1);

    const two = (await pages.next()).value as SyncPage;
    expect(sent[1]?.held, 'page 1, and the estimate for page 2 (the size page 1 taught)').toBe(2 * size);
    expect(budget.held).toBe(size + two.bytes.length);
    expect(budget.pages).toBe(2);

    one.release();
    expect(budget.held).toBe(two.bytes.length);
    one.release();
    expect(budget.held, 'a second release gives nothing back twice').toBe(two.bytes.length);
    two.release();
    expect(budget.held).toBe(0);

    const three = (await pages.next()).value as SyncPage;
    expect(three.caughtUp).toBe(true);
    expect(budget.pages).toBe(1);
    three.release();
    expect(await pages.next()).toEqual({ done: true, value: undefined });
    expect(budget.held).toBe(0);
    expect(budget.pages).toBe(0);
  });

  it('the next request waits for room: it goes out only once an earlier page is released', async () => {
    const budget = new ByteBudget(Math.floor(size * 1.5));
    const { client, sent } = feed({ '': first, 'A': answer([4, 5], 'B') }, { budget });
    const pages = drainSyncFeed(client, { ...REQUEST, budget });
    const one = (await pages.next()).value as SyncPage;
    let second: IteratorResult<SyncPage> | undefined;
    void pages.next().then((result) => (second = result));
    await settle();
    expect(sent, 'page 2 does not fit beside page 1').toHaveLength(1);
    expect(second).toBeUndefined();
    one.release();
    await settle();
    expect(sent).toHaveLength(2);
    expect(second?.value).toMatchObject({ cursor: 'A', caughtUp: true });
  });

  it('an answer that breaks the contract gives its bytes back before the error reaches the consumer', async () => {
    const budget = new ByteBudget(100_000);
    const { client, sent } = feed({ '': first, 'A': answer([4, 5, 6], 'A') }, { budget });
    const pages = drainSyncFeed(client, { ...REQUEST, budget });
    const one = (await pages.next()).value as SyncPage;
    const failed = expect(pages.next()).rejects.toThrow(CursorLoopError);
    await settle();
    expect(sent, 'page 2 was asked for beside page 1').toHaveLength(2);
    await failed;
    expect(budget.held, 'only page 1, which the consumer still holds').toBe(size);
    one.release();
    expect(budget.held).toBe(0);
    expect(budget.pages).toBe(0);

    const bad = feed({ '': { items: {} } }, { budget });
    await expect(collect(bad.client, { ...REQUEST, budget })).rejects.toThrow(BadResponseError);
    expect(budget.held).toBe(0);
    expect(budget.pages).toBe(0);
  });

  it('aborted while waiting for room: E_ABORTED, and no request goes out', async () => {
    const budget = new ByteBudget(Math.floor(size * 1.5));
    const controller = new AbortController();
    const { client, sent } = feed({ '': first, 'A': answer([4], 'B') }, { budget });
    const pages = drainSyncFeed(client, { ...REQUEST, budget, signal: controller.signal });
    const one = (await pages.next()).value as SyncPage;
    expect(sent[0]?.signal, 'the request carries the feed\'s signal').toBe(controller.signal);
    const waiting = pages.next();
    await settle();
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(AbortedError);
    await expect(waiting).rejects.toMatchObject({ code: 'E_ABORTED', method: 'POST', path: PATH });
    expect(sent).toHaveLength(1);
    one.release();
    expect(budget.held).toBe(0);
  });
});

describe('arguments', () => {
  it.each([
    ['cursors for the set', { ...BODY, cursors: { [SET]: 'c' } }],
    ['empty cursors', { ...BODY, cursors: {} }],
    ['cursors undefined', { ...BODY, cursors: undefined }],
  ])('a body with %s is a TypeError naming startCursor, before any request', async (_name, body) => {
    const budget = new ByteBudget(1000);
    const { client, sent } = feed({ '': answer([], 'c'), 'c': answer([], 'c') }, { budget });
    const first = drainSyncFeed(client, { ...REQUEST, body, budget, startCursor: 'c' }).next();
    await expect(first).rejects.toThrow(TypeError);
    await expect(first).rejects.toThrow(/startCursor/);
    expect(sent).toHaveLength(0);
    expect(budget.pages).toBe(0);
  });
});
