import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RELATIONSHIP_TYPES, resourceSpec } from '../../src/resources/index.js';
import {
  ASSET_ID_BASE,
  ASSET_ID_STRIDE,
  createDataset,
  DATA_SET_ID_BASE,
  type Simulator,
  startSimulator,
} from '../../src/simulator/index.js';
import { createFakeClock } from '../support/fake-clock.js';
import { drain, drainPost as drainPages, listUrl, send } from '../support/http.js';

/**
 * The four collections beyond assets and events, as the simulator serves them: generated on
 * demand and deterministic, linked to items that exist, partitioned like the others, and filtered
 * (GET and POST /list) and counted exactly as a brute-force pass over the data says.
 */
const API_KEY = 'test-key-collections';
const AUTH = { 'api-key': API_KEY };
const JSON_AUTH = { ...AUTH, 'content-type': 'application/json' };
const COUNTS = { assets: 300, events: 400, timeseries: 700, files: 600, sequences: 350, relationships: 900 } as const;
const NEW = ['timeseries', 'files', 'sequences', 'relationships'] as const;
type New = (typeof NEW)[number];
type Item = Record<string, unknown>;

let sim: Simulator;

const assetId = (index: number) => ASSET_ID_BASE + index * ASSET_ID_STRIDE;

beforeAll(async () => {
  sim = await startSimulator({ ...COUNTS, dataSets: 4, seed: 5, apiKeys: [API_KEY], clock: createFakeClock() });
});

afterAll(async () => {
  await sim.close();
});

function all(resource: New): Item[] {
  const set: { count: number; item(index: number): object } = sim.dataset[resource];
  return Array.from({ length: set.count }, (_, index) => ({ ...set.item(index) }));
}

const keyOf = (resource: New) => (item: Item) => item[resourceSpec(resource).key] as string | number;

async function drainGet(resource: New, params: Record<string, string | number>): Promise<Item[]> {
  return (await drain(sim.baseUrl, `/${resource}`, params, AUTH)).flatMap((page) => page.items);
}

/** Every item of `POST /{resource}/list` with this body, following the cursor. */
async function drainPost(resource: New, body: Record<string, unknown>): Promise<Item[]> {
  return (await drainPages(sim.baseUrl, `/${resource}/list`, body, AUTH)).flatMap((page) => page.items);
}

async function count(resource: New, filter: Record<string, unknown>): Promise<number> {
  const reply = await send(`${sim.baseUrl}/${resource}/aggregate`, { method: 'POST', headers: JSON_AUTH, body: JSON.stringify({ filter }) });
  expect(reply.status, reply.text).toBe(200);
  return reply.json<{ items: [{ count: number }] }>().items[0].count;
}

