import { afterEach, describe, expect, it } from 'vitest';
import { type FaultOptionsInput, type Simulator, type SimulatorOptions, startSimulator } from '../../src/simulator/index.js';
import type { Clock } from '../../src/util/clock.js';
import { createFakeClock } from '../support/fake-clock.js';
import { type Reply, send } from '../support/http.js';
import { type InstanceItem, keyOf, type ListAnswer, liveKeys, post, type SyncAnswer, viewRef } from '../support/instances.js';

const AUTH = { 'api-key': 'models-faults-key-1' };

const open: Simulator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((sim) => sim.close()));
});

async function simulator(faults: FaultOptionsInput = {}, options: SimulatorOptions = {}): Promise<Simulator> {
  const sim = await startSimulator({
    apiKeys: [AUTH['api-key']],
    instances: { assets: 150, activities: 60, timeseries: 30, edges: 40 },
    ...options,
    faults,
  });
  open.push(sim);
  return sim;
}

const SYNC_ASSETS = {
  with: { assets: { nodes: { filter: { hasData: [viewRef('CogniteAsset')] } }, limit: 40 } },
  select: { assets: { sources: [{ source: viewRef('CogniteAsset'), properties: ['name'] }] } },
};

/** One request to each `/models` route, the same every time. */
const ROUTES: Record<string, (sim: Simulator, cursor?: string) => Promise<Reply>> = {
  'GET /models/views': (sim, cursor) =>
    send(`${sim.baseUrl}/models/views?includeGlobal=true&limit=3${cursor === undefined ? '' : `&cursor=${cursor}`}`, { headers: AUTH }),
  'POST /models/views/byids': (sim) => post(sim, '/models/views/byids', { items: [{ space: 'cdf_cdm', externalId: 'CogniteAsset' }] }, AUTH),
  'POST /models/instances/list': (sim, cursor) => post(sim, '/models/instances/list', { limit: 10, ...(cursor === undefined ? {} : { cursor }) }, AUTH),
  'POST /models/instances/sync': (sim) => post(sim, '/models/instances/sync', SYNC_ASSETS, AUTH),
};
const routes = Object.keys(ROUTES);
const call = (route: string, sim: Simulator) => (ROUTES[route] ?? ROUTES['GET /models/views']!)(sim);

function expectErrorBody(reply: Reply, status: number): string {
  expect(reply.status).toBe(status);
  expect(reply.headers['content-type']).toMatch(/^application\/json/);
  const body = reply.json<{ error: { code: number; message: string } }>();
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe(status);
  return body.error.message;
}

describe.each(routes)('%s', (route) => {
  it('rate429=1: 429 with the platform message and no Retry-After; rate429RetryAfter=1: Retry-After', async () => {
    const sim = await simulator({ rate429: 1 });
    const reply = await call(route, sim);
    expect(expectErrorBody(reply, 429)).toMatch(/^Project exceeded maximum number='\d+' of concurrent requests\./);
    expect(reply.headers['retry-after']).toBeUndefined();
    expect(sim.stats().faults['429']).toBe(1);
    const later = await simulator({ rate429RetryAfter: 1, retryAfterSeconds: 7 });
    expect((await call(route, later)).headers['retry-after']).toBe('7');
    expect(later.stats().faults['429-retry-after']).toBe(1);
  });

  it.each([500, 502, 503, 504] as const)('rate%s=1: that status with the JSON error body, HTML from the load balancer with htmlErrors', async (status) => {
    const sim = await simulator({ [`rate${status}`]: 1 });
    expectErrorBody(await call(route, sim), status);
    expect(sim.stats().faults[`${status}`]).toBe(1);
    expect(sim.stats().pages).toBe(0);
    const html = await simulator({ [`rate${status}`]: 1, htmlErrors: true });
    const reply = await call(route, html);
    expect(reply.headers['content-type']).toMatch(status === 500 ? /^application\/json/ : /^text\/html/);
  });

  it('resetRate=1: the request fails and the server stays up; truncateRate=1 and malformedRate=1: a 200 that is not JSON', async () => {
    const reset = await simulator({ resetRate: 1 });
    await expect(call(route, reset)).rejects.toThrow();
    expect(reset.stats().faults.reset).toBe(1);
    await expect(call(route, reset)).rejects.toThrow();
    for (const fault of ['truncate', 'malformed'] as const) {
      const sim = await simulator({ [`${fault}Rate`]: 1 });
      const reply = await call(route, sim);
      expect(reply.status).toBe(200);
      expect(() => JSON.parse(reply.text)).toThrow();
      expect(sim.stats().faults[fault]).toBe(1);
      expect(sim.stats().pages).toBe(0);
    }
  });

  it('latency: waits latencyMs plus jitter on the clock; the rate cap answers 429 past it', async () => {
    const clock = createFakeClock();
    const sim = await simulator({ latencyMs: 40, jitterMs: 10 }, { clock });
    for (let i = 0; i < 3; i++) expect((await call(route, sim)).status).toBe(200);
    expect(clock.sleeps).toHaveLength(3);
    expect(clock.sleeps.every((ms) => ms >= 40 && ms < 50)).toBe(true);
    const capped = await simulator({ maxRps: 2 }, { clock: createFakeClock() });
    expect((await call(route, capped)).status).toBe(200);
    expect((await call(route, capped)).status).toBe(200);
    expect(expectErrorBody(await call(route, capped), 429)).toContain('requests per second');
    expect(capped.stats().faults['rate-cap']).toBe(1);
  });
});

