import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES, SOURCES } from '../../src/simulator/dataset/vocabulary.js';
import {
  type EventFilter,
  MAX_PARTITIONS,
  partitionRange,
  type ResourceName,
  type Simulator,
  startSimulator,
} from '../../src/simulator/index.js';
import { createFakeClock } from '../support/fake-clock.js';
import { drain, listUrl, type Page, send } from '../support/http.js';
import { idOf, idsOf, indexes, type Params } from '../support/items.js';

const API_KEY = 'test-key-123456';
const AUTH = { 'api-key': API_KEY };
const DAY_MS = 86_400_000;
const TIME_BASE_MS = Date.UTC(2019, 0, 1);
const TIME_END_MS = TIME_BASE_MS + 7 * 365 * DAY_MS;

const ascending = (a: number, b: number): number => a - b;

/** Drains every partition m = 1..n, sending the same params and `partition=m/n` on every request. */
async function drainPartitions(
  sim: Simulator,
  resource: ResourceName,
  n: number,
  params: Params,
): Promise<Page[][]> {
  const result: Page[][] = [];
  for (let m = 1; m <= n; m++) {
    result.push(await drain(sim.baseUrl, `/${resource}`, { ...params, partition: `${m}/${n}` }, AUTH));
  }
  return result;
}

/**
 * Asserts the partitions' id lists are free of duplicates, pairwise disjoint, and together equal
 * `expected` (compared sorted).
 */
function expectDisjointCover(partitions: readonly number[][], expected: readonly number[]): void {
  const seen = new Map<number, number>();
  partitions.forEach((ids, p) => {
    for (const id of ids) {
      const earlier = seen.get(id);
      expect(earlier, `id ${id} in partition ${p + 1} and ${earlier === undefined ? '?' : earlier + 1}`).toBe(
        undefined,
      );
      seen.set(id, p);
    }
  });
  const union = partitions.flat().sort(ascending);
  expect(union).toEqual([...expected].sort(ascending));
}