describe.each(NEW.map((resource) => [resource]))('/%s', (resource) => {
  it('is a pure function of the seed: equal seeds give equal items, another seed other items', () => {
    // The simulator's series that are data-model nodes carry the node's key: the same nodes here.
    const seriesNodes = sim.instances.seriesNodes();
    const again = createDataset({ ...COUNTS, seed: 5, dataSets: 4, seriesNodes })[resource];
    const other = createDataset({ ...COUNTS, seed: 6, dataSets: 4 })[resource];
    for (const index of [0, 1, 17, COUNTS[resource] - 1]) {
      expect(again.item(index)).toEqual(sim.dataset[resource].item(index));
    }
    expect([0, 1, 2].map((i) => other.item(i))).not.toEqual([0, 1, 2].map((i) => sim.dataset[resource].item(i)));
  });

  it('has the fields the platform always sends, a unique key, and links only to items that exist', () => {
    const items = all(resource);
    const spec = resourceSpec(resource);
    expect(new Set(items.map(keyOf(resource))).size).toBe(items.length);
    const assetIds = new Set(Array.from({ length: COUNTS.assets }, (_, i) => sim.dataset.assets.idOf(i)));
    const dataSets = new Set(Array.from({ length: 4 }, (_, i) => DATA_SET_ID_BASE + i));
    for (const item of items) {
      expect(item[spec.key]).toBeDefined();
      expect(typeof item.createdTime).toBe('number');
      expect(item.lastUpdatedTime as number).toBeGreaterThanOrEqual(item.createdTime as number);
      if (item.dataSetId !== undefined) expect(dataSets.has(item.dataSetId as number)).toBe(true);
      if (item.assetId !== undefined) expect(assetIds.has(item.assetId as number)).toBe(true);
      for (const id of (item.assetIds as number[] | undefined) ?? []) expect(assetIds.has(id)).toBe(true);
    }
    // Every item of the collection differs in more than its key: the generator draws real fields.
    const shapes = new Set(items.map((item) => JSON.stringify({ ...item, [spec.key]: 0, externalId: 0 })));
    expect(shapes.size).toBeGreaterThan(items.length / 2);
  });

  for (const n of [1, 3, 10]) {
    it(`n = ${n}: the partitions are disjoint and together the whole collection, by key`, async () => {
      const parts = await Promise.all(
        Array.from({ length: n }, (_, m) => drainGet(resource, { limit: 97, ...(n === 1 ? {} : { partition: `${m + 1}/${n}` }) })),
      );
      const keys = parts.flat().map(keyOf(resource));
      expect(new Set(keys).size).toBe(keys.length);
      expect(new Set(keys)).toEqual(new Set(all(resource).map(keyOf(resource))));
    });
  }

  it('answers a filter on POST /list and /aggregate exactly: data set by externalId, and a lastUpdatedTime range', async () => {
    const items = all(resource);
    const times = items.map((item) => item.lastUpdatedTime as number).sort((a, b) => a - b);
    const [min, max] = [times[Math.floor(times.length / 4)]!, times[Math.floor((3 * times.length) / 4)]!];
    const filter = { dataSetIds: [{ externalId: 'DS-2' }, { id: DATA_SET_ID_BASE + 3 }], lastUpdatedTime: { min, max } };
    const expected = items.filter(
      (item) =>
        (item.dataSetId === DATA_SET_ID_BASE + 2 || item.dataSetId === DATA_SET_ID_BASE + 3) &&
        (item.lastUpdatedTime as number) >= min &&
        (item.lastUpdatedTime as number) <= max,
    );
    expect(expected.length).toBeGreaterThan(10);
    const listed = await drainPost(resource, { limit: 50, partition: '2/3', filter });
    const rest = [...(await drainPost(resource, { limit: 50, partition: '1/3', filter })), ...(await drainPost(resource, { limit: 50, partition: '3/3', filter }))];
    expect(new Set([...listed, ...rest].map(keyOf(resource)))).toEqual(new Set(expected.map(keyOf(resource))));
    expect([...listed, ...rest]).toHaveLength(expected.length);
    if (resourceSpec(resource).countable) expect(await count(resource, filter)).toBe(expected.length);
  });
});

