import { afterEach, describe, expect, it } from 'vitest';
import {
  type FaultOptionsInput,
  type Simulator,
  type SimulatorOptions,
  startSimulator,
} from '../../src/simulator/index.js';
import type { Clock } from '../../src/util/clock.js';
import { createFakeClock } from '../support/fake-clock.js';
import { drain, listUrl, type Page, type Reply, send } from '../support/http.js';

const API_KEY = 'faults-api-key-01';
const AUTH = { 'api-key': API_KEY };
const CLIENT = { id: 'faults-client', secret: 'faults-secret-1' };

interface ErrorBody {
  error: { code: number; message: string };
}

interface Item {
  id: number;
}

const open: Simulator[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((sim) => sim.close()));
});

async function simulator(faults: FaultOptionsInput = {}, options: SimulatorOptions = {}): Promise<Simulator> {
  const sim = await startSimulator({
    assets: 20,
    events: 50,
    apiKeys: [API_KEY],
    clients: [CLIENT],
    ...options,
    faults,
  });
  open.push(sim);
  return sim;
}

function list(sim: Simulator, params: Record<string, string | number | undefined> = { limit: 10 }) {
  return send(listUrl(sim.baseUrl, '/events', params), { headers: AUTH });
}

/** Lets the event loop run until `done()` holds; fails after a bounded number of turns. */
async function until(done: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 10_000; turn++) {
    if (done()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** Response counters are updated when the server side of a response closes: wait for `count`. */
async function settled(sim: Simulator, count: number): Promise<void> {
  const total = () => Object.values(sim.stats().byStatus).reduce((sum, n) => sum + n, 0);
  await until(() => total() >= count, `${count} responses counted`);
}

function expectErrorBody(reply: Reply, status: number): ErrorBody {
  expect(reply.status).toBe(status);
  expect(reply.headers['content-type']).toMatch(/^application\/json/);
  const body = reply.json<ErrorBody>();
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe(status);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(0);
  return body;
}

/**
 * Follows one cursor chain, repeating the same request on 429 and 5xx. Returns every status seen
 * and every item served, in order.
 */
async function drainWithRetries(
  sim: Simulator,
  params: Record<string, string | number>,
  maxRequests: number,
): Promise<{ statuses: number[]; items: Item[]; pages: number }> {
  const statuses: number[] = [];
  const items: Item[] = [];
  let pages = 0;
  let cursor: string | undefined;
  for (let n = 0; n < maxRequests; n++) {
    const reply = await list(sim, { ...params, cursor });
    statuses.push(reply.status);
    if (reply.status === 429 || reply.status >= 500) continue;
    if (reply.status !== 200) throw new Error(`unexpected ${reply.status}: ${reply.text}`);
    const page = reply.json<Page<Item>>();
    pages++;
    items.push(...page.items);
    cursor = page.nextCursor;
    if (cursor === undefined) return { statuses, items, pages };
  }
  throw new Error(`chain not drained within ${maxRequests} requests`);
}

function expectEveryEventOnce(sim: Simulator, items: readonly Item[]): void {
  const ids = items.map((item) => item.id);
  expect(new Set(ids).size).toBe(ids.length);
  const expected = Array.from({ length: sim.dataset.events.count }, (_, i) => sim.dataset.events.idOf(i));
  expect(ids).toEqual(expected);
}

describe('status faults', () => {
  it('rate429=1: 429 with the platform concurrent-requests message and no Retry-After', async () => {
    const sim = await simulator({ rate429: 1 });
    const reply = await list(sim);
    const body = expectErrorBody(reply, 429);
    expect(body.error.message).toMatch(
      /^Project exceeded maximum number='\d+' of concurrent requests\. Please try again later\.$/,
    );
    expect(reply.headers['retry-after']).toBeUndefined();
    expect(sim.stats().faults['429']).toBe(1);
  });

  it('rate429RetryAfter=1 with retryAfterSeconds 7: 429 with Retry-After: 7', async () => {
    const sim = await simulator({ rate429RetryAfter: 1, retryAfterSeconds: 7 });
    const reply = await list(sim);
    expectErrorBody(reply, 429);
    expect(reply.headers['retry-after']).toBe('7');
    expect(sim.stats().faults['429-retry-after']).toBe(1);
  });

  for (const status of [500, 502, 503, 504] as const) {
    it(`rate${status}=1: ${status} with the JSON error body`, async () => {
      const sim = await simulator({ [`rate${status}`]: 1 });
      const reply = await list(sim);
      expectErrorBody(reply, status);
      expect(sim.stats().faults[`${status}`]).toBe(1);
      expect(sim.stats().pages).toBe(0);
    });
  }

  for (const status of [502, 503, 504] as const) {
    it(`htmlErrors: ${status} answers text/html from the load balancer`, async () => {
      const sim = await simulator({ [`rate${status}`]: 1, htmlErrors: true });
      const reply = await list(sim);
      expect(reply.status).toBe(status);
      expect(reply.headers['content-type']).toMatch(/^text\/html/);
      expect(reply.text).toContain('<html');
      expect(() => JSON.parse(reply.text)).toThrow();
      expect(sim.stats().faults[`${status}`]).toBe(1);
    });
  }

  it('htmlErrors: 500 stays a JSON error body', async () => {
    const sim = await simulator({ rate500: 1, htmlErrors: true });
    expectErrorBody(await list(sim), 500);
    expect(sim.stats().faults['500']).toBe(1);
  });

  it('rate5xx=1 over 200 requests yields all of 500, 502, 503 and 504', async () => {
    const sim = await simulator({ rate5xx: 1 });
    const seen = new Map<number, number>();
    for (let i = 0; i < 200; i++) {
      const reply = await list(sim);
      expectErrorBody(reply, reply.status);
      seen.set(reply.status, (seen.get(reply.status) ?? 0) + 1);
    }
    expect([...seen.keys()].sort()).toEqual([500, 502, 503, 504]);
    for (const count of seen.values()) expect(count).toBeGreaterThan(20);
    const faults = sim.stats().faults;
    expect((faults['500'] ?? 0) + (faults['502'] ?? 0) + (faults['503'] ?? 0) + (faults['504'] ?? 0)).toBe(
      200,
    );
    expect(faults['502']).toBe(seen.get(502));
  });
});

describe('body faults', () => {
  it('resetRate=1: the client request fails, and the server stays up', async () => {
    const sim = await simulator({ resetRate: 1 });
    await expect(list(sim)).rejects.toThrow();
    expect(sim.stats().faults.reset).toBe(1);
    const status = await send(`${sim.origin}/login/status`, {
      headers: { accept: 'application/json', ...AUTH },
    });
    expect(status.status).toBe(200);
    await expect(list(sim)).rejects.toThrow();
    expect(sim.stats().faults.reset).toBe(2);
  });

  it('resetRate=0.5: resets and good pages alternate on one server', async () => {
    const sim = await simulator({ resetRate: 0.5 });
    let failed = 0;
    let served = 0;
    for (let i = 0; i < 30; i++) {
      try {
        const reply = await list(sim);
        expect(reply.json<Page>().items).toHaveLength(10);
        served++;
      } catch {
        failed++;
      }
    }
    expect(failed).toBeGreaterThan(0);
    expect(served).toBeGreaterThan(0);
    expect(sim.stats().faults.reset).toBe(failed);
  });

  it('truncateRate=1: a 200 whose body is not JSON and is a strict prefix of the unfaulted body', async () => {
    const faulty = await simulator({ truncateRate: 1 }, { seed: 42, clock: createFakeClock() });
    const clean = await simulator({}, { seed: 42, clock: createFakeClock() });
    const params = { limit: 20 };
    const cut = await list(faulty, params);
    const whole = await list(clean, params);
    expect(cut.status).toBe(200);
    expect(whole.status).toBe(200);
    expect(() => JSON.parse(cut.text)).toThrow();
    expect(cut.text.length).toBeGreaterThan(0);
    expect(cut.text.length).toBeLessThan(whole.text.length);
    // Cursors are opaque and may differ between servers: compare only before nextCursor.
    const cursorAt = whole.text.indexOf('"nextCursor"');
    expect(cursorAt).toBeGreaterThan(0);
    const upTo = Math.min(cut.text.length, cursorAt);
    expect(upTo).toBeGreaterThan(100);
    expect(cut.text.slice(0, upTo)).toBe(whole.text.slice(0, upTo));
    expect(faulty.stats().faults.truncate).toBe(1);
    expect(faulty.stats().pages).toBe(0);
  });

  it('malformedRate=1: a 200 whose body JSON.parse rejects', async () => {
    const sim = await simulator({ malformedRate: 1 });
    const reply = await list(sim);
    expect(reply.status).toBe(200);
    expect(() => JSON.parse(reply.text)).toThrow(SyntaxError);
    expect(sim.stats().faults.malformed).toBe(1);
  });
});

describe('transport', () => {
  it('gzip: with accept-encoding gzip the body is gzip-encoded and decodes to the same items', async () => {
    const sim = await simulator();
    const url = listUrl(sim.baseUrl, '/events', { limit: 25 });
    const zipped = await send(url, { headers: { ...AUTH, 'accept-encoding': 'gzip' } });
    const plain = await send(url, { headers: AUTH });
    expect(zipped.status).toBe(200);
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(plain.headers['content-encoding']).toBeUndefined();
    const items = zipped.json<Page<Item>>().items;
    expect(items).toHaveLength(25);
    expect(items).toEqual(plain.json<Page<Item>>().items);
  });

  it('latency: every list request sleeps latencyMs plus jitter in [40, 50); other routes do not sleep', async () => {
    const clock = createFakeClock();
    const sim = await simulator({ latencyMs: 40, jitterMs: 10 }, { clock });
    for (let i = 0; i < 8; i++) expect((await list(sim)).status).toBe(200);
    await send(listUrl(sim.baseUrl, '/assets', { limit: 3 }), { headers: AUTH });
    expect(clock.sleeps).toHaveLength(9);
    for (const ms of clock.sleeps) {
      expect(ms).toBeGreaterThanOrEqual(40);
      expect(ms).toBeLessThan(50);
    }
    expect(new Set(clock.sleeps).size).toBeGreaterThan(1);

    await send(`${sim.origin}/login/status`, { headers: { accept: 'application/json', ...AUTH } });
    await send(sim.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: CLIENT.id,
        client_secret: CLIENT.secret,
      }).toString(),
    });
    await send(`${sim.origin}/nowhere`);
    await list(sim, { 'limit': 10, 'api-key-in-query': 'no' });
    await send(listUrl(sim.baseUrl, '/events', { limit: 10 }));
    expect(clock.sleeps).toHaveLength(9);
  });
});

