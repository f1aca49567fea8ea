import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { PartitionIndexes } from '../../src/simulator/partition.js';
import { type ResourceName, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { createFakeClock } from '../support/fake-clock.js';
import { listUrl, type Page, send } from '../support/http.js';

const API_KEY = 'churn-key-123456';
const AUTH = { 'api-key': API_KEY };
const T = Date.UTC(2027, 5, 1);

/** Every index partition m/n lists, in its order. */
function walk(indexes: PartitionIndexes): number[] {
  const seen: number[] = [];
  for (let i = indexes.first; i < indexes.total; i = indexes.after(i)) seen.push(i);
  return seen;
}

describe('PartitionIndexes: partitions with inserts', () => {
  it('are ascending, disjoint and cover [0, total); an index keeps its partition whatever is inserted', () => {
    fc.assert(
      fc.property(fc.nat(200), fc.nat(60), fc.nat(60), fc.integer({ min: 1, max: 10 }), (generated, a, b, n) => {
        const owner = new Map<number, number>();
        for (const total of [generated + a, generated + a + b]) {
          const all: number[] = [];
          for (let m = 1; m <= n; m++) {
            const indexes = new PartitionIndexes(generated, total, { m, n });
            const listed = walk(indexes);
            expect(listed).toEqual([...listed].sort((x, y) => x - y));
            for (const i of listed) {
              expect(indexes.includes(i)).toBe(true);
              expect(owner.get(i) ?? m, `index ${i}`).toBe(m);
              owner.set(i, m);
            }
            all.push(...listed);
          }
          expect(all.sort((x, y) => x - y)).toEqual(Array.from({ length: total }, (_, i) => i));
        }
        expect(walk(new PartitionIndexes(generated, generated + a, undefined))).toHaveLength(generated + a);
      }),
    );
  });
});

describe('simulator: inserts and churn in the collections', () => {
  let sim: Simulator | undefined;
  afterEach(async () => {
    await sim?.close();
    sim = undefined;
  });

  async function page(resource: ResourceName, params: Record<string, string | number | undefined>): Promise<Page> {
    const reply = await send(listUrl(sim?.baseUrl ?? '', `/${resource}`, params), { headers: AUTH });
    expect(reply.status, reply.text).toBe(200);
    return reply.json<Page>();
  }

  it.each(['events', 'assets', 'timeseries', 'files', 'sequences', 'relationships'] as const)(
    '%s: items inserted during a listing come at the end of one partition, with new ids; cursors go on',
    async (resource) => {
      const clock = createFakeClock(T);
      sim = await startSimulator({
        assets: 50, events: 60, timeseries: 40, files: 40, sequences: 30, relationships: 40,
        seed: 7, apiKeys: [API_KEY], clock,
      });
      const key = resource === 'relationships' ? 'externalId' : 'id';
      const set = sim.dataset[resource];
      const generated = set.count;
      const keyOf = (index: number) => String((set.item(index) as unknown as Record<string, unknown>)[key]);
      const before = new Set(Array.from({ length: generated }, (_, i) => keyOf(i)));
      const n = 3;
      const firstPages = await Promise.all([1, 2, 3].map((m) => page(resource, { partition: `${m}/${n}`, limit: 5 })));
      const inserted = sim.insert(resource, 7, T + 1000);
      expect(inserted).toEqual(Array.from({ length: 7 }, (_, k) => generated + k));
      const lists: string[][] = [];
      for (let m = 1; m <= n; m++) {
        const pages = [firstPages[m - 1] as Page];
        while (pages.at(-1)?.nextCursor !== undefined) {
          pages.push(await page(resource, { partition: `${m}/${n}`, limit: 5, cursor: pages.at(-1)?.nextCursor }));
        }
        lists.push(pages.flatMap((p) => p.items.map((item) => String(item[key]))));
      }
      const all = lists.flat();
      expect(new Set(all).size).toBe(all.length);
      expect(all).toHaveLength(generated + 7);
      const fresh = all.filter((id) => !before.has(id));
      expect(fresh).toHaveLength(7);
      for (const index of inserted) {
        expect(set.item(index)).toMatchObject({ createdTime: T + 1000, lastUpdatedTime: T + 1000 });
      }
      // Partition m ends with the m-th, (m+n)-th, ... insert.
      for (let m = 1; m <= n; m++) {
        const mine = inserted.filter((index) => (index - generated) % n === m - 1).map(keyOf);
        const list = lists[m - 1] ?? [];
        expect(list.slice(list.length - mine.length)).toEqual(mine);
      }
    },
  );

  it('--churn changes every collection as the clock passes, and lastUpdatedTime filters see it', async () => {
    const clock = createFakeClock(T);
    sim = await startSimulator({ assets: 50, events: 60, seed: 7, churn: 10, apiKeys: [API_KEY], clock });
    const counts = { events: sim.dataset.events.count, assets: sim.dataset.assets.count };
    expect((await page('events', { minLastUpdatedTime: T, limit: 1000 })).items).toEqual([]);
    clock.advance(60_000);
    // The request applies the 600 changes due: events and assets among them, updates and inserts.
    const changed = (await page('events', { minLastUpdatedTime: T, limit: 1000 })).items;
    expect(changed.length).toBeGreaterThan(20);
    expect(sim.dataset.events.count).toBeGreaterThan(counts.events);
    expect(sim.dataset.assets.count).toBeGreaterThan(counts.assets);
    const updated = changed.filter((item) => (item.createdTime as number) < T);
    expect(updated.length).toBeGreaterThan(0);
    for (const item of updated) expect(item.description).toMatch(/\(revision \d+\)$/);
    for (const item of changed) expect(item.lastUpdatedTime as number).toBeLessThanOrEqual(T + 60_000);
  });
});