describe('filters of one collection each, against a brute-force pass', () => {
  const cases: [New, Record<string, unknown>, (item: Item) => boolean][] = [
    ['timeseries', { isString: true }, (item) => item.isString === true],
    ['timeseries', { isStep: false, unit: 'bar' }, (item) => item.isStep === false && item.unit === 'bar'],
    ['timeseries', { assetExternalIds: ['AS-000007', 'AS-00000A'] }, (item) => [7, 10].map((i) => sim.dataset.assets.idOf(i)).includes(item.assetId as number)],
    ['timeseries', { assetSubtreeIds: [{ id: assetId(0) }] }, (item) => item.assetId !== undefined && sim.dataset.assets.rootIndexOf(sim.dataset.assets.indexOfId(item.assetId as number)!) === 0],
    ['files', { uploaded: false }, (item) => item.uploaded === false && item.uploadedTime === undefined],
    ['files', { directoryPrefix: '/plant' }, (item) => typeof item.directory === 'string' && item.directory.startsWith('/plant')],
    ['files', { rootAssetIds: [{ externalId: 'AS-00002S' }] }, (item) => ((item.assetIds as number[] | undefined) ?? []).some((id) => sim.dataset.assets.rootIndexOf(sim.dataset.assets.indexOfId(id)!) === 100)],
    ['sequences', { externalIdPrefix: 'SQ-00000' }, (item) => String(item.externalId).startsWith('SQ-00000')],
    ['sequences', { rootAssetIds: [assetId(0)] }, (item) => item.assetId !== undefined && sim.dataset.assets.rootIndexOf(sim.dataset.assets.indexOfId(item.assetId as number)!) === 0],
    ['relationships', { sourceTypes: ['asset', 'file'], targetTypes: ['timeSeries'] }, (item) => ['asset', 'file'].includes(item.sourceType as string) && item.targetType === 'timeSeries'],
    ['relationships', { confidence: { min: 0.5, max: 0.9 } }, (item) => typeof item.confidence === 'number' && item.confidence >= 0.5 && item.confidence <= 0.9],
    ['relationships', { activeAtTime: { min: Date.UTC(2021, 0, 1), max: Date.UTC(2021, 5, 1) } }, (item) => typeof item.startTime === 'number' && item.startTime <= Date.UTC(2021, 5, 1) && (item.endTime === undefined || (item.endTime as number) >= Date.UTC(2021, 0, 1))],
  ];

  it.each(cases)('%s %j', async (resource, filter, wanted) => {
    const expected = all(resource).filter(wanted);
    expect(expected.length, 'the case selects something').toBeGreaterThan(0);
    expect(expected.length, 'and not everything').toBeLessThan(COUNTS[resource]);
    const listed = await drainPost(resource, { limit: 1000, filter });
    expect(listed.map(keyOf(resource))).toEqual(expected.map(keyOf(resource)));
  });

  it('metadata: the items holding a pair one of them has', async () => {
    const files = all('files');
    const withMetadata = files.find((item) => Object.keys(item.metadata ?? {}).length > 0);
    const [key, value] = Object.entries(withMetadata?.metadata ?? {})[0]!;
    const expected = files.filter((item) => (item.metadata as Record<string, string> | undefined)?.[key] === value);
    expect(expected.length).toBeLessThan(files.length);
    const listed = await drainPost('files', { limit: 1000, filter: { metadata: { [key]: value } } });
    expect(listed.map((item) => item.id)).toEqual(expected.map((item) => item.id));
  });

  it('GET takes the filters its list has: ids as a JSON array, booleans as text', async () => {
    const assetIds = [sim.dataset.assets.idOf(1), sim.dataset.assets.idOf(2)];
    const bySeries = await drainGet('timeseries', { limit: 1000, assetIds: JSON.stringify(assetIds) });
    expect(bySeries.map((item) => item.id)).toEqual(all('timeseries').filter((item) => assetIds.includes(item.assetId as number)).map((item) => item.id));
    const uploaded = await drainGet('files', { limit: 1000, uploaded: 'true' });
    expect(uploaded.map((item) => item.id)).toEqual(all('files').filter((item) => item.uploaded === true).map((item) => item.id));
  });

  it('relationships link existing items of the type they name', () => {
    const byType = {
      asset: (externalId: string) => sim.dataset.assets.indexOfExternalId(externalId) !== undefined,
      event: (externalId: string) => /^EV-/.test(externalId),
      timeSeries: (externalId: string) => /^TS-/.test(externalId),
      file: (externalId: string) => /^FI-/.test(externalId),
      sequence: (externalId: string) => /^SQ-/.test(externalId),
    };
    const types = new Set<string>();
    for (const item of all('relationships')) {
      for (const end of ['source', 'target'] as const) {
        const type = item[`${end}Type`] as (typeof RELATIONSHIP_TYPES)[number];
        types.add(type);
        expect(byType[type](item[`${end}ExternalId`] as string), `${type} ${String(item[`${end}ExternalId`])}`).toBe(true);
      }
    }
    expect(types).toEqual(new Set(RELATIONSHIP_TYPES));
  });
});

