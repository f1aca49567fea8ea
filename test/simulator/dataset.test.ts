import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ASSET_ID_BASE,
  type AssetFilter,
  createDataset,
  EVENT_ID_BASE,
  type EventFilter,
  type Simulator,
  startSimulator,
} from '../../src/simulator/index.js';
import { createFakeClock } from '../support/fake-clock.js';
import { drain, listUrl, type Page, send } from '../support/http.js';
import { idOf, indexes, type Item, type Params } from '../support/items.js';

const API_KEY = 'test-key-123456';
const AUTH = { 'api-key': API_KEY };
const TWO_POW_32 = 2 ** 32;

async function drainItems(sim: Simulator, path: string, params: Params): Promise<Item[]> {
  const pages = await drain(sim.baseUrl, path, { limit: 1000, ...params }, AUTH);
  return pages.flatMap((page) => page.items);
}

function isInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every null found anywhere inside `value`, as paths. */
function nullPaths(value: unknown, path = '$'): string[] {
  if (value === null) return [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => nullPaths(v, `${path}[${i}]`));
  if (isPlainObject(value)) return Object.entries(value).flatMap(([k, v]) => nullPaths(v, `${path}.${k}`));
  return [];
}

function expectStringMap(value: unknown, where: string): void {
  expect(isPlainObject(value), `${where}: metadata is an object`).toBe(true);
  for (const [key, entry] of Object.entries(value as Record<string, unknown>)) {
    expect(typeof entry, `${where}: metadata[${JSON.stringify(key)}]`).toBe('string');
  }
}

/** Counts, per optional key, how many items have it. */
function presence(items: readonly Item[], keys: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const key of keys) counts[key] = items.filter((item) => key in item).length;
  return counts;
}

describe('dataset: determinism ("equal seeds give byte-identical data")', () => {
  it('createDataset with the same seed gives deep-equal items; another seed gives different items', () => {
    const a = createDataset({ seed: 42, assets: 300, events: 500 });
    const b = createDataset({ seed: 42, assets: 300, events: 500 });
    const c = createDataset({ seed: 43, assets: 300, events: 500 });
    const eventsOf = (d: typeof a) => indexes(500).map((i) => d.events.item(i));
    const assetsOf = (d: typeof a) => indexes(300).map((i) => d.assets.item(i));

    expect(eventsOf(a)).toStrictEqual(eventsOf(b));
    expect(assetsOf(a)).toStrictEqual(assetsOf(b));
    // Generating in another order gives the same items (pure function of seed and index).
    expect(
      indexes(500)
        .reverse()
        .map((i) => b.events.item(i))
        .reverse(),
    ).toStrictEqual(eventsOf(a));

    const eventsA = eventsOf(a);
    const eventsC = eventsOf(c);
    expect(eventsC).not.toStrictEqual(eventsA);
    const differentEvents = indexes(500).filter(
      (i) => JSON.stringify(eventsA[i]) !== JSON.stringify(eventsC[i]),
    ).length;
    expect(differentEvents).toBeGreaterThan(450);
    const assetsA = assetsOf(a);
    const assetsC = assetsOf(c);
    const differentAssets = indexes(300).filter(
      (i) => JSON.stringify(assetsA[i]) !== JSON.stringify(assetsC[i]),
    ).length;
    expect(differentAssets).toBeGreaterThan(270);
  });

  it('two simulators with the same seed serve byte-identical pages; another seed serves different ones', async () => {
    const options = { assets: 400, events: 900, seed: 99, apiKeys: [API_KEY] };
    const one = await startSimulator({ ...options, clock: createFakeClock() });
    const two = await startSimulator({ ...options, clock: createFakeClock() });
    const other = await startSimulator({ ...options, seed: 100, clock: createFakeClock() });
    try {
      for (const [path, params] of [
        ['/events', { limit: 250 }],
        ['/events', { limit: 100, type: 'alarm', partition: '2/3' }],
        ['/assets', { limit: 300 }],
      ] as const) {
        const pagesOne = await drain(one.baseUrl, path, params, AUTH);
        const pagesTwo = await drain(two.baseUrl, path, params, AUTH);
        const pagesOther = await drain(other.baseUrl, path, params, AUTH);
        expect(pagesOne.length).toBeGreaterThan(0);
        expect(pagesTwo.map((p) => JSON.stringify(p.items))).toEqual(
          pagesOne.map((p) => JSON.stringify(p.items)),
        );
        expect(JSON.stringify(pagesOther.flatMap((p) => p.items))).not.toBe(
          JSON.stringify(pagesOne.flatMap((p) => p.items)),
        );
      }
    } finally {
      await Promise.all([one.close(), two.close(), other.close()]);
    }
  });
});