describe('throttling', () => {
  it('concurrency cap 3: the 4th concurrent list request gets 429; held requests then succeed; maxInFlight is 3', async () => {
    const release: (() => void)[] = [];
    const gate: Clock = {
      now: () => Date.UTC(2026, 0, 1),
      sleep: () =>
        new Promise<void>((resolve) => {
          release.push(resolve);
        }),
    };
    const sim = await simulator({ maxConcurrent: 3, latencyMs: 5 }, { clock: gate });
    const held = [list(sim), list(sim), list(sim)];
    await until(() => sim.stats().inFlight === 3, 'three requests in flight');
    expect(release).toHaveLength(3);

    const fourth = await list(sim);
    const body = expectErrorBody(fourth, 429);
    expect(body.error.message).toContain("maximum number='3' of concurrent requests");
    const fifth = await send(listUrl(sim.baseUrl, '/assets', { limit: 2 }), { headers: AUTH });
    expect(fifth.status).toBe(429);
    expect(sim.stats().faults['concurrency-cap']).toBe(2);

    for (const resolve of release.splice(0)) resolve();
    const replies = await Promise.all(held);
    for (const reply of replies) {
      expect(reply.status).toBe(200);
      expect(reply.json<Page>().items).toHaveLength(10);
    }
    await until(() => sim.stats().inFlight === 0, 'no request in flight');
    expect(sim.stats().maxInFlight).toBe(3);

    const after = list(sim);
    await until(() => release.length === 1, 'a new request held');
    for (const resolve of release.splice(0)) resolve();
    expect((await after).status).toBe(200);
  });

  it('rate cap 5/s: 5 requests pass at once, the 6th gets 429 (requests per second); after 1 s, 5 more pass', async () => {
    const clock = createFakeClock();
    const sim = await simulator({ maxRps: 5 }, { clock });
    for (let i = 0; i < 5; i++) expect((await list(sim)).status).toBe(200);
    const sixth = await list(sim);
    const body = expectErrorBody(sixth, 429);
    expect(body.error.message).toContain('requests per second');
    expect(sim.stats().faults['rate-cap']).toBe(1);

    clock.advance(1000);
    for (let i = 0; i < 5; i++) expect((await list(sim)).status).toBe(200);
    expect((await list(sim)).status).toBe(429);
    expect(sim.stats().faults['rate-cap']).toBe(2);
  });

  it('cursor TTL 60 s: a cursor used after 30 s works, one used 61 s after issue gets 400 (expired)', async () => {
    const clock = createFakeClock();
    const sim = await simulator({ cursorTtlMs: 60_000 }, { clock });
    const first = await list(sim);
    const c1 = first.json<Page>().nextCursor;
    expect(c1).toBeDefined();

    clock.advance(30_000);
    const second = await list(sim, { limit: 10, cursor: c1 });
    expect(second.status).toBe(200);
    const c2 = second.json<Page>().nextCursor;
    expect(c2).toBeDefined();

    clock.advance(31_000);
    const expired = await list(sim, { limit: 10, cursor: c1 });
    const body = expectErrorBody(expired, 400);
    expect(body.error.message).toMatch(/expired/i);
    expect(sim.stats().faults['cursor-expired']).toBe(1);

    // The cursor issued 31 s ago is still good.
    expect((await list(sim, { limit: 10, cursor: c2 })).status).toBe(200);
    expect(sim.stats().faults['cursor-expired']).toBe(1);
  });
});