describe('bounds, defaults and errors', () => {
  it('sequences: a request without limit gets pages of 25, the platform\'s default', async () => {
    const reply = await send(listUrl(sim.baseUrl, '/sequences', {}), { headers: AUTH });
    expect(reply.json<{ items: unknown[] }>().items).toHaveLength(25);
    const posted = await send(`${sim.baseUrl}/sequences/list`, { method: 'POST', headers: JSON_AUTH, body: '{}' });
    expect(posted.json<{ items: unknown[] }>().items).toHaveLength(25);
  });

  it.each([
    ['/timeseries', { isString: 'true' }, /Unrecognized query parameter 'isString'/],
    ['/timeseries', { assetIds: '[1,' }, /'assetIds': expected a JSON array of int64/],
    ['/timeseries', { assetIds: JSON.stringify(Array.from({ length: 101 }, (_, i) => i + 1)) }, /'assetIds': expected a list of 1 to 100 ids/],
    ['/files', { uploaded: 'yes' }, /'uploaded': expected 'true' or 'false', got 'yes'/],
    ['/files', { name: 'n'.repeat(257) }, /'name': expected 1 to 256 characters/],
    ['/sequences', { externalIdPrefix: 'SQ' }, /Unrecognized query parameter 'externalIdPrefix' for \/sequences/],
    ['/relationships', { sourceTypes: '["asset"]' }, /Unrecognized query parameter 'sourceTypes'/],
  ])('GET %s %j: 400 naming the parameter', async (path, params, message) => {
    const reply = await send(listUrl(sim.baseUrl, path, params), { headers: AUTH });
    expect(reply.status).toBe(400);
    const { error } = reply.json<{ error: { code: number; message: string } }>();
    expect(error).toMatchObject({ code: 400, message: expect.stringMatching(message) });
  });

  it.each([
    ['timeseries', { dataSetIds: [] }, /'filter.dataSetIds': expected a list of 1 to 100 objects/],
    ['timeseries', { dataSetIds: [{ id: 1, externalId: 'x' }] }, /'filter.dataSetIds'/],
    ['relationships', { sourceTypes: ['assets'] }, /'filter.sourceTypes': expected a list of 1 to 1000 of asset, timeSeries/],
    ['relationships', { confidence: { min: 2 } }, /'filter.confidence.min': expected a number from 0 to 1, got 2/],
    ['relationships', { metadata: { a: 'b' } }, /Unrecognized property 'filter.metadata' for \/relationships\/list/],
    ['files', { uploaded: 'true' }, /'filter.uploaded': expected true or false, got "true"/],
    ['sequences', { assetIds: [0] }, /'filter.assetIds': expected a list of 1 to 100 ids/],
  ])('POST /%s/list %j: 400 naming the property', async (resource, filter, message) => {
    const reply = await send(`${sim.baseUrl}/${resource}/list`, { method: 'POST', headers: JSON_AUTH, body: JSON.stringify({ filter }) });
    expect(reply.status).toBe(400);
    expect(reply.json<{ error: { message: string } }>().error.message).toMatch(message);
  });

  it('the platform has no count for relationships: POST /relationships/aggregate is not found', async () => {
    const reply = await send(`${sim.baseUrl}/relationships/aggregate`, { method: 'POST', headers: JSON_AUTH, body: '{}' });
    expect(reply.status).toBe(404);
    expect(reply.json<{ error: { code: number } }>().error.code).toBe(404);
  });

  it('a cursor of a POST chain is bound to its body: another filter with it is refused', async () => {
    const first = await send(`${sim.baseUrl}/files/list`, { method: 'POST', headers: JSON_AUTH, body: JSON.stringify({ limit: 10, filter: { uploaded: true } }) });
    const { nextCursor } = first.json<{ nextCursor: string }>();
    const other = await send(`${sim.baseUrl}/files/list`, {
      method: 'POST',
      headers: JSON_AUTH,
      body: JSON.stringify({ limit: 10, filter: { uploaded: false }, cursor: nextCursor }),
    });
    expect(other.status).toBe(400);
  });

  it('10 million items of every collection: the last is there at once, nothing is generated ahead', () => {
    const many = 10_000_000;
    const big = createDataset({
      seed: 1,
      assets: many,
      events: many,
      timeseries: many,
      files: many,
      sequences: many,
      relationships: many,
    });
    expect(big.relationships.item(9_999_999).externalId).toBe(`REL-${(9_999_999).toString(36).toUpperCase().padStart(6, '0')}`);
    expect(big.timeseries.item(9_999_999).id).toBe(big.timeseries.idOf(9_999_999));
  });
});
