import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { keyOf, listAll, liveKeys, post, valueIn, viewRef } from '../support/instances.js';

const AUTH = { 'api-key': 'instances-api-key-1' };
const COUNTS = { assets: 240, activities: 300, timeseries: 120, edges: 260 };

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ seed: 11, apiKeys: [AUTH['api-key']], instances: COUNTS });
});

afterAll(() => sim.close());

type Ref = { space: string; externalId: string };
const keys = (pages: { items: Ref[] }[]) => pages.flatMap((page) => page.items.map(keyOf));

describe('POST /models/instances/list', () => {
  it('pages through every node once (assets, activities, time series in that order) and every edge once', async () => {
    const nodes = await listAll(sim, { limit: 97 }, AUTH);
    expect(nodes.length).toBeGreaterThan(6);
    expect(nodes.slice(0, -1).every((page) => page.items.length === 97 && page.nextCursor !== undefined)).toBe(true);
    expect(nodes.at(-1)?.nextCursor).toBeUndefined();
    const expected = [...liveKeys(sim, 'asset'), ...liveKeys(sim, 'activity'), ...liveKeys(sim, 'timeseries')];
    expect(keys(nodes)).toEqual(expected);
    expect(new Set(keys(nodes)).size).toBe(COUNTS.assets + COUNTS.activities + COUNTS.timeseries);

    const edges = await listAll(sim, { instanceType: 'edge', limit: 1000 }, AUTH);
    expect(edges).toHaveLength(1);
    expect(keys(edges)).toEqual(liveKeys(sim, 'edge'));
    expect(edges[0]?.items.every((edge) => edge.instanceType === 'edge' && edge.type?.externalId === 'assetActivity')).toBe(true);
  });

  it('lists the instances with data in every source view, and returns those views\' properties only', async () => {
    const pages = await listAll(sim, { sources: [{ source: viewRef('CogniteTimeSeries') }, { source: viewRef('CogniteDescribable') }] }, AUTH);
    expect(keys(pages)).toEqual(liveKeys(sim, 'timeseries'));
    const item = pages[0]?.items[0];
    expect(Object.keys(item?.properties ?? {})).toEqual(['cdf_cdm']);
    expect(Object.keys(item?.properties.cdf_cdm ?? {})).toEqual(['CogniteTimeSeries/v1', 'CogniteDescribable/v1']);
    expect(Object.keys(item?.properties.cdf_cdm?.['CogniteDescribable/v1'] ?? {})).toEqual(['name', 'description', 'tags', 'aliases']);
    const bare = await post(sim, '/models/instances/list', { limit: 1 }, AUTH);
    expect(bare.json<{ items: { properties: unknown }[] }>().items[0]?.properties).toEqual({});
  });

  it('answers each instance in the platform shape, values equal to the generated ones, nullable ones null on a share', async () => {
    const pages = await listAll(sim, { sources: [{ source: viewRef('CogniteAsset') }] }, AUTH);
    const items = pages.flatMap((page) => page.items);
    for (const [i, item] of items.entries()) {
      const instance = sim.instances.instance('asset', i);
      expect(item).toEqual({
        instanceType: 'node',
        space: instance.space,
        externalId: instance.externalId,
        version: instance.version,
        createdTime: instance.createdTime,
        lastUpdatedTime: instance.lastUpdatedTime,
        properties: { cdf_cdm: { 'CogniteAsset/v1': expect.any(Object) } },
      });
      const values = item.properties.cdf_cdm?.['CogniteAsset/v1'] ?? {};
      expect(values.parent).toEqual(valueIn(instance, 'cdf_cdm:CogniteAsset', 'assetHierarchy_parent'));
      expect(values.name).toEqual(valueIn(instance, 'cdf_cdm:CogniteDescribable', 'name'));
      expect(Object.keys(values)).toHaveLength(16);
    }
    const share = (name: string) => items.filter((item) => item.properties.cdf_cdm?.['CogniteAsset/v1']?.[name] === null).length / items.length;
    for (const name of ['description', 'criticality', 'installationDate', 'extendedAttributes', 'sourceId']) {
      expect(share(name), name).toBeGreaterThan(0.02);
      expect(share(name), name).toBeLessThan(0.7);
    }
    expect(share('root')).toBe(0);
  });

  it('points direct relations and edges at real nodes, a tree in one space', async () => {
    const nodeKeys = new Set([...liveKeys(sim, 'asset'), ...liveKeys(sim, 'activity'), ...liveKeys(sim, 'timeseries')]);
    const assets = (await listAll(sim, { sources: [{ source: viewRef('CogniteAsset') }] }, AUTH)).flatMap((page) => page.items);
    for (const asset of assets) {
      const values = asset.properties.cdf_cdm?.['CogniteAsset/v1'] ?? {};
      const path = values.path as Ref[];
      expect(path.every((ref) => nodeKeys.has(keyOf(ref)) && ref.space === asset.space)).toBe(true);
      expect(keyOf(path.at(-1) ?? { space: '', externalId: '' })).toBe(keyOf(asset));
      expect(keyOf(values.root as Ref)).toBe(keyOf(path[0] ?? { space: '', externalId: '' }));
      const parent = values.parent as Ref | null;
      expect(parent === null ? path.length === 1 : keyOf(parent) === keyOf(path.at(-2) ?? asset)).toBe(true);
    }
    const activities = (await listAll(sim, { sources: [{ source: viewRef('CogniteActivity') }] }, AUTH)).flatMap((page) => page.items);
    const targets = activities.flatMap((activity) => {
      const values = activity.properties.cdf_cdm?.['CogniteActivity/v1'] ?? {};
      return [...(values.assets as Ref[]), ...(values.timeSeries as Ref[])];
    });
    expect(targets.length).toBeGreaterThan(100);
    expect(targets.every((ref) => nodeKeys.has(keyOf(ref)))).toBe(true);
    const edges = (await listAll(sim, { instanceType: 'edge' }, AUTH)).flatMap((page) => page.items);
    for (const edge of edges) {
      expect(nodeKeys.has(keyOf(edge.startNode ?? { space: '', externalId: '' }))).toBe(true);
      expect(nodeKeys.has(keyOf(edge.endNode ?? { space: '', externalId: '' }))).toBe(true);
      expect(edge.space).toBe(edge.startNode?.space);
    }
    const spaces = [...assets, ...activities, ...edges].map((instance) => instance.space);
    expect(new Set(spaces)).toEqual(new Set(['sim_site_a', 'sim_site_b', 'sim_site_c']));
  });

  it('carries typing for the sources with includeTyping, keyed as the properties are', async () => {
    const reply = await post(sim, '/models/instances/list', { instanceType: 'edge', limit: 1, includeTyping: true, sources: [{ source: viewRef('ActivityLink', 'sim_model') }] }, AUTH);
    type Typing = Record<string, Record<string, Record<string, { type: unknown; nullable: boolean }>>>;
    const answer = reply.json<{ typing: Typing }>();
    expect(answer.typing).toEqual({
      sim_model: {
        'ActivityLink/v1': {
          role: expect.objectContaining({ type: { type: 'text', list: false, collation: 'ucs_basic' }, nullable: true }),
          weight: expect.objectContaining({ type: { type: 'float64', list: false } }),
          linkedTime: expect.objectContaining({ type: { type: 'timestamp', list: false } }),
        },
      },
    });
  });

  it('is the same for the same seed, and differs for another', async () => {
    const again = await startSimulator({ seed: 11, apiKeys: [AUTH['api-key']], instances: COUNTS });
    const other = await startSimulator({ seed: 12, apiKeys: [AUTH['api-key']], instances: COUNTS });
    try {
      const body = { limit: 300, sources: [{ source: viewRef('CogniteActivity') }] };
      const first = (await post(sim, '/models/instances/list', body, AUTH)).json<{ items: unknown[] }>().items;
      expect((await post(again, '/models/instances/list', body, AUTH)).json<{ items: unknown[] }>().items).toEqual(first);
      expect((await post(other, '/models/instances/list', body, AUTH)).json<{ items: unknown[] }>().items).not.toEqual(first);
    } finally {
      await Promise.all([again.close(), other.close()]);
    }
  });

  it('refuses a bad body with 400 naming the property, and a non-empty sort as not served', async () => {
    for (const [body, fragment] of [
      [{ limit: 1001 }, "'limit'"],
      [{ instanceType: 'vertex' }, "'instanceType'"],
      [{ sort: [{ property: ['node', 'externalId'] }] }, "'sort': the platform takes it; the simulator does not serve it"],
      [{ sources: [{ source: viewRef('CogniteNothing') }] }, "'sources[0].source': view cdf_cdm:CogniteNothing/v1 does not exist"],
      [{ sources: [{ source: viewRef('CogniteAsset'), targetUnits: [] }] }, "'sources[0].targetUnits'"],
      [{ partition: '1/2' }, "'partition'"],
      [{ cursor: 'not-a-cursor' }, 'Invalid cursor'],
      [[{ limit: 1 }], 'The request body must be a JSON object, got [{"limit":1}].'],
    ] as const) {
      const reply = await post(sim, '/models/instances/list', body, AUTH);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      const { error } = reply.json<{ error: { code: number; message: string } }>();
      expect(error).toEqual({ code: 400, message: expect.stringContaining(fragment) });
    }
    expect((await post(sim, '/models/instances/list', { sort: [], limit: 1 }, AUTH)).status).toBe(200);
  });

  it('refuses a cursor with any other property changed', async () => {
    const first = (await post(sim, '/models/instances/list', { limit: 5 }, AUTH)).json<{ nextCursor: string }>();
    const reply = await post(sim, '/models/instances/list', { limit: 6, cursor: first.nextCursor }, AUTH);
    expect(reply.status).toBe(400);
    expect(reply.text).toContain('Cursor does not match the request parameters');
  });
});

