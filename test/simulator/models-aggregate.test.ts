import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { liveKeys, post, viewRef } from '../support/instances.js';

/**
 * `POST /models/instances/aggregate` with count aggregates, in the platform's shape: the exporter
 * counts an instances stream with it (its progress total and the base of its read limit).
 */
const AUTH = { 'api-key': 'aggregate-api-key-1' };
const COUNTS = { assets: 240, activities: 300, timeseries: 120, edges: 260 };
const COUNT = [{ count: { property: 'externalId' } }];
/** A key that may read the views, not the instances. */
const LIMITED = 'views-only-key-0001';

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({
    seed: 17,
    apiKeys: [AUTH['api-key'], LIMITED],
    instances: COUNTS,
    capabilities: { [LIMITED]: ['dataModelsAcl:READ'] },
  });
});

afterAll(() => sim.close());

async function count(body: Record<string, unknown>): Promise<unknown> {
  const reply = await post(sim, '/models/instances/aggregate', body, AUTH);
  expect(reply.status, reply.text).toBe(200);
  return reply.json();
}

const answer = (value: number, instanceType = 'node') => ({
  items: [{ instanceType, aggregates: [{ aggregate: 'count', property: 'externalId', value }] }],
});

describe('POST /models/instances/aggregate', () => {
  it('counts the live instances of the type with data in the view, that match the filter', async () => {
    expect(await count({ view: viewRef('CogniteAsset'), aggregates: COUNT })).toEqual(answer(240));
    expect(await count({ view: viewRef('CogniteDescribable'), instanceType: 'node', aggregates: COUNT })).toEqual(answer(660));
    const edges = await count({ view: viewRef('ActivityLink', 'sim_model'), instanceType: 'edge', aggregates: COUNT });
    expect(edges).toEqual(answer(260, 'edge'));
    const filter = { in: { property: ['node', 'space'], values: ['sim_site_a', 'sim_site_c'] } };
    const inSpaces = liveKeys(sim, 'asset', (instance) => instance.space !== 'sim_site_b').length;
    expect(inSpaces).toBeGreaterThan(0);
    expect(inSpaces).toBeLessThan(240);
    expect(await count({ view: viewRef('CogniteAsset'), filter, aggregates: COUNT })).toEqual(answer(inSpaces));
  });

  it('leaves deleted instances out, counts inserted ones; one entry per count asked for', async () => {
    const [first, second] = [sim.instances.instance('timeseries', 0), sim.instances.instance('timeseries', 1)];
    sim.deleteInstances([{ instanceType: 'node', space: first.space, externalId: first.externalId }]);
    sim.insertInstances('timeseries', 3);
    sim.updateInstances([{ instanceType: 'node', space: second.space, externalId: second.externalId }]);
    const counted = await count({ view: viewRef('CogniteTimeSeries'), aggregates: [...COUNT, ...COUNT] });
    const value = liveKeys(sim, 'timeseries').length;
    expect(value).toBe(122);
    const one = { aggregate: 'count', property: 'externalId', value };
    expect(counted).toEqual({ items: [{ instanceType: 'node', aggregates: [one, one] }] });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['no view', { aggregates: COUNT }, "Invalid property 'view': required."],
    ['a view it does not have', { view: viewRef('Nope'), aggregates: COUNT }, 'view cdf_cdm:Nope/v1 does not exist.'],
    ['no aggregates', { view: viewRef('CogniteAsset') }, "Invalid property 'aggregates': expected an array of 1 to 5 aggregates"],
    ['another aggregate', { view: viewRef('CogniteAsset'), aggregates: [{ avg: { property: 'criticality' } }] }, 'the platform takes it; the simulator does not serve it.'],
    [
      'a count of another property',
      { view: viewRef('CogniteAsset'), aggregates: [{ count: { property: 'name' } }] },
      "Invalid property 'aggregates[0].count.property': the simulator counts by externalId only",
    ],
    ['groupBy', { view: viewRef('CogniteAsset'), aggregates: COUNT, groupBy: ['space'] }, "Invalid property 'groupBy': the platform takes it"],
    ['a bad filter', { view: viewRef('CogniteAsset'), aggregates: COUNT, filter: { range: { property: ['node', 'space'] } } }, "Invalid property 'filter.range'"],
  ])('refuses %s with a 400 naming it', async (_, body, message) => {
    const reply = await post(sim, '/models/instances/aggregate', body, AUTH);
    expect(reply.status).toBe(400);
    expect(reply.json<{ error: { code: number; message: string } }>().error.message).toContain(message);
  });

  it('is a POST route of its own in the stats, and needs dataModelInstancesAcl:READ', async () => {
    expect(sim.stats().byRoute['POST /models/instances/aggregate']).toBeGreaterThan(0);
    const body = { view: viewRef('CogniteAsset'), aggregates: COUNT };
    const reply = await post(sim, '/models/instances/aggregate', body, { 'api-key': LIMITED });
    expect(reply.status).toBe(403);
    expect(reply.text).toContain('Missing capability dataModelInstancesAcl:READ');
  });
});