describe('dataset: eventMetadataBytes (large items for memory benchmarks)', () => {
  it('adds metadata.padding of exactly N characters to every event and changes nothing else', () => {
    const plain = createDataset({ seed: 7, assets: 50, events: 200 });
    const padded = createDataset({ seed: 7, assets: 50, events: 200, eventMetadataBytes: 100_000 });
    for (const i of indexes(200)) {
      const { metadata, ...rest } = padded.events.item(i);
      const { padding, ...others } = metadata ?? {};
      expect(padding).toHaveLength(100_000);
      const { metadata: plainMetadata, ...plainRest } = plain.events.item(i);
      expect(rest).toStrictEqual(plainRest);
      expect(others).toStrictEqual(Object.fromEntries(Object.entries(plainMetadata ?? {}).filter(([k]) => k !== 'padding')));
    }
    expect(plain.events.item(0).metadata?.padding).toBeUndefined();
    expect(padded.events.item(0, false).metadata).toBeUndefined();
  });
});

describe('dataset: items as served over HTTP', () => {
  const ASSETS = 2000;
  const EVENTS = 2000;
  let sim: Simulator;
  let events: Item[];
  let assets: Item[];

  beforeAll(async () => {
    sim = await startSimulator({
      assets: ASSETS,
      events: EVENTS,
      seed: 2024,
      apiKeys: [API_KEY],
      clock: createFakeClock(),
    });
    events = await drainItems(sim, '/events', {});
    assets = await drainItems(sim, '/assets', {});
  });
  afterAll(async () => {
    await sim.close();
  });

  it('serves the whole set', () => {
    expect(events).toHaveLength(EVENTS);
    expect(assets).toHaveLength(ASSETS);
  });

  it('every event has the interface fields with the right types (id, type, startTime, source, createdTime, lastUpdatedTime, assetIds when it has assets) plus externalId and dataSetId; no value is null', () => {
    const known = new Set([
      'id',
      'externalId',
      'type',
      'subtype',
      'description',
      'startTime',
      'endTime',
      'assetIds',
      'source',
      'dataSetId',
      'metadata',
      'createdTime',
      'lastUpdatedTime',
    ]);
    for (const event of events) {
      const where = `event ${String(event.id)}`;
      expect(nullPaths(event), where).toEqual([]);
      for (const key of Object.keys(event))
        expect(known.has(key), `${where}: unexpected key ${key}`).toBe(true);
      expect(isInteger(event.id), where).toBe(true);
      expect(typeof event.externalId, where).toBe('string');
      expect(typeof event.type, where).toBe('string');
      expect(String(event.type).length).toBeGreaterThan(0);
      expect(isInteger(event.startTime), where).toBe(true);
      if ('assetIds' in event) {
        // The platform's description: at least one item when the field is present.
        expect(Array.isArray(event.assetIds) && event.assetIds.length > 0, where).toBe(true);
        for (const assetId of event.assetIds as unknown[]) expect(isInteger(assetId), where).toBe(true);
      }
      expect(typeof event.source, where).toBe('string');
      expect(isInteger(event.createdTime), where).toBe(true);
      expect(isInteger(event.lastUpdatedTime), where).toBe(true);
      expect(Number(event.lastUpdatedTime)).toBeGreaterThanOrEqual(Number(event.createdTime));
      if ('subtype' in event) expect(typeof event.subtype, where).toBe('string');
      if ('description' in event) expect(typeof event.description, where).toBe('string');
      if ('endTime' in event) {
        expect(isInteger(event.endTime), where).toBe(true);
        expect(Number(event.endTime)).toBeGreaterThanOrEqual(Number(event.startTime));
      }
      if ('dataSetId' in event) expect(isInteger(event.dataSetId), where).toBe(true);
      expectStringMap(event.metadata, where);
    }
    const externalIds = new Set(events.map((e) => e.externalId));
    expect(externalIds.size).toBe(EVENTS);
  });

  it('optional event fields (subtype, endTime, description, dataSetId, assetIds) are sometimes present and sometimes absent (absent = key missing)', () => {
    const counts = presence(events, ['subtype', 'endTime', 'description', 'dataSetId', 'assetIds']);
    for (const [key, count] of Object.entries(counts)) {
      expect(count, `${key} present on some events`).toBeGreaterThan(0);
      expect(count, `${key} absent on some events`).toBeLessThan(EVENTS);
    }
    const always = presence(events, [
      'id',
      'externalId',
      'type',
      'startTime',
      'source',
      'createdTime',
      'lastUpdatedTime',
    ]);
    for (const [key, count] of Object.entries(always)) expect(count, key).toBe(EVENTS);
  });

  it('every asset has id, name, rootId, createdTime, lastUpdatedTime, metadata (string -> string), unique externalId; parentId is absent only on roots; no value is null', () => {
    const known = new Set([
      'id',
      'externalId',
      'name',
      'parentId',
      'parentExternalId',
      'rootId',
      'description',
      'metadata',
      'source',
      'dataSetId',
      'labels',
      'geoLocation',
      'createdTime',
      'lastUpdatedTime',
    ]);
    for (const asset of assets) {
      const where = `asset ${String(asset.id)}`;
      expect(nullPaths(asset), where).toEqual([]);
      for (const key of Object.keys(asset))
        expect(known.has(key), `${where}: unexpected key ${key}`).toBe(true);
      expect(isInteger(asset.id), where).toBe(true);
      expect(typeof asset.externalId, where).toBe('string');
      expect(typeof asset.name, where).toBe('string');
      expect(String(asset.name).length).toBeGreaterThan(0);
      expect(isInteger(asset.rootId), where).toBe(true);
      expect(isInteger(asset.createdTime), where).toBe(true);
      expect(isInteger(asset.lastUpdatedTime), where).toBe(true);
      expect(Number(asset.lastUpdatedTime)).toBeGreaterThanOrEqual(Number(asset.createdTime));
      const isRoot = asset.rootId === asset.id;
      expect('parentId' in asset, `${where}: parentId present iff not a root`).toBe(!isRoot);
      if ('parentId' in asset) expect(isInteger(asset.parentId), where).toBe(true);
      if ('parentExternalId' in asset) {
        const parent = sim.dataset.assets.indexOfId(Number(asset.parentId));
        expect(asset.parentExternalId, where).toBe(sim.dataset.assets.externalIdOf(parent!));
      }
      if ('geoLocation' in asset) expect((asset.geoLocation as { type?: unknown }).type, where).toBe('Feature');
      if ('description' in asset) expect(typeof asset.description, where).toBe('string');
      if ('source' in asset) expect(typeof asset.source, where).toBe('string');
      if ('dataSetId' in asset) expect(isInteger(asset.dataSetId), where).toBe(true);
      if ('labels' in asset) {
        expect(Array.isArray(asset.labels), where).toBe(true);
        for (const label of asset.labels as unknown[]) {
          expect(isPlainObject(label) && typeof label.externalId === 'string', where).toBe(true);
        }
      }
      expectStringMap(asset.metadata, where);
    }
    expect(new Set(assets.map((a) => a.externalId)).size).toBe(ASSETS);
    const counts = presence(assets, ['parentId', 'parentExternalId', 'description', 'dataSetId', 'labels', 'geoLocation', 'source']);
    for (const [key, count] of Object.entries(counts)) {
      expect(count, `${key} present on some assets`).toBeGreaterThan(0);
      expect(count, `${key} absent on some assets`).toBeLessThan(ASSETS);
    }
  });

  it('ids are safe integers above 2^32 and unique, in the dataset and over HTTP', () => {
    for (const [name, items, base] of [
      ['events', events, EVENT_ID_BASE],
      ['assets', assets, ASSET_ID_BASE],
    ] as const) {
      const ids = items.map(idOf);
      for (const id of ids) {
        expect(Number.isSafeInteger(id), `${name} ${id}`).toBe(true);
        expect(id, name).toBeGreaterThan(TWO_POW_32);
      }
      expect(new Set(ids).size, name).toBe(ids.length);
      expect(base).toBeGreaterThan(TWO_POW_32);
    }
    const all = [...events.map(idOf), ...assets.map(idOf)];
    expect(new Set(all).size).toBe(all.length);
    // The largest ids a billion-item set can have are still safe integers.
    const huge = createDataset({ seed: 1, assets: 1_000_000_000, events: 1_000_000_000 });
    expect(Number.isSafeInteger(huge.events.idOf(999_999_999))).toBe(true);
    expect(Number.isSafeInteger(huge.assets.idOf(999_999_999))).toBe(true);
    expect(huge.events.idOf(999_999_999)).toBeGreaterThan(huge.events.idOf(999_999_998));
  });

  it('trees: rootId names a root (its own rootId), parentId names an asset of the same tree, parents lead to the root without cycles, several trees', () => {
    const byId = new Map(assets.map((asset) => [idOf(asset), asset]));
    let maxDepth = 0;
    for (const asset of assets) {
      const where = `asset ${String(asset.id)}`;
      const root = byId.get(Number(asset.rootId));
      expect(root, `${where}: root exists`).toBeDefined();
      expect(root?.rootId, `${where}: root is its own root`).toBe(root?.id);
      if ('parentId' in asset) {
        const parent = byId.get(Number(asset.parentId));
        expect(parent, `${where}: parent exists`).toBeDefined();
        expect(parent?.rootId, `${where}: parent in the same tree`).toBe(asset.rootId);
      }
      const visited = new Set<number>();
      let current: Item | undefined = asset;
      while (current !== undefined && 'parentId' in current) {
        const id = idOf(current);
        expect(visited.has(id), `${where}: cycle at ${id}`).toBe(false);
        visited.add(id);
        current = byId.get(Number(current.parentId));
      }
      expect(current?.id, `${where}: the parent chain ends at the root`).toBe(asset.rootId);
      maxDepth = Math.max(maxDepth, visited.size);
    }
    const roots = assets.filter((asset) => !('parentId' in asset));
    expect(roots.length).toBeGreaterThanOrEqual(5);
    expect(roots.length).toBeLessThan(ASSETS / 2);
    expect(maxDepth).toBeGreaterThan(2);
  });

  it("events' assetIds all refer to existing assets", () => {
    const assetIds = new Set(indexes(ASSETS).map((i) => sim.dataset.assets.idOf(i)));
    expect(assetIds).toEqual(new Set(assets.map(idOf)));
    let references = 0;
    for (const event of events) {
      const ids = (event.assetIds ?? []) as number[];
      expect(new Set(ids).size).toBe(ids.length);
      for (const id of ids) {
        expect(assetIds.has(id), `event ${String(event.id)} -> asset ${id}`).toBe(true);
        references++;
      }
    }
    expect(references).toBeGreaterThan(EVENTS / 2);
    // An event on no asset has no assetIds: the platform never lists an empty one.
    expect(events.some((event) => !('assetIds' in event))).toBe(true);
    expect(events.every((event) => !('assetIds' in event) || (event.assetIds as number[]).length > 0)).toBe(true);
  });

  it('metadata holds hard text: astral characters (emoji), CJK, non-ASCII keys, a newline, a double quote, an empty value', () => {
    const keys: string[] = [];
    const values: string[] = [];
    for (const item of [...events, ...assets]) {
      for (const [key, value] of Object.entries(item.metadata as Record<string, string>)) {
        keys.push(key);
        values.push(value);
      }
    }
    const text = [...keys, ...values];
    expect(text.some((s) => [...s].some((c) => (c.codePointAt(0) ?? 0) > 0xffff))).toBe(true);
    expect(text.some((s) => /\p{Script=Han}/u.test(s))).toBe(true);
    expect(keys.some((k) => /[^\x20-\x7e]/.test(k))).toBe(true);
    expect(values.some((v) => /[^\x20-\x7e]/.test(v))).toBe(true);
    expect(values.some((v) => v.includes('\n'))).toBe(true);
    expect(values.some((v) => v.includes('"'))).toBe(true);
    expect(values.some((v) => v === '')).toBe(true);
    // Some items have empty metadata objects, others several keys.
    expect(events.some((e) => Object.keys(e.metadata as object).length === 0)).toBe(true);
    expect(events.some((e) => Object.keys(e.metadata as object).length >= 3)).toBe(true);
  });

  it('includeMetadata=false omits the metadata key entirely (everything else unchanged); default and true include it', async () => {
    for (const [path, full] of [
      ['/events', events],
      ['/assets', assets],
    ] as const) {
      const without = await drainItems(sim, path, { includeMetadata: 'false', limit: 500 });
      expect(without).toHaveLength(full.length);
      for (const item of without) expect('metadata' in item).toBe(false);
      expect(without).toStrictEqual(
        full.map((item) => {
          const { metadata, ...rest } = item;
          return rest;
        }),
      );
      for (const item of full) expect('metadata' in item).toBe(true);
      const explicit = await drainItems(sim, path, { includeMetadata: 'true' });
      expect(explicit).toStrictEqual(full);
    }
  });

  describe('filters over HTTP return exactly the items the dataset says match', () => {
    function eventPredicate(filter: EventFilter): (item: Item) => boolean {
      return (item) =>
        (filter.type === undefined || item.type === filter.type) &&
        (filter.subtype === undefined || item.subtype === filter.subtype) &&
        (filter.source === undefined || item.source === filter.source) &&
        (filter.minLastUpdatedTime === undefined ||
          Number(item.lastUpdatedTime) >= filter.minLastUpdatedTime) &&
          (filter.maxLastUpdatedTime === undefined ||
            Number(item.lastUpdatedTime) <= filter.maxLastUpdatedTime) &&
            (filter.minStartTime === undefined || Number(item.startTime) >= filter.minStartTime) &&
            (filter.maxStartTime === undefined || Number(item.startTime) <= filter.maxStartTime);
    }

    async function expectEventFilter(filter: EventFilter): Promise<number[]> {
      const byDataset = indexes(EVENTS)
        .filter((i) => sim.dataset.events.matches(i, filter))
        .map((i) => sim.dataset.events.idOf(i));
      const byFields = events.filter(eventPredicate(filter)).map(idOf);
      expect(byDataset).toEqual(byFields);
      const served = (await drainItems(sim, '/events', { ...filter, limit: 200 })).map(idOf);
      expect(served).toEqual(byDataset);
      return served;
    }

    it('type', async () => {
      const served = await expectEventFilter({ type: 'alarm' });
      expect(served.length).toBeGreaterThan(0);
      expect(served.length).toBeLessThan(EVENTS);
      expect(await expectEventFilter({ type: 'no-such-type' })).toEqual([]);
    });

    it('subtype (alone and with type)', async () => {
      expect((await expectEventFilter({ subtype: 'high' })).length).toBeGreaterThan(0);
      expect((await expectEventFilter({ type: 'inspection', subtype: 'visual' })).length).toBeGreaterThan(0);
    });

    it('source (ASCII, with a space, and non-ASCII)', async () => {
      for (const source of ['SAP', 'OSIsoft PI', '系统A', 'Historian-β']) {
        expect((await expectEventFilter({ source })).length, source).toBeGreaterThan(0);
      }
    });

    it("min/maxLastUpdatedTime are inclusive: an item's own lastUpdatedTime as both bounds returns it", async () => {
      for (const item of [events[0], events[777], events[EVENTS - 1]]) {
        const t = Number(item?.lastUpdatedTime);
        const served = await expectEventFilter({ minLastUpdatedTime: t, maxLastUpdatedTime: t });
        expect(served).toContain(item?.id);
        expect(await expectEventFilter({ minLastUpdatedTime: t + 1, maxLastUpdatedTime: t })).toEqual([]);
      }
      const sorted = events.map((e) => Number(e.lastUpdatedTime)).sort((a, b) => a - b);
      const median = sorted[EVENTS / 2] ?? 0;
      const low = await expectEventFilter({ maxLastUpdatedTime: median });
      const high = await expectEventFilter({ minLastUpdatedTime: median });
      expect(low.length + high.length).toBeGreaterThanOrEqual(EVENTS);
      expect(low.length).toBeGreaterThan(EVENTS / 3);
      expect(high.length).toBeGreaterThan(EVENTS / 3);
    });

    it('min/maxStartTime (inclusive, each alone and as a window)', async () => {
      const sorted = events.map((e) => Number(e.startTime)).sort((a, b) => a - b);
      const q1 = sorted[EVENTS / 4] ?? 0;
      const q3 = sorted[(3 * EVENTS) / 4] ?? 0;
      expect((await expectEventFilter({ minStartTime: q3 })).length).toBeGreaterThan(EVENTS / 5);
      expect((await expectEventFilter({ maxStartTime: q1 })).length).toBeGreaterThan(EVENTS / 5);
      expect((await expectEventFilter({ minStartTime: q1, maxStartTime: q3 })).length).toBeGreaterThan(
        EVENTS / 3,
      );
      const one = events[1234];
      const t = Number(one?.startTime);
      expect(await expectEventFilter({ minStartTime: t, maxStartTime: t })).toContain(one?.id);
    });

    it('all event filters combined', async () => {
      const sorted = events.map((e) => Number(e.startTime)).sort((a, b) => a - b);
      await expectEventFilter({
        type: 'failure',
        source: 'SAP',
        minStartTime: sorted[100] ?? 0,
        maxStartTime: sorted[1900] ?? 0,
        minLastUpdatedTime: 0,
        maxLastUpdatedTime: Number.MAX_SAFE_INTEGER,
      });
    });

    it('assets: min/maxLastUpdatedTime (inclusive)', async () => {
      async function expectAssetFilter(filter: AssetFilter): Promise<number[]> {
        const byDataset = indexes(ASSETS)
          .filter((i) => sim.dataset.assets.matches(i, filter))
          .map((i) => sim.dataset.assets.idOf(i));
        const byFields = assets
          .filter(
            (a) =>
              (filter.minLastUpdatedTime === undefined ||
                Number(a.lastUpdatedTime) >= filter.minLastUpdatedTime) &&
                (filter.maxLastUpdatedTime === undefined ||
                  Number(a.lastUpdatedTime) <= filter.maxLastUpdatedTime),
          )
          .map(idOf);
        expect(byDataset).toEqual(byFields);
        const served = (await drainItems(sim, '/assets', { ...filter, limit: 300 })).map(idOf);
        expect(served).toEqual(byDataset);
        return served;
      }
      const one = assets[321];
      const t = Number(one?.lastUpdatedTime);
      expect(await expectAssetFilter({ minLastUpdatedTime: t, maxLastUpdatedTime: t })).toContain(one?.id);
      const sorted = assets.map((a) => Number(a.lastUpdatedTime)).sort((a, b) => a - b);
      const median = sorted[ASSETS / 2] ?? 0;
      expect((await expectAssetFilter({ minLastUpdatedTime: median })).length).toBeGreaterThan(ASSETS / 3);
      expect((await expectAssetFilter({ maxLastUpdatedTime: median })).length).toBeGreaterThan(ASSETS / 3);
    });
  });
});