describe('caps and cursors on the /models routes', () => {
  it('concurrency cap 2: a third concurrent request gets 429, held ones then succeed', async () => {
    const release: (() => void)[] = [];
    const gate: Clock = {
      now: () => Date.UTC(2026, 0, 1),
      sleep: () => new Promise<void>((resolve) => release.push(resolve)),
    };
    const sim = await simulator({ maxConcurrent: 2, latencyMs: 5 }, { clock: gate });
    const held = [call('POST /models/instances/list', sim), call('POST /models/instances/sync', sim)];
    for (let turn = 0; turn < 10_000 && sim.stats().inFlight < 2; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(expectErrorBody(await call('GET /models/views', sim), 429)).toContain("maximum number='2' of concurrent requests");
    for (const resolve of release.splice(0)) resolve();
    expect((await Promise.all(held)).map((reply) => reply.status)).toEqual([200, 200]);
  });

  it('cursorTtlMs: list and views cursors expire as the lists\' do (the sync\'s keep their 3 days)', async () => {
    const clock = createFakeClock();
    const sim = await simulator({ cursorTtlMs: 60_000 }, { clock });
    const list = (await call('POST /models/instances/list', sim)).json<ListAnswer>().nextCursor;
    const views = (await call('GET /models/views', sim)).json<{ nextCursor: string }>().nextCursor;
    const synced = (await call('POST /models/instances/sync', sim)).json<SyncAnswer>().nextCursor;
    clock.advance(61_000);
    expect(expectErrorBody(await ROUTES['POST /models/instances/list']!(sim, list), 400)).toMatch(/expired/);
    expect(expectErrorBody(await ROUTES['GET /models/views']!(sim, views), 400)).toMatch(/expired/);
    expect((await post(sim, '/models/instances/sync', { ...SYNC_ASSETS, cursors: synced }, AUTH)).status).toBe(200);
    expect(sim.stats().faults['cursor-expired']).toBe(2);
  });
});

/** Follows a list chain repeating a request on 429 and 5xx; every status and item. */
async function listWithRetries(
  sim: Simulator,
  maxRequests: number,
): Promise<{ statuses: number[]; items: InstanceItem[] }> {
  const statuses: number[] = [];
  const items: InstanceItem[] = [];
  let cursor: string | undefined;
  for (let n = 0; n < maxRequests; n++) {
    const reply = await post(sim, '/models/instances/list', { limit: 25, ...(cursor === undefined ? {} : { cursor }) }, AUTH);
    statuses.push(reply.status);
    if (reply.status === 429 || reply.status >= 500) continue;
    const page = reply.json<ListAnswer>();
    items.push(...page.items);
    cursor = page.nextCursor;
    if (cursor === undefined) return { statuses, items };
  }
  throw new Error(`chain not drained within ${maxRequests} requests`);
}

describe('short pages and mixed faults', () => {
  it('same seed and faults, same statuses and items; a retrying list reader gets every node exactly once', async () => {
    const faults = { rate429: 0.2, rate503: 0.2, shortPageRate: 0.4 };
    const a = await simulator(faults, { seed: 7 });
    const b = await simulator(faults, { seed: 7 });
    const runA = await listWithRetries(a, 500);
    const runB = await listWithRetries(b, 500);
    expect(runA).toEqual(runB);
    expect(runA.statuses).toContain(429);
    expect(runA.statuses).toContain(503);
    expect(a.stats().faults['short-page'] ?? 0).toBeGreaterThan(0);
    expect(runA.items.map(keyOf)).toEqual([...liveKeys(a, 'asset'), ...liveKeys(a, 'activity'), ...liveKeys(a, 'timeseries')]);
  });

  it('a short-page fault never shortens a sync answer (a short one says caught up): the backfill\'s pages are full', async () => {
    const sim = await simulator({ shortPageRate: 1 }, { clock: createFakeClock() });
    const sizes: number[] = [];
    const seen: string[] = [];
    let cursors: Record<string, string> | undefined;
    for (let n = 0; n < 10 && (sizes.at(-1) ?? 40) === 40; n++) {
      const answer = (await post(sim, '/models/instances/sync', { ...SYNC_ASSETS, ...(cursors === undefined ? {} : { cursors }) }, AUTH)).json<SyncAnswer>();
      sizes.push((answer.items.assets ?? []).length);
      seen.push(...(answer.items.assets ?? []).map(keyOf));
      cursors = answer.nextCursor;
    }
    expect(seen).toEqual(liveKeys(sim, 'asset'));
    expect(sizes.slice(0, -1).every((size) => size === 40)).toBe(true);
    expect(sizes.at(-1)).toBeLessThan(40);
    expect(sim.stats().faults['short-page'] ?? 0).toBe(0);
  });

  it('short pages on the views list still page through every view once; a byids answer is never short', async () => {
    const sim = await simulator({ shortPageRate: 1 });
    const names: string[] = [];
    let cursor: string | undefined;
    for (let n = 0; n < 100; n++) {
      const page = (await ROUTES['GET /models/views']!(sim, cursor)).json<{ items: { externalId: string }[]; nextCursor?: string }>();
      names.push(...page.items.map((view) => view.externalId));
      cursor = page.nextCursor;
      if (cursor === undefined) break;
    }
    expect(names).toHaveLength(7);
    expect(new Set(names).size).toBe(7);
    const byIds = await post(sim, '/models/views/byids', { items: ['CogniteAsset', 'CogniteActivity', 'CogniteTimeSeries'].map((externalId) => ({ space: 'cdf_cdm', externalId })) }, AUTH);
    expect(byIds.json<{ items: unknown[] }>().items).toHaveLength(3);
  });
});
