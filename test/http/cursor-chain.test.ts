import { afterEach, describe, expect, it } from 'vitest';
import { Secret } from '../../src/util/secret.js';
import { StaticAuth } from '../../src/http/auth/static-auth.js';
import { type ChainPage, type ChainRequest, drainCursorChain, MAX_PAGE_OVERSHOOT } from '../../src/http/cursor-chain.js';
import { BadResponseError, CursorLoopError, InvalidJsonError, RepeatedPageError, type RequestError } from '../../src/http/errors.js';
import { MAX_JSON_DEPTH } from '../../src/util/json-limits.js';
import { PlatformClient, type PlatformClientOptions } from '../../src/http/platform-client.js';
import {
  type EventFilter,
  type FaultOptionsInput,
  type Simulator,
  type SimulatorOptions,
  type SimulatorStats,
  partitionRange,
  startSimulator,
} from '../../src/simulator/index.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';
import { type Item, idOf, indexes } from '../support/items.js';
import { type ScriptedResponse, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

const API_KEY = 'chain-test-api-key-4c1e8b7d';

const cleanup: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((close) => close()));
});

async function simulator(options: SimulatorOptions = {}, faults: FaultOptionsInput = {}): Promise<Simulator> {
  const sim = await startSimulator({ events: 1000, assets: 10, apiKeys: [API_KEY], ...options, faults });
  cleanup.push(() => sim.close());
  return sim;
}

async function scripted(
  respond: (request: { url: string }, index: number) => ScriptedResponse,
): Promise<ScriptedServer> {
  const server = await startScriptedServer(respond);
  cleanup.push(() => server.close());
  return server;
}

interface Harness {
  client: PlatformClient;
  clock: FakeClock;
}

function connect(baseUrl: string, options: Partial<PlatformClientOptions> = {}): Harness {
  const clock = createFakeClock();
  const client = new PlatformClient({
    baseUrl,
    auth: StaticAuth.apiKey(new Secret(API_KEY)),
    clock,
    random: () => 0.5,
    ...options,
  });
  cleanup.push(() => client.close());
  return { client, clock };
}

async function collect(client: PlatformClient, request: ChainRequest): Promise<ChainPage[]> {
  const pages: ChainPage[] = [];
  for await (const page of drainCursorChain(client, request)) pages.push(page);
  return pages;
}

/** Drains into `pages` (so a test sees what was yielded before a failure) and returns the error. */
async function drainUntilError(client: PlatformClient, request: ChainRequest, pages: ChainPage[]): Promise<unknown> {
  try {
    for await (const page of drainCursorChain(client, request)) pages.push(page);
  } catch (error) {
    return error;
  }
  throw new Error(`the chain ended without an error after ${pages.length} pages`);
}

function ids(pages: readonly ChainPage[]): number[] {
  return pages.flatMap((page) => (page.items.toArray() as Item[]).map(idOf));
}

/** Ids of the events in partition m/n that match `filter`, in index order. */
function expectedEventIds(sim: Simulator, filter: EventFilter = {}, partition?: { m: number; n: number }): number[] {
  const events = sim.dataset.events;
  const { start, end } = partitionRange(events.count, partition);
  return indexes(end - start)
    .map((i) => start + i)
    .filter((i) => events.matches(i, filter))
    .map((i) => events.idOf(i));
}