describe('parallel retrieval (seed: "partition has the form m/n … one request series per m … nextCursor followed until drained")', () => {
  const COUNTS: Record<'assets' | 'events', number> = { assets: 523, events: 1337 };
  let sim: Simulator;

  beforeAll(async () => {
    sim = await startSimulator({
      assets: COUNTS.assets,
      events: COUNTS.events,
      seed: 11,
      apiKeys: [API_KEY],
      clock: createFakeClock(),
    });
  });
  afterAll(async () => {
    await sim.close();
  });

  for (const resource of ['assets', 'events'] as const) {
    for (const n of [1, 2, 3, 7, 10]) {
      it(`/${resource} with n=${n}: the partitions m=1..${n} are disjoint and their union is the full drain`, async () => {
        const full = idsOf(await drain(sim.baseUrl, `/${resource}`, { limit: 200 }, AUTH));
        expect(full).toEqual(indexes(COUNTS[resource]).map((i) => sim.dataset[resource].idOf(i)));

        const partitions = await drainPartitions(sim, resource, n, { limit: 50 });
        expect(partitions).toHaveLength(n);
        const ids = partitions.map(idsOf);
        if (n > 1) for (const part of ids) expect(part.length).toBeLessThan(full.length);
        expectDisjointCover(ids, full);
      });
    }
  }

  const EVENT_FILTERS: [string, EventFilter][] = [
    ['type', { type: 'alarm' }],
    ['source', { source: '系统A' }],
    ['type and subtype', { type: 'maintenance', subtype: 'corrective' }],
    [
      'a lastUpdatedTime window',
      {
        minLastUpdatedTime: TIME_BASE_MS + 365 * DAY_MS,
        maxLastUpdatedTime: TIME_BASE_MS + 3 * 365 * DAY_MS,
      },
    ],
    [
      'minStartTime and maxStartTime',
      { minStartTime: TIME_BASE_MS + 2 * 365 * DAY_MS, maxStartTime: TIME_BASE_MS + 4 * 365 * DAY_MS },
    ],
  ];

  for (const [name, filter] of EVENT_FILTERS) {
    for (const n of [3, 7]) {
      it(`/events filtered by ${name}, n=${n}: every partition's items match and the union equals the filtered drain`, async () => {
        const expected = indexes(COUNTS.events)
          .filter((i) => sim.dataset.events.matches(i, filter))
          .map((i) => sim.dataset.events.idOf(i));
        expect(expected.length).toBeGreaterThan(0);
        expect(expected.length).toBeLessThan(COUNTS.events);

        const full = await drain(sim.baseUrl, '/events', { ...filter, limit: 40 }, AUTH);
        expect(idsOf(full)).toEqual(expected);

        const partitions = await drainPartitions(sim, 'events', n, { ...filter, limit: 40 });
        for (const item of partitions.flat().flatMap((page) => page.items)) {
          if (filter.type !== undefined) expect(item.type).toBe(filter.type);
          if (filter.subtype !== undefined) expect(item.subtype).toBe(filter.subtype);
          if (filter.source !== undefined) expect(item.source).toBe(filter.source);
          const updated = Number(item.lastUpdatedTime);
          const start = Number(item.startTime);
          if (filter.minLastUpdatedTime !== undefined)
            expect(updated).toBeGreaterThanOrEqual(filter.minLastUpdatedTime);
          if (filter.maxLastUpdatedTime !== undefined)
            expect(updated).toBeLessThanOrEqual(filter.maxLastUpdatedTime);
          if (filter.minStartTime !== undefined) expect(start).toBeGreaterThanOrEqual(filter.minStartTime);
          if (filter.maxStartTime !== undefined) expect(start).toBeLessThanOrEqual(filter.maxStartTime);
        }
        expectDisjointCover(partitions.map(idsOf), expected);
      });
    }
  }

  it('/assets filtered by a lastUpdatedTime window, n=7: every partition item matches and the union equals the filtered drain', async () => {
    const filter = {
      minLastUpdatedTime: TIME_BASE_MS + 2 * 365 * DAY_MS,
      maxLastUpdatedTime: TIME_BASE_MS + 5 * 365 * DAY_MS,
    };
    const expected = indexes(COUNTS.assets)
      .filter((i) => sim.dataset.assets.matches(i, filter))
      .map((i) => sim.dataset.assets.idOf(i));
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(COUNTS.assets);
    expect(idsOf(await drain(sim.baseUrl, '/assets', { ...filter, limit: 30 }, AUTH))).toEqual(expected);

    const partitions = await drainPartitions(sim, 'assets', 7, { ...filter, limit: 30 });
    for (const item of partitions.flat().flatMap((page) => page.items)) {
      expect(Number(item.lastUpdatedTime)).toBeGreaterThanOrEqual(filter.minLastUpdatedTime);
      expect(Number(item.lastUpdatedTime)).toBeLessThanOrEqual(filter.maxLastUpdatedTime);
    }
    expectDisjointCover(partitions.map(idsOf), expected);
  });

  it('partitions combined with a small scanBudget (short and empty pages inside partitions) still cover the filtered set exactly once', async () => {
    const tight = await startSimulator({
      assets: 50,
      events: 900,
      seed: 12,
      apiKeys: [API_KEY],
      clock: createFakeClock(),
      scanBudget: 25,
    });
    try {
      const filter: EventFilter = { type: 'failure' };
      const expected = indexes(900)
        .filter((i) => tight.dataset.events.matches(i, filter))
        .map((i) => tight.dataset.events.idOf(i));
      const partitions = await drainPartitions(tight, 'events', 4, { ...filter, limit: 1000 });
      for (const pages of partitions) expect(pages.length).toBeGreaterThan(1);
      expectDisjointCover(partitions.map(idsOf), expected);
    } finally {
      await tight.close();
    }
  });
});

