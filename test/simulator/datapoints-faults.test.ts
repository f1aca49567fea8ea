import { afterEach, describe, expect, it } from 'vitest';
import { type FaultOptionsInput, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { type AnswerItem, expectedRawPoints, postPoints, type Query } from '../support/datapoints.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';

/**
 * Faults, caps and latency on `POST /timeseries/data/list`, as on every list route: a client that
 * retries what it must still gets every point exactly once.
 */
const API_KEY = 'datapoints-faults-key-1';
const AUTH = { 'api-key': API_KEY };

const open: Simulator[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((sim) => sim.close()));
});

async function simulator(faults: FaultOptionsInput, clock: FakeClock = createFakeClock()): Promise<Simulator> {
  const sim = await startSimulator({ seed: 5, timeseries: 30, datapoints: 60_000, apiKeys: [API_KEY], clock, faults });
  open.push(sim);
  return sim;
}

/** The longest series of the simulator, and a few others with points. */
function seriesWithPoints(sim: Simulator, how: number): number[] {
  return Array.from({ length: sim.dataset.timeseries.count }, (_, index) => index)
    .sort((a, b) => sim.dataset.datapoints.countOf(b) - sim.dataset.datapoints.countOf(a))
    .slice(0, how);
}

/**
 * Drains every query's chain, sending the same request again on 429, 5xx and broken bodies, as a
 * client with retries does. Returns each query's points and every status seen.
 */
async function drainWithRetries(sim: Simulator, items: Query[]): Promise<{ points: unknown[][]; statuses: number[] }> {
  const points: unknown[][] = items.map(() => []);
  const statuses: number[] = [];
  let going = items.map((query, index) => ({ index, query }));
  for (let attempt = 0; going.length > 0; attempt++) {
    if (attempt > 5000) throw new Error('not drained within 5000 requests');
    let reply;
    try {
      reply = await postPoints(sim, { items: going.map(({ query }) => query) }, AUTH);
    } catch {
      statuses.push(-1);
      continue;
    }
    statuses.push(reply.status);
    if (reply.status === 429 || reply.status >= 500) continue;
    expect(reply.status, reply.text).toBe(200);
    let answer: { items: AnswerItem[] };
    try {
      answer = reply.json<{ items: AnswerItem[] }>();
    } catch {
      continue;
    }
    const next: typeof going = [];
    answer.items.forEach((item, position) => {
      const { index, query } = going[position] ?? { index: -1, query: {} };
      points[index]?.push(...item.datapoints);
      if (item.nextCursor !== undefined) next.push({ index, query: { ...query, cursor: item.nextCursor } });
    });
    going = next;
  }
  return { points, statuses };
}