describe('a million asset nodes', () => {
  it('are served from the first page to the last without holding them: memory does not grow with the count', async () => {
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    const before = process.memoryUsage().heapUsed;
    const big = await startSimulator({ apiKeys: [AUTH['api-key']], instances: { assets: 1_000_000, activities: 10, timeseries: 10, edges: 10 } });
    try {
      expect(big.instances.count('asset')).toBe(1_000_000);
      const last = big.instances.instance('asset', 999_999);
      expect(last.externalId).toBe('AST-00LFLR');
      const page = await post(big, '/models/instances/list', { limit: 1000, sources: [{ source: viewRef('CogniteAsset') }] }, AUTH);
      expect(page.json<{ items: unknown[] }>().items).toHaveLength(1000);
      // The last asset by its externalId: the filter reads one generated asset after another, a page of them at a time.
      const found = await post(big, '/models/instances/list', {
        filter: { equals: { property: ['node', 'externalId'], value: 'AST-00LFLR' } },
        sources: [{ source: viewRef('CogniteAsset') }],
      }, AUTH);
      expect(found.status).toBe(200);
      gc?.();
      // A million generated assets would take hundreds of MB; the simulator holds none of them.
      expect(process.memoryUsage().heapUsed - before).toBeLessThan(60 * 1024 * 1024);
    } finally {
      await big.close();
    }
  });
});
