import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { allPoints } from '../support/datapoints.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';
import { type Reply, send } from '../support/http.js';
import { indexes } from '../support/items.js';

/**
 * Datapoint subscriptions: created at start or by POST, read back, and their feed: each partition
 * a chain that serves every change `--churn` made and every point that arrived, once, in order;
 * the partitions disjoint and complete; and the changes applied to the points as they were at the
 * subscription's start give the points now.
 */
const AUTH = { 'api-key': 'subscriptions-key-1' };
const SERIES = 120;
const MINUTE = 60_000;

interface Point {
  timestamp: number;
  value?: number | string;
  status?: { code: number; symbol: string };
}
interface Update {
  timeSeries: { id: number; externalId?: string; isString: boolean; type: string };
  upserts: Point[];
  deletes: { inclusiveBegin: number; exclusiveEnd?: number }[];
}
interface DataAnswer {
  updates: Update[];
  subscriptionChanges: { added: unknown[]; removed: unknown[] };
  partitions: { index: number; nextCursor: string }[];
  hasNext: boolean;
}

let clock: FakeClock;
let sim: Simulator;
/** Every point of every series at the start, by series index. */
let atStart: Point[][];

function post(path: string, body: unknown): Promise<Reply> {
  return send(`${sim.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...AUTH },
    body: JSON.stringify(body),
  });
}

async function data(body: Record<string, unknown>): Promise<DataAnswer> {
  const reply = await post('/timeseries/subscriptions/data/list', body);
  expect(reply.status, reply.text).toBe(200);
  return reply.json<DataAnswer>();
}

/** A partition's chain from `cursor` until hasNext is false: its updates in order, and the last cursor. */
async function drain(
  externalId: string,
  index: number,
  cursor: string | undefined,
  limit: number,
): Promise<{ updates: Update[]; cursor: string; pages: number }> {
  const updates: Update[] = [];
  let pages = 0;
  for (;;) {
    const answer = await data({
      externalId,
      partitions: [{ index, ...(cursor === undefined ? {} : { cursor }) }],
      limit,
      includeStatus: true,
      ignoreBadDataPoints: false,
    });
    pages++;
    updates.push(...answer.updates);
    const next = answer.partitions.find((partition) => partition.index === index)?.nextCursor;
    expect(next).toBeTypeOf('string');
    cursor = next ?? '';
    if (!answer.hasNext) return { updates, cursor, pages };
    if (pages > 10_000) throw new Error('the chain does not end');
  }
}

/** The changes of each series, in order, as one list of `upsert ts` / `delete b..e` lines. */
function changesBySeries(updates: readonly Update[]): Map<number, string[]> {
  const bySeries = new Map<number, string[]>();
  for (const update of updates) {
    const lines = bySeries.get(update.timeSeries.id) ?? [];
    bySeries.set(update.timeSeries.id, lines);
    for (const range of update.deletes) lines.push(`delete ${range.inclusiveBegin}..${range.exclusiveEnd}`);
    for (const point of update.upserts) lines.push(`upsert ${JSON.stringify(point)}`);
  }
  return bySeries;
}

beforeAll(async () => {
  clock = createFakeClock();
  sim = await startSimulator({
    clock,
    seed: 46,
    assets: 10,
    events: 0,
    timeseries: SERIES,
    datapoints: 60_000,
    churn: 2,
    apiKeys: [AUTH['api-key']],
  });
  atStart = indexes(SERIES).map((index) => allPoints(sim.dataset.datapoints.series(index)));
});

afterAll(() => sim.close());

describe('subscriptions', () => {
  it('has the demo subscription, every series in 4 partitions; lists and reads it by id', async () => {
    const listed = await send(`${sim.baseUrl}/timeseries/subscriptions`, { headers: AUTH });
    expect(listed.status).toBe(200);
    const demo = { externalId: 'sim-all-points', partitionCount: 4, timeSeriesCount: SERIES, createdTime: clock.now() };
    expect(listed.json<{ items: unknown[] }>().items).toEqual([expect.objectContaining(demo)]);
    const byIds = await post('/timeseries/subscriptions/byids', { items: [{ externalId: 'sim-all-points' }] });
    expect(byIds.json<{ items: unknown[] }>().items).toEqual([expect.objectContaining(demo)]);
    const missing = await post('/timeseries/subscriptions/byids', { items: [{ externalId: 'nope' }] });
    expect(missing.status).toBe(400);
    expect(missing.json()).toEqual({
      error: { code: 400, message: 'Subscriptions not found', missing: [{ externalId: 'nope' }] },
    });
  });

  it('creates subscriptions by externalIds and by the isString filter; refuses other filters naming the path', async () => {
    const externalIds = indexes(SERIES).flatMap((index) => sim.dataset.timeseries.item(index, false).externalId ?? []);
    const named = await post('/timeseries/subscriptions', {
      items: [{ externalId: 'two', name: 'Two', partitionCount: 1, timeSeriesIds: externalIds.slice(0, 2) }],
    });
    expect(named.status, named.text).toBe(201);
    expect(named.json()).toEqual({ items: [expect.objectContaining({ externalId: 'two', timeSeriesCount: 2 })] });
    const numeric = await post('/timeseries/subscriptions', {
      items: [{ externalId: 'numeric', partitionCount: 3, filter: { equals: { property: ['isString'], value: false } } }],
    });
    const strings = indexes(SERIES).filter((index) => sim.dataset.timeseries.item(index, false).isString).length;
    expect(numeric.json()).toEqual({
      items: [expect.objectContaining({ externalId: 'numeric', timeSeriesCount: SERIES - strings })],
    });
    const cases: [unknown, string][] = [
      [{ externalId: 'x', partitionCount: 101 }, "'items[0].partitionCount': expected an integer in 1..100"],
      [{ externalId: 'x', partitionCount: 1, filter: { prefix: { property: ['name'], value: 'a' } } }, "'items[0].filter.prefix'"],
      [{ externalId: 'x', partitionCount: 1, filter: { equals: { property: ['unit'], value: 'a' } } }, "'items[0].filter.equals.property'"],
      [{ externalId: 'x', partitionCount: 1, timeSeriesIds: ['TS-ZZZZZZZZ'] }, "'items[0].timeSeriesIds[0]'"],
      [{ externalId: 'two', partitionCount: 1 }, "externalId 'two' already exists"],
    ];
    for (const [item, message] of cases) {
      const refused = await post('/timeseries/subscriptions', { items: [item] });
      expect(refused.status, JSON.stringify(item)).toBe(400);
      expect(refused.json<{ error: { message: string } }>().error.message).toContain(message);
    }
  });

  it('serves each partition as a chain that reads each change once, the partitions disjoint and complete, ' +
    'and the changes applied to the points at the start give the points now', async () => {
    const log = sim.dataset.datapoints.changes().length;
    expect(log).toBe(0);
    const cursors: (string | undefined)[] = [undefined, undefined, undefined, undefined];
    const byPage: Update[][] = [[], [], [], []];
    // Three rounds a few minutes apart, each reading every partition to its end in small pages.
    for (const minutes of [3, 4, 5]) {
      clock.advance(minutes * MINUTE);
      for (const index of [0, 1, 2, 3]) {
        const chain = await drain('sim-all-points', index, cursors[index], 97);
        cursors[index] = chain.cursor;
        byPage[index]?.push(...chain.updates);
      }
    }
    const changes = sim.dataset.datapoints.changes();
    expect(changes.length).toBeGreaterThan(1000);
    // The same feed read in one page per partition, from the start: the same changes of each series.
    const whole = await Promise.all([0, 1, 2, 3].map((index) => drain('sim-all-points', index, undefined, 100_000)));
    const seen = new Map<number, number>();
    for (const [index, chain] of whole.entries()) {
      expect(chain.pages).toBe(1);
      const paged = changesBySeries(byPage[index] ?? []);
      expect(paged).toEqual(changesBySeries(chain.updates));
      for (const id of paged.keys()) seen.set(id, (seen.get(id) ?? 0) + 1);
    }
    // Disjoint: each series in one partition. Complete: every series a change or an arrival touched.
    expect([...seen.values()].every((count) => count === 1)).toBe(true);
    const touched = new Set(changes.map((change) => sim.dataset.timeseries.idOf(change.series)));
    for (const index of indexes(SERIES)) {
      if (sim.dataset.datapoints.series(index).count > (atStart[index]?.length ?? 0)) {
        touched.add(sim.dataset.timeseries.idOf(index));
      }
    }
    expect(new Set(seen.keys())).toEqual(touched);
    // Every change of the log once: its deletes, and its upserts.
    const deletes = whole.flatMap((chain) => chain.updates.flatMap((update) => update.deletes));
    expect(deletes.length).toBe(changes.filter((change) => 'delete' in change).length);

    // Applied in order to the points at the start, the changes give the points now.
    const updates = whole.flatMap((chain) => chain.updates);
    const wrong: string[] = [];
    for (const index of indexes(SERIES)) {
      const id = sim.dataset.timeseries.idOf(index);
      const points = new Map((atStart[index] ?? []).map((point) => [point.timestamp, point]));
      for (const update of updates.filter((one) => one.timeSeries.id === id)) {
        for (const { inclusiveBegin, exclusiveEnd = Infinity } of update.deletes) {
          for (const timestamp of points.keys()) {
            if (timestamp >= inclusiveBegin && timestamp < exclusiveEnd) points.delete(timestamp);
          }
        }
        for (const point of update.upserts) points.set(point.timestamp, point);
      }
      const applied = [...points.values()].sort((a, b) => a.timestamp - b.timestamp);
      const now = allPoints(sim.dataset.datapoints.series(index));
      if (JSON.stringify(applied) !== JSON.stringify(now)) wrong.push(`series ${index}`);
    }
    expect(wrong).toEqual([]);
  });

  it('answers partitions and hasNext always; initializeCursors now starts at the end', async () => {
    const answer = await data({ externalId: 'sim-all-points', partitions: [{ index: 2 }, { index: 0 }], initializeCursors: 'now' });
    expect(answer.updates).toEqual([]);
    expect(answer.subscriptionChanges).toEqual({ added: [], removed: [] });
    expect(answer.partitions.map((partition) => partition.index)).toEqual([2, 0]);
    expect(answer.hasNext).toBe(false);
    clock.advance(MINUTE);
    const later = await data({
      externalId: 'sim-all-points',
      partitions: answer.partitions.map(({ index, nextCursor }) => ({ index, cursor: nextCursor })),
      limit: 100_000,
    });
    expect(later.updates.length).toBeGreaterThan(0);
    expect(later.hasNext).toBe(false);
  });

  it('refuses a cursor of another partition, an altered one, an unknown subscription and a partition it has not', async () => {
    const first = await data({ externalId: 'sim-all-points', partitions: [{ index: 1 }], initializeCursors: 'now' });
    const cursor = first.partitions[0]?.nextCursor ?? '';
    const cases: [unknown, string][] = [
      [{ externalId: 'sim-all-points', partitions: [{ index: 0, cursor }] }, 'Cursor does not match'],
      [{ externalId: 'sim-all-points', partitions: [{ index: 1, cursor: `${cursor}x` }] }, 'Invalid cursor'],
      [{ externalId: 'sim-all-points', partitions: [{ index: 4 }] }, "'partitions[0].index': subscription 'sim-all-points' has 4"],
      [{ externalId: 'nope', partitions: [{ index: 0 }] }, "No subscription with externalId 'nope'"],
      [{ externalId: 'sim-all-points', partitions: [{ index: 0 }], initializeCursors: '2s-ago' }, "'initializeCursors'"],
      [{ externalId: 'sim-all-points', partitions: [{ index: 0 }], limit: 100_001 }, "'limit'"],
      [{ externalId: 'sim-all-points', partitions: [{ index: 0 }], pollTimeoutSeconds: 6 }, "'pollTimeoutSeconds'"],
    ];
    for (const [body, message] of cases) {
      const refused = await post('/timeseries/subscriptions/data/list', body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.json<{ error: { message: string } }>().error.message).toContain(message);
    }
  });
});

describe('an expired subscription cursor', () => {
  it('is refused with 400 "Cursor has expired" once it points before what the subscription keeps', async () => {
    const expiring = createFakeClock();
    const short = await startSimulator({
      clock: expiring,
      timeseries: 20,
      datapoints: 2000,
      apiKeys: [AUTH['api-key']],
      faults: { cursorTtlMs: 10 * MINUTE },
    });
    try {
      const ask = (cursor?: string) =>
        send(`${short.baseUrl}/timeseries/subscriptions/data/list`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...AUTH },
          body: JSON.stringify({
            externalId: 'sim-all-points',
            partitions: [{ index: 3, ...(cursor === undefined ? {} : { cursor }) }],
          }),
        });
      const first = (await ask()).json<DataAnswer>();
      const cursor = first.partitions[0]?.nextCursor;
      expiring.advance(9 * MINUTE);
      expect((await ask(cursor)).status).toBe(200);
      expiring.advance(2 * MINUTE);
      const expired = await ask(cursor);
      expect(expired.status).toBe(400);
      const { message } = expired.json<{ error: { message: string } }>().error;
      expect(message).toMatch(/^Cursor has expired: partitions\[0\]\.cursor/);
      // Without a cursor the partition starts over from what is kept.
      expect((await ask()).status).toBe(200);
    } finally {
      await short.close();
    }
  });
});
