import { afterEach, describe, expect, it } from 'vitest';
import { StaticAuth } from '../../src/http/auth/static-auth.js';
import { BadResponseError, CursorLoopError, HttpStatusError } from '../../src/http/errors.js';
import { PlatformClient } from '../../src/http/platform-client.js';
import {
  drainSubscriptionFeed,
  MAX_EMPTY_PAGES,
  type SubscriptionFeedRequest,
  type SubscriptionPage,
} from '../../src/http/subscription-feed.js';
import { changeRows, type ChangeRow } from '../../src/resources/subscription-changes.js';
import { type Simulator, type SimulatorOptions, startSimulator } from '../../src/simulator/index.js';
import { Secret } from '../../src/util/secret.js';
import { allPoints } from '../support/datapoints.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';
import { indexes } from '../support/items.js';
import { type ScriptedResponse, startScriptedServer } from '../support/scripted-server.js';

/**
 * A subscription's partition read by drainSubscriptionFeed against the simulator (the feed `--churn`
 * and the live series make), its updates turned into change rows, and answers the simulator never
 * gives from a scripted server.
 */
const API_KEY = 'subscription-feed-key-0001';
const MINUTE = 60_000;
const SERIES = 80;

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

async function simulator(clock: FakeClock, options: SimulatorOptions = {}): Promise<Simulator> {
  const sim = await startSimulator({
    clock,
    seed: 7,
    assets: 10,
    events: 0,
    timeseries: SERIES,
    datapoints: 40_000,
    churn: 3,
    apiKeys: [API_KEY],
    recordRequests: true,
    ...options,
  });
  cleanup.push(() => sim.close());
  return sim;
}

function connect(baseUrl: string): PlatformClient {
  const auth = StaticAuth.apiKey(new Secret(API_KEY));
  const client = new PlatformClient({ baseUrl, auth, clock: createFakeClock(), random: () => 0.5 });
  cleanup.push(() => client.close());
  return client;
}

const FLAGS = { includeStatus: true, ignoreBadDataPoints: false, treatUncertainAsBad: false };

async function pagesOf(client: PlatformClient, request: SubscriptionFeedRequest): Promise<SubscriptionPage[]> {
  const pages: SubscriptionPage[] = [];
  for await (const page of drainSubscriptionFeed(client, request)) pages.push(page);
  return pages;
}