describe('dataset: on-the-fly generation ("nothing is stored, so ten million events cost no more memory than ten")', () => {
  it('a simulator with 10M events and 1M assets starts, serves the end of the set (partition 10/10), and grows the heap by < 50 MB', async () => {
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    const before = process.memoryUsage().heapUsed;
    const sim = await startSimulator({
      events: 10_000_000,
      assets: 1_000_000,
      seed: 5,
      apiKeys: [API_KEY],
      clock: createFakeClock(),
    });
    try {
      gc?.();
      const grown = process.memoryUsage().heapUsed - before;
      expect(grown).toBeLessThan(50 * 1024 * 1024);

      const events = await send(listUrl(sim.baseUrl, '/events', { partition: '10/10', limit: 1000 }), {
        headers: AUTH,
      });
      expect(events.status).toBe(200);
      const page = events.json<Page>();
      expect(page.items.map(idOf)).toEqual(indexes(1000).map((i) => sim.dataset.events.idOf(9_000_000 + i)));
      expect(typeof page.nextCursor).toBe('string');

      const next = await send(
        listUrl(sim.baseUrl, '/events', { partition: '10/10', limit: 1000, cursor: page.nextCursor }),
        { headers: AUTH },
      );
      expect(next.status).toBe(200);
      expect(next.json<Page>().items.map(idOf)).toEqual(
        indexes(1000).map((i) => sim.dataset.events.idOf(9_001_000 + i)),
      );

      const lastEvent = sim.dataset.events.item(9_999_999);
      expect(lastEvent.id).toBe(sim.dataset.events.idOf(9_999_999));
      for (const id of lastEvent.assetIds ?? []) expect(id).toBeLessThanOrEqual(sim.dataset.assets.idOf(999_999));

      const assets = await send(listUrl(sim.baseUrl, '/assets', { partition: '10/10', limit: 10 }), {
        headers: AUTH,
      });
      expect(assets.status).toBe(200);
      expect(assets.json<Page>().items.map(idOf)).toEqual(
        indexes(10).map((i) => sim.dataset.assets.idOf(900_000 + i)),
      );
    } finally {
      await sim.close();
    }
  });
});