describe('POST /timeseries/data/list: faults', () => {
  it('answers 429 and 5xx as the collections\' lists do, counting them', async () => {
    const throttled = await simulator({ rate429: 1 });
    const body = { items: [{ id: throttled.dataset.timeseries.idOf(0) }] };
    const reply = await postPoints(throttled, body, AUTH);
    expect(reply.status).toBe(429);
    expect(reply.json<{ error: { message: string } }>().error.message).toMatch(/concurrent requests/);
    expect(throttled.stats().faults['429']).toBe(1);
    const failing = await simulator({ rate503: 1, htmlErrors: true });
    const html = await postPoints(failing, body, AUTH);
    expect(html.status).toBe(503);
    expect(html.headers['content-type']).toMatch(/^text\/html/);
    expect(failing.stats().byRoute).toEqual({ 'POST /timeseries/data/list': 1 });
    expect(failing.stats().pages).toBe(0);
  });

  it('cuts a truncated body short and breaks a malformed one', async () => {
    const truncated = await simulator({ truncateRate: 1 });
    const longest = seriesWithPoints(truncated, 1)[0] ?? 0;
    const body = { items: [{ id: truncated.dataset.timeseries.idOf(longest), limit: 50 }] };
    const cut = await postPoints(truncated, body, AUTH);
    expect(cut.status).toBe(200);
    expect(() => JSON.parse(cut.text)).toThrow();
    expect(cut.text.startsWith('{"items":[{"id":')).toBe(true);
    const malformed = await simulator({ malformedRate: 1 });
    const broken = await postPoints(malformed, body, AUTH);
    expect(() => JSON.parse(broken.text)).toThrow(SyntaxError);
    expect(malformed.stats().faults.malformed).toBe(1);
  });

  it('with short pages on every answer, every chain still ends with exactly the series\' points', async () => {
    const sim = await simulator({ shortPageRate: 1 });
    const indexes = seriesWithPoints(sim, 4);
    const items = indexes.map((index) => ({ id: sim.dataset.timeseries.idOf(index), limit: 2000 }));
    const { points, statuses } = await drainWithRetries(sim, items);
    const now = Date.UTC(2026, 0, 1);
    indexes.forEach((index, position) => {
      expect(points[position]).toEqual(expectedRawPoints(sim.dataset.datapoints.series(index), 0, now));
    });
    expect(sim.stats().faults['short-page']).toBe(statuses.length);
    expect(statuses.length).toBeGreaterThan(Math.ceil((sim.dataset.datapoints.countOf(indexes[0] ?? 0) * 1.5) / 2000));
  });

  it('under mixed faults, a client that retries gets every point exactly once', async () => {
    const sim = await simulator({
      rate429: 0.15,
      rate5xx: 0.1,
      resetRate: 0.05,
      truncateRate: 0.05,
      malformedRate: 0.05,
      shortPageRate: 0.2,
    });
    const indexes = seriesWithPoints(sim, 6);
    const flags = { ignoreBadDataPoints: false };
    const items = indexes.map((index) => ({ id: sim.dataset.timeseries.idOf(index), limit: 500, ...flags }));
    const { points, statuses } = await drainWithRetries(sim, items);
    indexes.forEach((index, position) => {
      const expected = expectedRawPoints(sim.dataset.datapoints.series(index), 0, Date.UTC(2026, 0, 1), flags);
      expect(points[position]).toEqual(expected);
    });
    expect(statuses.filter((seen) => seen === 429).length).toBeGreaterThan(0);
    expect(statuses.filter((seen) => seen >= 500).length).toBeGreaterThan(0);
    expect(statuses.filter((seen) => seen === -1).length).toBeGreaterThan(0);
    expect(sim.stats().faults.truncate).toBeGreaterThan(0);
  });

  it('waits the latency on the clock, and applies the request-rate cap', async () => {
    const clock = createFakeClock();
    const slow = await simulator({ latencyMs: 40, jitterMs: 10 }, clock);
    const body = { items: [{ id: slow.dataset.timeseries.idOf(0), limit: 5 }] };
    for (let i = 0; i < 3; i++) expect((await postPoints(slow, body, AUTH)).status).toBe(200);
    expect(clock.sleeps).toHaveLength(3);
    expect(clock.sleeps.every((ms) => ms >= 40 && ms < 50)).toBe(true);
    const capped = await simulator({ maxRps: 1 }, createFakeClock());
    expect((await postPoints(capped, body, AUTH)).status).toBe(200);
    const second = await postPoints(capped, body, AUTH);
    expect(second.status).toBe(429);
    expect(second.text).toContain('requests per second');
    expect(capped.stats().faults['rate-cap']).toBe(1);
  });

  it('refuses an expired cursor', async () => {
    const clock = createFakeClock();
    const sim = await simulator({ cursorTtlMs: 60_000 }, clock);
    const query = { id: sim.dataset.timeseries.idOf(seriesWithPoints(sim, 1)[0] ?? 0), limit: 5 };
    const first = await postPoints(sim, { items: [query] }, AUTH);
    const cursor = first.json<{ items: AnswerItem[] }>().items[0]?.nextCursor;
    clock.advance(60_001);
    const late = await postPoints(sim, { items: [{ ...query, cursor }] }, AUTH);
    expect(late.status).toBe(400);
    expect(late.text).toContain("'items[0].cursor': Cursor has expired");
    expect(sim.stats().faults['cursor-expired']).toBe(1);
  });
});