/** The change rows of pages, numbered in order from `first`. */
function rowsOf(pages: readonly SubscriptionPage[], first = 0): ChangeRow[] {
  const rows: ChangeRow[] = [];
  for (const update of pages.flatMap((page) => page.updates)) {
    rows.push(...changeRows(update, first + rows.length, true));
  }
  return rows;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('drainSubscriptionFeed against the simulator', () => {
  it('reads a partition to hasNext false, every request the same body but its cursor, and resumes from a cursor exactly', async () => {
    const clock = createFakeClock();
    const sim = await simulator(clock);
    const client = connect(sim.baseUrl);
    clock.advance(4 * MINUTE);
    const request = { externalId: 'sim-all-points', partition: 1, limit: 40, ...FLAGS };
    const pages = await pagesOf(client, request);
    expect(pages.length).toBeGreaterThan(3);
    expect(pages.map((page) => page.caughtUp)).toEqual([...pages.slice(1).map(() => false), true]);
    const bodies = sim.requests().filter((one) => one.route.endsWith('/data/list')).map((one) => one.body as Record<string, unknown>);
    const [first, ...rest] = bodies;
    expect(first).toEqual({ externalId: 'sim-all-points', partitions: [{ index: 1 }], limit: 40, ...FLAGS, pollTimeoutSeconds: 0 });
    rest.forEach((body, i) => {
      expect(body).toEqual({ ...first, partitions: [{ index: 1, cursor: pages[i]?.nextCursor }] });
    });
    // Later, from the last cursor: only what came since; together, what one read from the start gives.
    clock.advance(2 * MINUTE);
    const later = await pagesOf(client, { ...request, startCursor: pages.at(-1)?.nextCursor });
    expect(later.flatMap((page) => page.updates).length).toBeGreaterThan(0);
    const whole = await pagesOf(client, { ...request, limit: 100_000 });
    expect(whole).toHaveLength(1);
    const key = (row: ChangeRow) => JSON.stringify({ ...row, changeOrder: 0 });
    const bySeries = (rows: ChangeRow[]) => {
      const map = new Map<number, string[]>();
      for (const row of rows) map.set(row.timeseriesId, [...(map.get(row.timeseriesId) ?? []), key(row)]);
      return map;
    };
    expect(bySeries(rowsOf([...pages, ...later]))).toEqual(bySeries(rowsOf(whole)));
  });

  it('gives change rows that, applied in changeOrder to the points at the start, give the points now', async () => {
    const clock = createFakeClock();
    const sim = await simulator(clock);
    const client = connect(sim.baseUrl);
    const atStart = indexes(SERIES).map((index) => allPoints(sim.dataset.datapoints.series(index)));
    clock.advance(6 * MINUTE);
    const rows = (await Promise.all([0, 1, 2, 3].map(async (partition) => {
      return rowsOf(await pagesOf(client, { externalId: 'sim-all-points', partition, limit: 500, ...FLAGS }));
    }))).flat();
    expect(rows.filter((row) => row.change === 'delete').length).toBeGreaterThan(10);
    const wrong: number[] = [];
    for (const index of indexes(SERIES)) {
      const id = sim.dataset.timeseries.idOf(index);
      const points = new Map((atStart[index] ?? []).map((point) => [point.timestamp, point]));
      const own = rows.filter((row) => row.timeseriesId === id).sort((a, b) => a.changeOrder - b.changeOrder);
      for (const row of own) {
        if (row.change === 'delete') {
          for (const timestamp of points.keys()) {
            const inRange = timestamp >= row.timestamp && (row.deleteEnd === null || timestamp < row.deleteEnd);
            if (inRange) points.delete(timestamp);
          }
        } else {
          const value = row.valueString ?? row.value;
          const point = {
            timestamp: row.timestamp,
            ...(value === null ? {} : { value: typeof value === 'number' && !Number.isFinite(value) ? String(value) : value }),
            ...(row.statusCode === 0 ? {} : { status: { code: row.statusCode, symbol: row.statusSymbol } }),
          };
          points.set(row.timestamp, point as (typeof atStart)[number][number]);
        }
      }
      const applied = [...points.values()].sort((a, b) => a.timestamp - b.timestamp);
      const now = allPoints(sim.dataset.datapoints.series(index));
      if (JSON.stringify(applied) !== JSON.stringify(now)) wrong.push(index);
    }
    expect(wrong).toEqual([]);
  });

  it('surfaces an expired cursor as the platform\'s 400, its message kept', async () => {
    const clock = createFakeClock();
    const sim = await simulator(clock, { faults: { cursorTtlMs: 5 * MINUTE } });
    const client = connect(sim.baseUrl);
    const request = { externalId: 'sim-all-points', partition: 0, limit: 100_000, ...FLAGS };
    const pages = await pagesOf(client, request);
    clock.advance(6 * MINUTE);
    const error = await rejection(pagesOf(client, { ...request, startCursor: pages.at(-1)?.nextCursor }));
    expect(error).toBeInstanceOf(HttpStatusError);
    expect((error as HttpStatusError).status).toBe(400);
    expect((error as HttpStatusError).platformMessage).toMatch(/^Cursor has expired/);
  });
});

describe('drainSubscriptionFeed on answers the platform does not give', () => {
  async function drainScripted(respond: (index: number) => ScriptedResponse): Promise<unknown> {
    const server = await startScriptedServer((_request, index) => respond(index));
    cleanup.push(() => server.close());
    const client = connect(server.baseUrl);
    return rejection(pagesOf(client, { externalId: 's', partition: 2, limit: 10, ...FLAGS }));
  }
  const series = { id: 1, externalId: 'a', isString: false, type: 'numeric' };

  it.each([
    [{ updates: [], partitions: [{ index: 0, nextCursor: 'c' }], hasNext: false }, 'partitions entry of index 2'],
    [{ updates: [], partitions: [{ index: 2, nextCursor: 'c' }] }, 'hasNext is not true or false'],
    [{ partitions: [{ index: 2, nextCursor: 'c' }], hasNext: false }, 'updates is not an array'],
    [
      { updates: [{ timeSeries: series, upserts: [{ timestamp: 'x' }] }], partitions: [{ index: 2, nextCursor: 'c' }], hasNext: false },
      'updates[0].upserts[0] is not a point',
    ],
    [
      { updates: [{ timeSeries: series, deletes: [{ inclusiveBegin: 5, exclusiveEnd: 1.5 }] }], partitions: [{ index: 2, nextCursor: 'c' }], hasNext: false },
      'updates[0].deletes[0] is not a range',
    ],
    [{ updates: [{ timeSeries: { id: 1 } }], partitions: [{ index: 2, nextCursor: 'c' }], hasNext: false }, 'updates[0].timeSeries.isString'],
  ])('refuses %j naming where it is wrong', async (body, message) => {
    const error = await drainScripted(() => ({ body }));
    expect(error).toBeInstanceOf(BadResponseError);
    expect((error as Error).message).toContain(message);
  });

  it(`stops a feed that says more follows ${MAX_EMPTY_PAGES} times in a row and sends nothing`, async () => {
    const error = await drainScripted((index) => ({ body: { updates: [], partitions: [{ index: 2, nextCursor: `c${index}` }], hasNext: true } }));
    expect(error).toBeInstanceOf(CursorLoopError);
    expect((error as Error).message).toContain(`${MAX_EMPTY_PAGES} times in a row`);
  });
});