async function settled(sim: Simulator): Promise<SimulatorStats> {
  for (let turn = 0; turn < 10_000; turn++) {
    const stats = sim.stats();
    if (Object.values(stats.byStatus).reduce((sum, n) => sum + n, 0) === stats.requests) return stats;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('responses never all counted');
}

function withoutCursor(params: readonly [string, string][]): [string, string][] {
  return params.filter(([key]) => key !== 'cursor');
}

describe('chains against the simulator', () => {
  it('a filtered partition drains exactly, and every follow-up repeats the first params plus only a trailing cursor (invariant 1)', async () => {
    const sim = await simulator({ events: 6000, recordRequests: true });
    const { client } = connect(sim.baseUrl);
    const params = [
      ['limit', '50'],
      ['partition', '2/3'],
      ['type', 'alarm'],
    ] as const;
    const pages = await collect(client, { path: '/events', params });
    expect(ids(pages)).toEqual(expectedEventIds(sim, { type: 'alarm' }, { m: 2, n: 3 }));
    expect(pages.length).toBeGreaterThan(3);

    await settled(sim);
    const recorded = sim.requests().filter((r) => r.route === 'GET /events');
    expect(recorded).toHaveLength(pages.length);
    const [first, ...followUps] = recorded;
    expect(first?.params).toEqual(params);
    followUps.forEach((request, i) => {
      expect(withoutCursor(request.params)).toEqual(params);
      expect(request.params).toHaveLength(params.length + 1);
      expect(request.params.at(-1)).toEqual(['cursor', pages[i]?.nextCursor]);
      expect(request.status).toBe(200);
    });
    pages.forEach((page, i) => {
      expect(page.cursor).toBe(i === 0 ? undefined : pages[i - 1]?.nextCursor);
      expect(page.attempts).toBe(1);
      expect(page.requestId).toBe(recorded[i]?.requestId);
    });
    expect(pages.at(-1)?.nextCursor).toBeUndefined();
  });

  it('a POST chain (body, as POST /list pages) drains what the GET chain drains; every follow-up is the first body plus only cursor', async () => {
    const sim = await simulator({ events: 3000, recordRequests: true });
    const { client } = connect(sim.baseUrl);
    const body = { limit: 20, partition: '2/3', filter: { type: 'alarm' } };
    const pages = await collect(client, { path: '/events/list', body });
    expect(ids(pages)).toEqual(expectedEventIds(sim, { type: 'alarm' }, { m: 2, n: 3 }));
    expect(ids(await collect(client, { path: '/events', params: [['limit', '20'], ['partition', '2/3'], ['type', 'alarm']] }))).toEqual(ids(pages));
    expect(pages.length).toBeGreaterThan(3);

    await settled(sim);
    const recorded = sim.requests().filter((r) => r.route === 'POST /events/list');
    expect(recorded.map((r) => r.status)).toEqual(pages.map(() => 200));
    expect(recorded[0]?.body).toEqual(body);
    recorded.slice(1).forEach((request, i) => {
      expect(request.body).toEqual({ ...body, cursor: pages[i]?.nextCursor });
    });
    // Resumed from a cursor, the rest of the chain.
    const startCursor = pages[1]?.nextCursor;
    const resumed = await collect(client, { path: '/events/list', body, startCursor });
    expect([...ids(pages.slice(0, 2)), ...ids(resumed)]).toEqual(ids(pages));
  });

  it('a cursor inside the chain body is refused before any request: give it as startCursor', async () => {
    const { client } = connect('http://127.0.0.1:9');
    await expect(collect(client, { path: '/events/list', body: { limit: 10, cursor: 'x' } })).rejects.toThrow(TypeError);
  });

  it('startCursor resumes mid-chain: the remaining pages equal the rest of the original chain', async () => {
    const sim = await simulator();
    const { client } = connect(sim.baseUrl);
    const request: ChainRequest = { path: '/events', params: [['limit', '50']] };
    const original = await collect(client, request);
    expect(original).toHaveLength(20);
    const startCursor = original[7]?.nextCursor;
    expect(startCursor).toEqual(expect.any(String));

    const resumed = await collect(client, { ...request, startCursor });
    expect(resumed[0]?.cursor).toBe(startCursor);
    // Cursors are opaque and unique per issue (never compared as strings): compare the pages' items
    // and whether each page has a successor.
    const shape = (pages: ChainPage[]) =>
      pages.map(({ items, nextCursor }) => ({ items: items.toArray(), last: nextCursor === undefined }));
    expect(resumed).toHaveLength(12);
    expect(shape(resumed)).toEqual(shape(original.slice(8)));
    expect([...ids(original.slice(0, 8)), ...ids(resumed)]).toEqual(expectedEventIds(sim));
  });

  it('short and empty pages that carry a cursor are accepted: every item exactly once (shortPageRate 0.5)', async () => {
    const sim = await simulator({ events: 500 }, { shortPageRate: 0.5 });
    const { client } = connect(sim.baseUrl);
    const pages = await collect(client, { path: '/events', params: [['limit', '20']] });
    expect(ids(pages)).toEqual(expectedEventIds(sim));
    const short = pages.filter((page) => page.items.length < 20 && page.nextCursor !== undefined);
    expect(short.length).toBeGreaterThan(0);
    expect(pages.some((page) => page.items.length === 0 && page.nextCursor !== undefined)).toBe(true);
    expect((await settled(sim)).faults['short-page']).toBeGreaterThan(0);
  });

  it('a 200-page chain under 429s and 5xx yields every item exactly once, in order', async () => {
    const sim = await simulator({ events: 10_000 }, { rate429: 0.2, rate5xx: 0.05 });
    const { client, clock } = connect(sim.baseUrl, { retry: { maxAttempts: 20 } });
    const pages = await collect(client, { path: '/events', params: [['limit', '50']] });
    expect(pages).toHaveLength(200);
    const got = ids(pages);
    expect(new Set(got).size).toBe(10_000);
    expect(got).toEqual(expectedEventIds(sim));

    const served = await settled(sim);
    const fiveHundreds = ['500', '502', '503', '504'].reduce((sum, s) => sum + (served.byStatus[s] ?? 0), 0);
    expect(served.byStatus['429']).toBeGreaterThan(0);
    expect(fiveHundreds).toBeGreaterThan(0);
    expect(client.stats.retries).toBeGreaterThan(0);
    expect(client.stats.retries).toBe((served.byStatus['429'] ?? 0) + fiveHundreds);
    expect(client.stats.requests).toBe(served.requests);
    expect(clock.sleeps).toHaveLength(client.stats.retries);
    expect(pages.filter((page) => page.attempts > 1).length).toBeGreaterThan(0);
  });
});

describe('pages that break the contract (scripted server)', () => {
  const LIMIT_10: ChainRequest = { path: '/events', params: [['limit', '10']] };
  const FIRST_PATH = '/api/v1/projects/scripted/events?limit=10';

  /** Runs a one-page chain whose only answer is `body`; returns the error and checks the common ground. */
  async function rejectFirstPage(body: unknown): Promise<{ error: RequestError; server: ScriptedServer }> {
    const server = await scripted(() => ({ body: JSON.stringify(body) }));
    const { client } = connect(server.baseUrl);
    const pages: ChainPage[] = [];
    const error = await drainUntilError(client, LIMIT_10, pages);
    expect(pages).toEqual([]);
    expect(error).toBeInstanceOf(BadResponseError);
    const bad = error as BadResponseError;
    expect(bad).toMatchObject({ code: 'E_BAD_RESPONSE', path: FIRST_PATH, requestId: 'scripted-1', attempts: 1 });
    expect(bad.message).toContain(`GET ${FIRST_PATH}`);
    expect(bad.message).toContain('scripted-1');
    expect(server.requests).toHaveLength(1);
    return { error: bad, server };
  }

  it('a JSON array body is E_BAD_RESPONSE expecting an object with items', async () => {
    const { error } = await rejectFirstPage([{ id: 1 }]);
    expect(error.message).toContain("'items'");
    expect(error.message).toContain('an array');
  });

  it.each([null, 'text', 42, true])('a JSON %j body is E_BAD_RESPONSE', async (body) => {
    const { error } = await rejectFirstPage(body);
    expect(error.message).toContain("'items'");
  });

  it("{} (no items) is E_BAD_RESPONSE saying there is no 'items'", async () => {
    const { error } = await rejectFirstPage({});
    expect(error.message).toContain("no 'items'");
  });

  it.each([{ 0: { id: 1 } }, 'abc', null])('items %j is E_BAD_RESPONSE saying items is not an array', async (items) => {
    const { error } = await rejectFirstPage({ items });
    expect(error.message).toContain("'items' is not an array");
  });

  it.each([null, '', 123, ['c'], { c: 1 }])('nextCursor %j is E_BAD_RESPONSE naming nextCursor', async (nextCursor) => {
    const { error } = await rejectFirstPage({ items: [{ id: 1 }], nextCursor });
    expect(error.message).toContain('nextCursor');
  });

  it('a page with 100x the limit is E_BAD_RESPONSE naming the limit', async () => {
    const { error } = await rejectFirstPage({ items: indexes(1000).map((id) => ({ id })) });
    expect(error.message).toContain('limit=10');
    expect(error.message).toContain('1000 items');
  });

  it(`a page with limit x ${MAX_PAGE_OVERSHOOT} + 1 items is refused`, async () => {
    await rejectFirstPage({ items: indexes(10 * MAX_PAGE_OVERSHOOT + 1).map((id) => ({ id })) });
  });

  it('without a limit param, the platform default 100 is the yardstick', async () => {
    const server = await scripted((_req, i) => ({
      body: { items: indexes(i === 0 ? 100 * MAX_PAGE_OVERSHOOT : 100 * MAX_PAGE_OVERSHOOT + 1).map((id) => ({ id })), nextCursor: `c${i}` },
    }));
    const { client } = connect(server.baseUrl);
    const pages: ChainPage[] = [];
    const error = await drainUntilError(client, { path: '/events', params: [] }, pages);
    expect(pages).toHaveLength(1);
    expect(error).toBeInstanceOf(BadResponseError);
    expect((error as Error).message).toContain('limit=100');
  });

  it('a POST chain takes its yardstick from the body\'s limit, and names POST in the error', async () => {
    const items = indexes(10 * MAX_PAGE_OVERSHOOT + 1).map((id) => ({ id }));
    const server = await scripted(() => ({ body: { items } }));
    const { client } = connect(server.baseUrl);
    const error = await drainUntilError(client, { path: '/events/list', body: { limit: 10 } }, []);
    expect(error).toBeInstanceOf(BadResponseError);
    expect((error as Error).message).toContain('limit=10');
    expect((error as RequestError).method).toBe('POST');
    expect((error as Error).message).toContain('(POST ');
  });

  it('the caller\'s check of each page (checkItems): a problem it names is E_BAD_RESPONSE of that page\'s request, before the page is yielded', async () => {
    const instance = (n: number) => ({ space: 'sp', externalId: `n${n}`, id: n });
    const server = await scripted((_req, i) => ({ body: { items: [instance(2 * i), instance(2 * i + 1)], nextCursor: `c${i}` } }));
    const { client } = connect(server.baseUrl);
    const checkItems = (items: ChainPage['items']) =>
      Array.from({ length: items.length }, (_, i) => items.key(i)).some((key) => key.externalId === 'n3') ? 'n3 is not asked for' : undefined;
    const pages: ChainPage[] = [];
    const error = await drainUntilError(client, { path: '/models/instances/list', body: { limit: 10 }, checkItems }, pages);
    expect(ids(pages)).toEqual([0, 1]);
    expect(error).toBeInstanceOf(BadResponseError);
    expect((error as Error).message).toContain('n3 is not asked for (POST /api/v1/projects/scripted/models/instances/list, ');
    expect(error).toMatchObject({ requestId: 'scripted-2' });
  });

  it.each([11, 10 * MAX_PAGE_OVERSHOOT])('a page with %i items for limit 10 is tolerated', async (count) => {
    const server = await scripted(() => ({ body: { items: indexes(count).map((id) => ({ id })) } }));
    const { client } = connect(server.baseUrl);
    const pages = await collect(client, LIMIT_10);
    expect(ids(pages)).toEqual(indexes(count));
  });

  it('a cursor loop A -> B -> A is E_CURSOR_LOOP after the pages before it were yielded, without retry', async () => {
    const next: Record<string, string> = { '': 'A', 'A': 'B', 'B': 'A' };
    const server = await scripted((request, i) => {
      const cursor = new URL(request.url, 'http://x').searchParams.get('cursor') ?? '';
      return { body: { items: [{ id: i }], nextCursor: next[cursor] } };
    });
    const { client } = connect(server.baseUrl);
    const pages: ChainPage[] = [];
    const error = await drainUntilError(client, LIMIT_10, pages);
    expect(pages.map((p) => [p.cursor, p.nextCursor])).toEqual([
      [undefined, 'A'],
      ['A', 'B'],
    ]);
    expect(error).toBeInstanceOf(CursorLoopError);
    const loop = error as CursorLoopError;
    expect(loop).toMatchObject({ code: 'E_CURSOR_LOOP', path: `${FIRST_PATH}&cursor=B`, requestId: 'scripted-3' });
    expect(loop.message).toContain(`GET ${FIRST_PATH}&cursor=B`);
    expect(loop.message).toContain('scripted-3');
    expect(server.requests).toHaveLength(3);
  });

  it('a page handing back its own cursor (A -> A) is E_CURSOR_LOOP', async () => {
    const server = await scripted(() => ({ body: { items: [], nextCursor: 'A' } }));
    const { client } = connect(server.baseUrl);
    const pages: ChainPage[] = [];
    const error = await drainUntilError(client, LIMIT_10, pages);
    expect(pages).toHaveLength(1);
    expect(error).toBeInstanceOf(CursorLoopError);
    expect(server.requests).toHaveLength(2);
  });

  it('the same page under ever new cursors is E_REPEATED_PAGE at its second coming, after the pages before it', async () => {
    // A broken server: a fresh cursor each time, the same two items each time. Without the check the
    // chain never ends and writes the two items again and again.
    const server = await scripted((_request, i) => ({ body: { items: [{ id: 7 }, { id: 8 }], nextCursor: `fresh-${i}` } }));
    const { client } = connect(server.baseUrl);
    const pages: ChainPage[] = [];
    const error = await drainUntilError(client, LIMIT_10, pages);
    expect(ids(pages)).toEqual([7, 8]);
    expect(error).toBeInstanceOf(RepeatedPageError);
    expect(error).toMatchObject({ code: 'E_REPEATED_PAGE', path: `${FIRST_PATH}&cursor=fresh-0`, retryable: false });
    expect((error as Error).message).toContain('page 2 with the same 2 items as an earlier page');
    expect(server.requests).toHaveLength(2);
  });

  it('a page repeated later in the chain (A, B, A again) is E_REPEATED_PAGE too; pages that only share an item are not', async () => {
    const bodies = [[1, 2], [2, 3], [3, 4], [1, 2]];
    const server = await scripted((_request, i) => ({
      body: { items: (bodies[i] ?? []).map((id) => ({ id })), ...(i < bodies.length - 1 ? { nextCursor: `c${i}` } : {}) },
    }));
    const { client } = connect(server.baseUrl);
    const pages: ChainPage[] = [];
    const error = await drainUntilError(client, LIMIT_10, pages);
    expect(ids(pages)).toEqual([1, 2, 2, 3, 3, 4]);
    expect(error).toBeInstanceOf(RepeatedPageError);
  });

  it('an item nesting the page deeper than MAX_JSON_DEPTH is E_BAD_RESPONSE naming the item and the limit, not a stack overflow', async () => {
    const depth = 100_000;
    const deep = `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const server = await scripted(() => ({ body: `{"items":[{"id":1},{"id":2,"x":${deep}}]}` }));
    const { client } = connect(server.baseUrl);
    const pages: ChainPage[] = [];
    const error = await drainUntilError(client, LIMIT_10, pages);
    expect(pages).toEqual([]);
    expect(error).toBeInstanceOf(BadResponseError);
    expect((error as Error).message).toContain(`The answer is nested deeper than ${MAX_JSON_DEPTH} levels at items[1] (id 2).x[0]`);
  });

  it(`a page exactly ${MAX_JSON_DEPTH} levels deep is read, and written as NDJSON`, async () => {
    // The page's object and its items array are two of the levels, the item a third.
    const inner = `${'['.repeat(MAX_JSON_DEPTH - 3)}${']'.repeat(MAX_JSON_DEPTH - 3)}`;
    const server = await scripted(() => ({ body: `{"items":[{"id":3,"x":${inner}}]}` }));
    const { client } = connect(server.baseUrl);
    const [page] = await collect(client, LIMIT_10);
    expect(Buffer.from(page?.items.lines() ?? []).toString()).toBe(`{"id":3,"x":${inner}}\n`);
  });

  it('a chain resumed at startCursor S that hands back S is E_CURSOR_LOOP on its first page', async () => {
    const server = await scripted(() => ({ body: { items: [{ id: 1 }], nextCursor: 'S' } }));
    const { client } = connect(server.baseUrl);
    const pages: ChainPage[] = [];
    const error = await drainUntilError(client, { ...LIMIT_10, startCursor: 'S' }, pages);
    expect(pages).toEqual([]);
    expect(error).toBeInstanceOf(CursorLoopError);
    expect(server.requests.map((r) => r.url)).toEqual([`${FIRST_PATH}&cursor=S`]);
  });

  it('a body that is not JSON is E_INVALID_JSON after maxAttempts attempts', async () => {
    const server = await scripted(() => ({ body: '{"items":[{"id":1}' }));
    const { client, clock } = connect(server.baseUrl, { retry: { maxAttempts: 3 } });
    const pages: ChainPage[] = [];
    const error = await drainUntilError(client, LIMIT_10, pages);
    expect(pages).toEqual([]);
    expect(error).toBeInstanceOf(InvalidJsonError);
    expect(error).toMatchObject({ code: 'E_INVALID_JSON', attempts: 3, path: FIRST_PATH });
    expect((error as Error).message).toContain(FIRST_PATH);
    expect(server.requests).toHaveLength(3);
    expect(clock.sleeps).toHaveLength(2);
  });

  it('a bad second page fails after the first page was yielded, naming the second request', async () => {
    const server = await scripted((_req, i) => ({ body: i === 0 ? { items: [{ id: 1 }], nextCursor: 'n1' } : { items: 'oops' } }));
    const { client } = connect(server.baseUrl);
    const pages: ChainPage[] = [];
    const error = await drainUntilError(client, LIMIT_10, pages);
    expect(ids(pages)).toEqual([1]);
    expect(error).toBeInstanceOf(BadResponseError);
    expect((error as Error).message).toContain(`${FIRST_PATH}&cursor=n1`);
    expect(server.requests).toHaveLength(2);
  });
});

describe('arguments', () => {
  it("'cursor' inside params is a TypeError, before any request", async () => {
    const server = await scripted(() => ({ body: { items: [] } }));
    const { client } = connect(server.baseUrl);
    const chain = drainCursorChain(client, { path: '/events', params: [['limit', '10'], ['cursor', 'abc']] });
    const first = chain.next();
    await expect(first).rejects.toThrow(TypeError);
    await expect(first).rejects.toThrow(/startCursor/);
    expect(server.requests).toHaveLength(0);
  });
});
