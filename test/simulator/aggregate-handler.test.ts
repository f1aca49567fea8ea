import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { COUNT_SAMPLE_SIZE } from '../../src/simulator/count.js';
import { createFakeClock } from '../support/fake-clock.js';
import { drain, type Reply, send } from '../support/http.js';
import { idsOf, indexes, type Params } from '../support/items.js';

const API_KEY = 'aggregate-test-key-1';
const AUTH = { 'api-key': API_KEY };
const JSON_AUTH = { ...AUTH, 'content-type': 'application/json' };

interface ErrorBody {
  error: { code: number; message: string };
}

function aggregate(
  sim: Simulator,
  resource: string,
  body: unknown,
  headers: Record<string, string> = JSON_AUTH,
): Promise<Reply> {
  return send(`${sim.baseUrl}/${resource}/aggregate`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function count(sim: Simulator, resource: string, body: unknown): Promise<number> {
  const reply = await aggregate(sim, resource, body);
  expect(reply.status, reply.text).toBe(200);
  const answer = reply.json<{ items: { count: number }[] }>();
  expect(Object.keys(answer)).toEqual(['items']);
  expect(answer.items).toHaveLength(1);
  expect(Object.keys(answer.items[0] ?? {})).toEqual(['count']);
  return answer.items[0]?.count ?? -1;
}

/** What the list route returns for the same filter, by draining it. */
async function listed(sim: Simulator, resource: string, params: Params): Promise<number> {
  return idsOf(await drain(sim.baseUrl, `/${resource}`, { limit: 1000, ...params }, AUTH)).length;
}

function errorOf(reply: Reply, status: number): string {
  expect(reply.status, reply.text).toBe(status);
  const body = reply.json<ErrorBody>();
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe(status);
  return body.error.message;
}

describe('POST /{resource}/aggregate on a small set: exact counts', () => {
  let sim: Simulator;

  beforeAll(async () => {
    sim = await startSimulator({
      assets: 250,
      events: 1050,
      seed: 7,
      apiKeys: [API_KEY],
      recordRequests: true,
      clock: createFakeClock(),
    });
  });
  afterAll(() => sim.close());

  it('without a filter: every item; aggregate "count" may be left out', async () => {
    expect(await count(sim, 'events', {})).toBe(1050);
    expect(await count(sim, 'events', { aggregate: 'count' })).toBe(1050);
    expect(await count(sim, 'assets', { aggregate: 'count', filter: {} })).toBe(250);
  });

  // The time bounds cut through the generated data (2019 to 2025), so that the filters do filter.
  const MID = Date.UTC(2022, 0, 1);
  const LATE = Date.UTC(2023, 6, 1);
  const cases: [string, string, unknown, Params][] = [
    ['events by type', 'events', { type: 'alarm' }, { type: 'alarm' }],
    ['events by type and subtype', 'events', { type: 'alarm', subtype: 'high' }, { type: 'alarm', subtype: 'high' }],
    ['events by source', 'events', { source: 'SAP' }, { source: 'SAP' }],
    ['events by startTime', 'events', { startTime: { min: MID, max: LATE } }, { minStartTime: MID, maxStartTime: LATE }],
    ['events by lastUpdatedTime min', 'events', { lastUpdatedTime: { min: MID } }, { minLastUpdatedTime: MID }],
    [
      'events by everything',
      'events',
      { type: 'maintenance', source: 'SAP', startTime: { max: LATE }, lastUpdatedTime: { min: MID } },
      { type: 'maintenance', source: 'SAP', maxStartTime: LATE, minLastUpdatedTime: MID },
    ],
    ['assets by lastUpdatedTime', 'assets', { lastUpdatedTime: { min: MID, max: LATE } }, { minLastUpdatedTime: MID, maxLastUpdatedTime: LATE }],
  ];

  it.each(cases)('%s: the count of what the list route serves', async (_what, resource, filter, params) => {
    const expected = await listed(sim, resource, params);
    expect(expected).toBeGreaterThan(0);
    expect(expected).toBeLessThan(resource === 'events' ? 1050 : 250);
    expect(await count(sim, resource, { aggregate: 'count', filter })).toBe(expected);
  });

  it('inclusive bounds: a range of one instant counts the items at that instant; min > max counts 0', async () => {
    const first = sim.dataset.events.item(0);
    const at = { min: first.startTime, max: first.startTime };
    expect(await count(sim, 'events', { filter: { startTime: at } })).toBe(await listed(sim, 'events', {
      minStartTime: first.startTime,
      maxStartTime: first.startTime,
    }));
    expect(await count(sim, 'events', { filter: { startTime: at } })).toBeGreaterThanOrEqual(1);
    expect(await count(sim, 'events', { filter: { startTime: { min: LATE, max: MID } } })).toBe(0);
  });

  it('an update moves an item into a later lastUpdatedTime window, and the count sees it', async () => {
    const later = Date.UTC(2030, 0, 1);
    const before = await count(sim, 'assets', { filter: { lastUpdatedTime: { min: later } } });
    sim.update('assets', [3, 5], later);
    expect(before).toBe(0);
    expect(await count(sim, 'assets', { filter: { lastUpdatedTime: { min: later } } })).toBe(2);
  });

  it.each([
    ['an unknown filter key', { filter: { labels: { containsAny: [] } } }, /filter\.labels/],
    ['a wrong type', { filter: { type: ['alarm'] } }, /filter\.type.*got \["alarm"\]/],
    ['a bad bound', { filter: { lastUpdatedTime: { min: 'yesterday' } } }, /filter\.lastUpdatedTime\.min/],
    ['another aggregate', { aggregate: 'uniqueValues' }, /aggregate.*"uniqueValues"/],
    ['an unknown key', { count: true }, /Unrecognized property 'count'/],
    ['a body that is not JSON', '{"filter": {', /not valid JSON/],
  ])('%s gets 400 with the platform error body naming it', async (_what, body, message) => {
    expect(errorOf(await aggregate(sim, 'events', body), 400)).toMatch(message);
  });

  it('a body not sent as JSON gets 415', async () => {
    expect(errorOf(await aggregate(sim, 'events', {}, { ...AUTH, 'content-type': 'text/plain' }), 415)).toMatch(
      /application\/json/,
    );
  });

  it('the same auth as the list routes: 401 without a credential, 403 for another project; only POST', async () => {
    expect(errorOf(await aggregate(sim, 'events', {}, { 'content-type': 'application/json' }), 401)).toBe(
      'Unauthorized',
    );
    const other = await send(`${sim.origin}/api/v1/projects/other/events/aggregate`, {
      method: 'POST',
      headers: JSON_AUTH,
      body: '{}',
    });
    expect(errorOf(other, 403)).toContain("'other'");
    const get = await send(`${sim.baseUrl}/events/aggregate`, { headers: AUTH });
    expect(errorOf(get, 405)).toContain('use POST');
    expect(get.headers.allow).toBe('POST');
  });

  it('is counted in stats by route and recorded with its parsed body', async () => {
    sim.resetStats();
    const before = sim.requests().length;
    const filter = { type: 'alarm', startTime: { min: MID } };
    await count(sim, 'events', { aggregate: 'count', filter });
    await aggregate(sim, 'assets', { filter: { type: 'alarm' } });
    const stats = sim.stats();
    expect(stats.byRoute).toEqual({ 'POST /events/aggregate': 1, 'POST /assets/aggregate': 1 });
    expect(stats.byStatus).toEqual({ 200: 1, 400: 1 });
    expect(stats.pages).toBe(0);
    expect(sim.requests().slice(before)).toEqual([
      expect.objectContaining({
        method: 'POST',
        route: 'POST /events/aggregate',
        params: [],
        status: 200,
        mechanism: 'api-key',
        body: { aggregate: 'count', filter },
      }),
      expect.objectContaining({ route: 'POST /assets/aggregate', status: 400, body: { filter: { type: 'alarm' } } }),
    ]);
  });
});

describe('aggregate and fault injection', () => {
  it('no fault, latency or cap applies: with every list request failing 503, counts still answer 200', async () => {
    const sim = await startSimulator({
      events: 100,
      apiKeys: [API_KEY],
      faults: { rate503: 0.5, resetRate: 0.5, latencyMs: 60_000, maxConcurrent: 1 },
    });
    try {
      const answers = await Promise.all(indexes(5).map(() => count(sim, 'events', { filter: { type: 'alarm' } })));
      expect(new Set(answers).size).toBe(1);
      expect(sim.stats().faults).toEqual({});
    } finally {
      await sim.close();
    }
  });
});

describe('aggregate on large sets: approximate, deterministic, fast', () => {
  it.each([
    ['type', { type: 'alarm' }],
    ['type and source', { type: 'inspection', source: 'SAP' }],
    ['startTime', { startTime: { min: Date.UTC(2024, 0, 1) } }],
  ])(`200,000 events by %s: an estimate from ${COUNT_SAMPLE_SIZE} items within 3 standard errors of the exact count`, async (_what, filter) => {
    const sim = await startSimulator({ events: 200_000, assets: 10, seed: 3, apiKeys: [API_KEY] });
    try {
      const flat = 'startTime' in filter ? { minStartTime: filter.startTime.min } : filter;
      const exact = indexes(200_000).filter((i) => sim.dataset.events.matches(i, flat)).length;
      const share = exact / 200_000;
      const standardError = Math.sqrt((share * (1 - share)) / COUNT_SAMPLE_SIZE) * 200_000;
      const estimate = await count(sim, 'events', { filter });
      expect(Math.abs(estimate - exact)).toBeLessThan(3 * standardError);
      expect(await count(sim, 'events', { filter })).toBe(estimate);
    } finally {
      await sim.close();
    }
  });

  it('10,000,000 events: filtered counts answer in well under a second, the same for the same seed', async () => {
    const start = (seed: number) => startSimulator({ events: 10_000_000, assets: 1000, seed, apiKeys: [API_KEY] });
    const [one, again, other] = await Promise.all([start(1), start(1), start(2)]);
    try {
      const body = { filter: { type: 'alarm', lastUpdatedTime: { min: Date.UTC(2021, 0, 1) } } };
      const started = performance.now();
      const estimate = await count(one, 'events', body);
      expect(performance.now() - started).toBeLessThan(1000);
      expect(estimate).toBeGreaterThan(100_000);
      expect(estimate).toBeLessThan(10_000_000 / 8);
      expect(await count(again, 'events', body)).toBe(estimate);
      expect(await count(other, 'events', body)).not.toBe(estimate);
      expect(await count(one, 'events', {})).toBe(10_000_000);
    } finally {
      await Promise.all([one.close(), again.close(), other.close()]);
    }
  });
});