describe('determinism and exactly-once under faults', () => {
  it('same seed and faults, same request sequence: same statuses and items; every item exactly once', async () => {
    const faults = { rate429: 0.3, rate503: 0.2, shortPageRate: 0.3 };
    const a = await simulator(faults, { seed: 7, events: 300 });
    const b = await simulator(faults, { seed: 7, events: 300 });
    const runA = await drainWithRetries(a, { limit: 20 }, 2000);
    const runB = await drainWithRetries(b, { limit: 20 }, 2000);
    expect(runA.statuses).toEqual(runB.statuses);
    expect(runA.items).toEqual(runB.items);
    expect(runA.statuses).toContain(429);
    expect(runA.statuses).toContain(503);
    expect(a.stats().faults['short-page'] ?? 0).toBeGreaterThan(0);
    expectEveryEventOnce(a, runA.items);
  });

  it('mixed faults over a chain of at least 100 pages: a naive retry loop gets every item exactly once', async () => {
    const sim = await simulator({ rate429: 0.2, rate5xx: 0.05, shortPageRate: 0.2 }, { events: 20_000 });
    const run = await drainWithRetries(sim, { limit: 200 }, 5000);
    expect(run.pages).toBeGreaterThanOrEqual(100);
    expect(run.statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(run.statuses.filter((s) => s >= 500).length).toBeGreaterThan(0);
    expect(sim.stats().faults['short-page'] ?? 0).toBeGreaterThan(0);
    expectEveryEventOnce(sim, run.items);
  });
});

describe('request ids and error bodies', () => {
  it('every response carries x-request-id, and every platform error has {error:{code,message}}', async () => {
    const sim = await simulator();
    const throttled = await simulator({ rate429: 1 });
    const failing = await simulator({ rate503: 1 });
    const html = await simulator({ rate504: 1, htmlErrors: true });
    const tokenForm = {
      method: 'POST' as const,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    };

    const platformErrors: [string, Reply, number][] = [
      ['404 unknown path', await send(`${sim.origin}/no/such/path`), 404],
      ['405 POST /events', await send(`${sim.baseUrl}/events`, { method: 'POST', headers: AUTH }), 405],
      ['401 no credentials', await send(`${sim.baseUrl}/events`), 401],
      ['400 bad limit', await list(sim, { limit: 0 }), 400],
      ['403 other project', await send(`${sim.origin}/api/v1/projects/other/events`, { headers: AUTH }), 403],
      [
        '406 login status html',
        await send(`${sim.origin}/login/status`, { headers: { accept: 'text/html' } }),
        406,
      ],
      ['429', await list(throttled), 429],
      ['503', await list(failing), 503],
    ];
    const others: [string, Reply][] = [
      ['200 list', await list(sim)],
      ['504 html', await list(html)],
      ['405 GET token', await send(sim.tokenUrl)],
      [
        '200 token',
        await send(sim.tokenUrl, {
          ...tokenForm,
          body: new URLSearchParams({
            grant_type: 'client_credentials',
            client_id: CLIENT.id,
            client_secret: CLIENT.secret,
          }).toString(),
        }),
      ],
      [
        '400 token without client',
        await send(sim.tokenUrl, { ...tokenForm, body: 'grant_type=client_credentials' }),
      ],
      ['200 login status', await send(`${sim.origin}/login/status`)],
      ['200 logout', await send(`${sim.origin}/logout`)],
    ];

    const ids: string[] = [];
    for (const [name, reply, status] of platformErrors) {
      const id = reply.headers['x-request-id'];
      expect(typeof id, name).toBe('string');
      ids.push(String(id));
      expectErrorBody(reply, status);
    }
    for (const [name, reply] of others) {
      const id = reply.headers['x-request-id'];
      expect(typeof id, name).toBe('string');
      expect(String(id).length, name).toBeGreaterThan(0);
      ids.push(String(id));
    }
    expect(others[1]?.[1].status).toBe(504);
    expect(others[2]?.[1].status).toBe(405);
    expect(others[3]?.[1].status).toBe(200);
    expect(others[4]?.[1].status).toBe(400);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('stats', () => {
  it('byRoute and byStatus count a known sequence; resetStats zeroes them', async () => {
    const sim = await simulator();
    await list(sim);
    await list(sim, { limit: 5 });
    await send(listUrl(sim.baseUrl, '/assets', { limit: 3 }), { headers: AUTH });
    await send(`${sim.origin}/nope`);
    await send(`${sim.baseUrl}/events`);
    await list(sim, { limit: 5000 });
    await settled(sim, 6);

    const stats = sim.stats();
    expect(stats.requests).toBe(6);
    expect(stats.byRoute).toEqual({ 'GET /events': 4, 'GET /assets': 1, 'GET /nope': 1 });
    expect(stats.byStatus).toEqual({ 200: 3, 404: 1, 401: 1, 400: 1 });
    expect(stats.pages).toBe(3);
    expect(stats.items).toBe(18);
    expect(stats.inFlight).toBe(0);

    sim.resetStats();
    const zero = sim.stats();
    expect(zero.requests).toBe(0);
    expect(zero.byRoute).toEqual({});
    expect(zero.byStatus).toEqual({});
    expect(zero.faults).toEqual({});
    expect(zero.pages).toBe(0);
    expect(zero.items).toBe(0);
    expect(zero.maxInFlight).toBe(0);

    await list(sim);
    await settled(sim, 1);
    expect(sim.stats().byStatus).toEqual({ 200: 1 });
  });

  it('recordRequests: requests() lists method, route, params in order and status', async () => {
    const sim = await simulator({}, { recordRequests: true });
    expect((await list(sim, { limit: 10, type: 'alarm' })).status).toBe(200);
    await send(listUrl(sim.baseUrl, '/assets', { partition: '1/2', limit: 4 }), { headers: AUTH });
    await send(`${sim.baseUrl}/events?limit=3`, { method: 'POST', headers: AUTH });
    await send(`${sim.origin}/login/status`);
    await settled(sim, 4);

    const recorded = sim.requests();
    expect(recorded.map(({ method, route, params, status }) => ({ method, route, params, status }))).toEqual([
      {
        method: 'GET',
        route: 'GET /events',
        params: [
          ['limit', '10'],
          ['type', 'alarm'],
        ],
        status: 200,
      },
      {
        method: 'GET',
        route: 'GET /assets',
        params: [
          ['partition', '1/2'],
          ['limit', '4'],
        ],
        status: 200,
      },
      { method: 'POST', route: 'POST /events', params: [['limit', '3']], status: 405 },
      { method: 'GET', route: 'GET /login/status', params: [], status: 200 },
    ]);
    expect(recorded[0]?.mechanism).toBe('api-key');
    expect(new Set(recorded.map((r) => r.requestId)).size).toBe(4);
  });
});

describe('baseline', () => {
  it('an unfaulted chain drains to every event once', async () => {
    const sim = await simulator({}, { events: 95 });
    const pages = await drain<Item>(sim.baseUrl, '/events', { limit: 10 }, AUTH);
    expect(pages).toHaveLength(10);
    expectEveryEventOnce(
      sim,
      pages.flatMap((page) => page.items),
    );
  });
});
