import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { listUrl, send } from '../support/http.js';
import { post } from '../support/instances.js';

const AUTH = { 'api-key': 'views-api-key-1' };

interface View {
  space: string;
  externalId: string;
  version: string;
  isGlobal: boolean;
  usedFor: string;
  implements: { type: string; space: string; externalId: string; version: string }[];
  properties: Record<string, Record<string, unknown>>;
  mappedContainers: { type: string; space: string; externalId: string }[];
}

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ apiKeys: [AUTH['api-key']], instances: { assets: 5, activities: 5, timeseries: 5, edges: 5 } });
});

afterAll(() => sim.close());

type Params = Record<string, string | number | undefined>;

async function listViews(params: Params): Promise<{ items: View[]; nextCursor?: string }> {
  const reply = await send(listUrl(sim.baseUrl, '/models/views', params), { headers: AUTH });
  expect(reply.status, reply.text).toBe(200);
  return reply.json();
}

async function allViews(params: Record<string, string | number | undefined>): Promise<View[]> {
  const views: View[] = [];
  let cursor: string | undefined;
  do {
    const page = await listViews({ ...params, cursor });
    views.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return views;
}

async function byIds(body: unknown, query = ''): Promise<View[]> {
  const reply = await post(sim, `/models/views/byids${query}`, body, AUTH);
  expect(reply.status, reply.text).toBe(200);
  return reply.json<{ items: View[] }>().items;
}

describe('GET /models/views', () => {
  it('lists the user views by default and the global cdf_cdm views with includeGlobal=true, a page at a time', async () => {
    expect((await allViews({})).map((v) => `${v.space}:${v.externalId}`)).toEqual(['sim_model:ActivityLink']);
    const all = await allViews({ includeGlobal: 'true', limit: 2 });
    expect(all.map((v) => v.externalId)).toEqual([
      'CogniteDescribable',
      'CogniteSourceable',
      'CogniteSchedulable',
      'CogniteAsset',
      'CogniteActivity',
      'CogniteTimeSeries',
      'ActivityLink',
    ]);
    expect(all.filter((v) => v.space === 'cdf_cdm').every((v) => v.isGlobal && v.version === 'v1')).toBe(true);
    const core = await allViews({ includeGlobal: 'true', space: 'cdf_cdm' });
    expect(core).toHaveLength(6);
  });

  it('includes inherited properties unless includeInheritedProperties=false', async () => {
    const [asset] = (await allViews({ includeGlobal: 'true', space: 'cdf_cdm' })).filter((v) => v.externalId === 'CogniteAsset');
    expect(Object.keys(asset?.properties ?? {})).toEqual(expect.arrayContaining(['name', 'tags', 'sourceId', 'parent', 'path', 'children']));
    const own = await allViews({ includeGlobal: 'true', space: 'cdf_cdm', includeInheritedProperties: 'false' });
    const ownAsset = own.find((v) => v.externalId === 'CogniteAsset');
    expect(Object.keys(ownAsset?.properties ?? {})).not.toContain('name');
    expect(Object.keys(ownAsset?.properties ?? {})).toContain('parent');
    expect(ownAsset?.implements.map((ref) => ref.externalId)).toEqual(['CogniteDescribable', 'CogniteSourceable']);
  });

  it('refuses an unknown or repeated parameter, a bad limit and a foreign cursor with 400 naming it', async () => {
    const refused = async (query: string, fragment: string) => {
      const reply = await send(`${sim.baseUrl}/models/views?${query}`, { headers: AUTH });
      expect(reply.status).toBe(400);
      const { error } = reply.json<{ error: { code: number; message: string } }>();
      expect(error).toEqual({ code: 400, message: expect.stringContaining(fragment) });
    };
    await refused('spaces=cdf_cdm', "Invalid query parameter 'spaces': unrecognized.");
    await refused('limit=0', "'limit'");
    await refused('limit=1&limit=2', "'limit'");
    await refused('includeGlobal=yes', "'includeGlobal'");
    const first = await listViews({ includeGlobal: 'true', limit: 1 });
    await refused(`limit=2&includeGlobal=true&cursor=${first.nextCursor}`, 'Cursor does not match');
  });
});

describe('POST /models/views/byids', () => {
  it('answers the views asked for in the platform shape; an unknown one is left out; no version means every version', async () => {
    const views = await byIds({
      items: [
        { space: 'cdf_cdm', externalId: 'CogniteTimeSeries', version: 'v1' },
        { space: 'cdf_cdm', externalId: 'CogniteNothing', version: 'v1' },
        { space: 'sim_model', externalId: 'ActivityLink' },
      ],
    });
    expect(views.map((v) => v.externalId)).toEqual(['CogniteTimeSeries', 'ActivityLink']);
    const [series, link] = views;
    expect(series?.mappedContainers.map((c) => c.externalId)).toEqual(['CogniteDescribable', 'CogniteSourceable', 'CogniteTimeSeries']);
    expect(series?.properties.type).toMatchObject({
      container: { type: 'container', space: 'cdf_cdm', externalId: 'CogniteTimeSeries' },
      containerPropertyIdentifier: 'type',
      nullable: false,
      type: { type: 'enum', values: { numeric: expect.any(Object), string: expect.any(Object) } },
    });
    expect(link).toMatchObject({ usedFor: 'edge', isGlobal: false });
  });

  it('gives every property type the view maps, with list, direct relation source and the renamed container property', async () => {
    const [asset, activity, series, link] = await byIds({
      items: ['CogniteAsset', 'CogniteActivity', 'CogniteTimeSeries'].map((externalId) => ({ space: 'cdf_cdm', externalId, version: 'v1' }))
        .concat([{ space: 'sim_model', externalId: 'ActivityLink', version: 'v1' }]),
    });
    const typeOf = (view: View | undefined, name: string) => view?.properties[name]?.type;
    expect(typeOf(asset, 'name')).toEqual({ type: 'text', list: false, collation: 'ucs_basic' });
    expect(typeOf(asset, 'tags')).toEqual({ type: 'text', list: true, maxListSize: 1000, collation: 'ucs_basic' });
    expect(typeOf(asset, 'criticality')).toEqual({ type: 'int32', list: false });
    expect(typeOf(activity, 'workOrderNumber')).toEqual({ type: 'int64', list: false });
    expect(typeOf(activity, 'laborHours')).toEqual({ type: 'float32', list: false });
    expect(typeOf(series, 'sampleRateHz')).toEqual({ type: 'float64', list: false });
    expect(typeOf(series, 'thresholds')).toEqual({ type: 'float64', list: true, maxListSize: 1000 });
    expect(typeOf(asset, 'operational')).toEqual({ type: 'boolean', list: false });
    expect(typeOf(asset, 'pathLastUpdatedTime')).toEqual({ type: 'timestamp', list: false });
    expect(typeOf(asset, 'installationDate')).toEqual({ type: 'date', list: false });
    expect(typeOf(asset, 'extendedAttributes')).toEqual({ type: 'json', list: false });
    const sourceAsset = { type: 'view', space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };
    expect(typeOf(asset, 'parent')).toEqual({ type: 'direct', list: false, source: sourceAsset });
    expect(typeOf(activity, 'assets')).toEqual({ type: 'direct', list: true, maxListSize: 1000, source: sourceAsset });
    expect(asset?.properties.parent?.containerPropertyIdentifier).toBe('assetHierarchy_parent');
    expect(asset?.properties.children).toMatchObject({ connectionType: 'multi_reverse_direct_relation', targetsList: false });
    expect(typeOf(link, 'weight')).toEqual({ type: 'float64', list: false });
  });

  it('takes includeInheritedProperties in the body (as the SDK sends it) or in the query', async () => {
    const item = { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };
    const [inBody] = await byIds({ items: [item], includeInheritedProperties: false });
    const [inQuery] = await byIds({ items: [item] }, '?includeInheritedProperties=false');
    expect(Object.keys(inBody?.properties ?? {})).not.toContain('name');
    expect(inQuery?.properties).toEqual(inBody?.properties);
  });

  it('refuses an empty or malformed items list with 400 naming the property', async () => {
    for (const [body, fragment] of [
      [{ items: [] }, "'items'"],
      [{ items: [{ space: 'cdf_cdm' }] }, "'items[0].externalId'"],
      [{ items: [{ space: 'cdf_cdm', externalId: 'CogniteAsset', color: 'red' }] }, "'items[0].color'"],
      [{ items: [], extra: 1 }, "'extra'"],
    ] as const) {
      const reply = await post(sim, '/models/views/byids', body, AUTH);
      expect(reply.status).toBe(400);
      expect(reply.json<{ error: { message: string } }>().error.message).toContain(fragment);
    }
  });
});