describe('partitions: properties', () => {
  const filterArb: fc.Arbitrary<EventFilter> = fc.oneof(
    fc.constant<EventFilter>({}),
    fc.constantFrom(...EVENT_TYPES).map((type): EventFilter => ({ type })),
    fc.constantFrom(...SOURCES).map((source): EventFilter => ({ source })),
    fc
      .tuple(
        fc.integer({ min: TIME_BASE_MS, max: TIME_END_MS }),
        fc.integer({ min: 0, max: 3 * 365 * DAY_MS }),
      )
      .map(([min, width]): EventFilter => ({ minLastUpdatedTime: min, maxLastUpdatedTime: min + width })),
    fc
      .integer({ min: TIME_BASE_MS - 30 * DAY_MS, max: TIME_END_MS })
      .map((minStartTime): EventFilter => ({ minStartTime })),
  );

  it('for random n, limit, event count, scanBudget and filter, the partitions are disjoint and their union is the filtered set of the dataset', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          events: fc.integer({ min: 0, max: 400 }),
          n: fc.integer({ min: 1, max: MAX_PARTITIONS }),
          limit: fc.integer({ min: 1, max: 1000 }),
          scanBudget: fc.integer({ min: 20, max: 500 }),
          seed: fc.integer({ min: 0, max: 0xffffffff }),
          filter: filterArb,
        }),
        async ({ events, n, limit, scanBudget, seed, filter }) => {
          const sim = await startSimulator({
            assets: 20,
            events,
            seed,
            scanBudget,
            apiKeys: [API_KEY],
            clock: createFakeClock(),
          });
          try {
            const expected = indexes(events)
              .filter((i) => sim.dataset.events.matches(i, filter))
              .map((i) => sim.dataset.events.idOf(i));
            const partitions = await drainPartitions(sim, 'events', n, { ...filter, limit });
            for (const pages of partitions) {
              for (const page of pages) expect(page.items.length).toBeLessThanOrEqual(limit);
              expect(pages.at(-1)?.nextCursor).toBe(undefined);
            }
            expectDisjointCover(partitions.map(idsOf), expected);
          } finally {
            await sim.close();
          }
        },
      ),
      { numRuns: 25 },
    );
  });

  it('partitionRange: the ranges of m=1..n are contiguous, disjoint, balanced and cover [0, total)', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 1_000_000_000 })),
        fc.integer({ min: 1, max: MAX_PARTITIONS }),
        (total, n) => {
          expect(partitionRange(total, undefined)).toEqual({ start: 0, end: total });
          let previousEnd = 0;
          const sizes: number[] = [];
          for (let m = 1; m <= n; m++) {
            const { start, end } = partitionRange(total, { m, n });
            expect(Number.isInteger(start) && Number.isInteger(end)).toBe(true);
            expect(start).toBe(previousEnd);
            expect(end).toBeGreaterThanOrEqual(start);
            sizes.push(end - start);
            previousEnd = end;
          }
          expect(previousEnd).toBe(total);
          expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('partitions: edge cases', () => {
  it('n larger than the item count: some partitions are empty, answering {"items":[]} with no nextCursor on the first request', async () => {
    const sim = await startSimulator({
      assets: 2,
      events: 3,
      seed: 4,
      apiKeys: [API_KEY],
      clock: createFakeClock(),
    });
    try {
      for (const resource of ['events', 'assets'] as const) {
        const count = sim.dataset[resource].count;
        let empty = 0;
        const ids: number[][] = [];
        for (let m = 1; m <= 10; m++) {
          const reply = await send(listUrl(sim.baseUrl, `/${resource}`, { partition: `${m}/10` }), {
            headers: AUTH,
          });
          expect(reply.status).toBe(200);
          const page = reply.json<Page>();
          expect('nextCursor' in page).toBe(false);
          expect(page.items.length).toBeLessThanOrEqual(1);
          if (page.items.length === 0) {
            empty++;
            expect(page).toStrictEqual({ items: [] });
          }
          ids.push(page.items.map(idOf));
        }
        expect(empty).toBe(10 - count);
        expectDisjointCover(
          ids,
          indexes(count).map((i) => sim.dataset[resource].idOf(i)),
        );
      }
    } finally {
      await sim.close();
    }
  });

  it('a 0-item collection answers {"items":[]} without nextCursor, unpartitioned and for every partition', async () => {
    const sim = await startSimulator({
      assets: 0,
      events: 0,
      seed: 4,
      apiKeys: [API_KEY],
      clock: createFakeClock(),
    });
    try {
      for (const resource of ['events', 'assets'] as const) {
        const whole = await send(listUrl(sim.baseUrl, `/${resource}`, {}), { headers: AUTH });
        expect(whole.status).toBe(200);
        expect(whole.json()).toStrictEqual({ items: [] });
        for (const n of [1, 3, 10]) {
          for (let m = 1; m <= n; m++) {
            const reply = await send(
              listUrl(sim.baseUrl, `/${resource}`, { partition: `${m}/${n}`, limit: 1000 }),
              {
                headers: AUTH,
              },
            );
            expect(reply.status).toBe(200);
            expect(reply.json()).toStrictEqual({ items: [] });
          }
        }
      }
    } finally {
      await sim.close();
    }
  });
});
