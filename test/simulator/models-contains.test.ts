import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Instance, type InstanceKind, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { parseFilter } from '../../src/simulator/models/filter-parse.js';
import { keyOf, listAll, liveKeys, post, valueIn } from '../support/instances.js';

/**
 * `containsAny` and `containsAll` on the list properties of the simulated views (text lists,
 * lists of direct relations, a list of floats), on single values (a list of one), under `not`,
 * and their malformed bodies. Expected results are computed here from `sim.instances`.
 */
const AUTH = { 'api-key': 'contains-api-key-1' };
const NODES: InstanceKind[] = ['asset', 'activity', 'timeseries'];
const DESCRIBABLE = 'cdf_cdm:CogniteDescribable';

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ seed: 11, apiKeys: [AUTH['api-key']], instances: { assets: 400, activities: 400, timeseries: 300, edges: 200 } });
});

afterAll(() => sim.close());

async function listed(filter: unknown, instanceType: 'node' | 'edge' = 'node'): Promise<string[]> {
  const pages = await listAll(sim, { filter, instanceType, limit: 1000 }, AUTH);
  return pages.flatMap((page) => page.items.map(keyOf));
}

function expected(kinds: InstanceKind[], keep: (instance: Instance) => boolean): string[] {
  return kinds.flatMap((kind) => liveKeys(sim, kind, keep));
}

type Ref = { space: string; externalId: string };
const asset = (name: string) => ['cdf_cdm', 'CogniteAsset/v1', name];
const activity = (name: string) => ['cdf_cdm', 'CogniteActivity/v1', name];
const series = (name: string) => ['cdf_cdm', 'CogniteTimeSeries/v1', name];
const refOf = (kind: InstanceKind, index: number): Ref => {
  const { space, externalId } = sim.instances.instance(kind, index);
  return { space, externalId };
};
/** A list property of an instance as generated: [] when null. */
function listIn(i: Instance, container: string, property: string): unknown[] {
  return (valueIn(i, container, property) as unknown[] | null) ?? [];
}
const texts = (i: Instance, property: 'tags' | 'aliases') => listIn(i, DESCRIBABLE, property) as string[];
/** A list of direct relations as `space:externalId` keys. */
const refKeys = (i: Instance, container: string, property: string) =>
  (listIn(i, container, property) as Ref[]).map(keyOf);
/** The first timeseries whose thresholds hold a value, and that value. */
function someThreshold(from: number): number {
  for (let index = from; index < sim.instances.count('timeseries'); index++) {
    const [first] = listIn(sim.instances.instance('timeseries', index), 'cdf_cdm:CogniteTimeSeries', 'thresholds') as number[];
    if (first !== undefined) return first;
  }
  throw new Error('no series with thresholds');
}

type Case = [string, () => unknown, InstanceKind[], (instance: Instance) => boolean];

describe('containsAny and containsAll, each against the generated instances', () => {
  const cases: Case[] = [
    ['containsAny on a text list (tags, every node kind)', () => ({ containsAny: { property: asset('tags'), values: ['pump', 'ex-zone'] } }), NODES, (i) =>
      texts(i, 'tags').includes('pump') || texts(i, 'tags').includes('ex-zone')],
    ['containsAll on a text list', () => ({ containsAll: { property: asset('tags'), values: ['pump', 'critical'] } }), NODES, (i) =>
      texts(i, 'tags').includes('pump') && texts(i, 'tags').includes('critical')],
    ['containsAll of one value', () => ({ containsAll: { property: ['cdf_cdm', 'CogniteDescribable', 'aliases'], values: ['offshore'] } }), NODES, (i) =>
      texts(i, 'aliases').includes('offshore')],
    ['containsAny on a list of direct relations (path: the tree of a root)', () => ({ containsAny: { property: asset('path'), values: [refOf('asset', 100)] } }), ['asset'], (i) =>
      refKeys(i, 'cdf_cdm:CogniteAsset', 'assetHierarchy_path').includes(keyOf(refOf('asset', 100)))],
    ['containsAll on path (a subtree under its root)', () => ({ containsAll: { property: asset('path'), values: [refOf('asset', 100), refOf('asset', 101)] } }), ['asset'], (i) => {
      const path = refKeys(i, 'cdf_cdm:CogniteAsset', 'assetHierarchy_path');
      return path.includes(keyOf(refOf('asset', 100))) && path.includes(keyOf(refOf('asset', 101)));
    }],
    ['containsAny on an activity\'s assets', () => ({ containsAny: { property: activity('assets'), values: [3, 7, 8, 250].map((n) => refOf('asset', n)) } }), ['activity'], (i) =>
      refKeys(i, 'cdf_cdm:CogniteActivity', 'assets').some((key) => [3, 7, 8, 250].some((n) => keyOf(refOf('asset', n)) === key))],
    ['containsAny on a list of floats', () => ({ containsAny: { property: series('thresholds'), values: [someThreshold(0), someThreshold(150)] } }), ['timeseries'], (i) =>
      (listIn(i, 'cdf_cdm:CogniteTimeSeries', 'thresholds') as number[]).some((t) => t === someThreshold(0) || t === someThreshold(150))],
    ['containsAny on a single-value int32 (a list of one)', () => ({ containsAny: { property: asset('criticality'), values: [1, 2] } }), ['asset'], (i) => {
      const c = valueIn(i, 'cdf_cdm:CogniteAsset', 'criticality');
      return c === 1 || c === 2;
    }],
    ['containsAll on a single value', () => ({ containsAll: { property: asset('criticality'), values: [3, 3] } }), ['asset'], (i) =>
      valueIn(i, 'cdf_cdm:CogniteAsset', 'criticality') === 3],
    ['containsAny on a single timestamp, given in another ISO form', () => {
      const start = valueIn(sim.instances.instance('activity', 5), 'cdf_cdm:CogniteSchedulable', 'startTime') as string;
      return { containsAny: { property: ['cdf_cdm', 'CogniteSchedulable/v1', 'startTime'], values: [new Date(Date.parse(start)).toISOString(), '2001-01-01T00:00:00Z'] } };
    }, ['activity'], (i) => valueIn(i, 'cdf_cdm:CogniteSchedulable', 'startTime') === valueIn(sim.instances.instance('activity', 5), 'cdf_cdm:CogniteSchedulable', 'startTime')],
    ['containsAny on an instance field', () => ({ containsAny: { property: ['node', 'type'], values: [{ space: 'sim_model', externalId: 'inspection' }] } }), NODES, (i) =>
      i.type?.externalId === 'inspection'],
    ['not containsAny (also every node with no tags or an empty list)', () => ({ not: { containsAny: { property: asset('tags'), values: ['pump', 'critical'] } } }), NODES, (i) =>
      !texts(i, 'tags').some((tag) => tag === 'pump' || tag === 'critical')],
    ['and of containsAll and containsAny', () => ({
      and: [
        { containsAll: { property: asset('tags'), values: ['offshore'] } },
        { containsAny: { property: asset('path'), values: [refOf('asset', 0), refOf('asset', 50), refOf('asset', 200)] } },
      ],
    }), ['asset'], (i) => texts(i, 'tags').includes('offshore') &&
      refKeys(i, 'cdf_cdm:CogniteAsset', 'assetHierarchy_path').some((key) => [0, 50, 200].some((n) => keyOf(refOf('asset', n)) === key))],
  ];

  it.each(cases)('%s', async (_, filter, kinds, keep) => {
    expect(await listed(filter())).toEqual(expected(kinds, keep));
  });

  it('matches some and misses some in every case (the cases test something)', () => {
    for (const [name, , kinds, keep] of cases) {
      const want = expected(kinds, keep).length;
      expect(want, name).toBeGreaterThan(0);
      expect(want, name).toBeLessThan(kinds.reduce((sum, kind) => sum + sim.instances.count(kind), 0));
    }
  });

  it('the generated lists include empty ones and absent ones, which match neither operator', async () => {
    const empty = expected(NODES, (i) => valueIn(i, DESCRIBABLE, 'tags') !== null && texts(i, 'tags').length === 0);
    const absent = expected(NODES, (i) => valueIn(i, DESCRIBABLE, 'tags') === null);
    expect(empty.length).toBeGreaterThan(0);
    expect(absent.length).toBeGreaterThan(0);
    const all = ['pump', 'critical', 'rotating-equipment', 'offshore', 'onshore', 'ex-zone'];
    const some = await listed({ containsAny: { property: asset('tags'), values: all } });
    for (const key of [...empty, ...absent]) expect(some).not.toContain(key);
  });

  it('containsAny on the path of a root is its whole tree of 50', async () => {
    const tree = await listed({ containsAny: { property: asset('path'), values: [refOf('asset', 100)] } });
    expect(tree).toEqual(Array.from({ length: 50 }, (_, k) => keyOf(refOf('asset', 100 + k))));
  });

  it('a single-value containsAll of two different values matches nothing', async () => {
    expect(await listed({ containsAll: { property: asset('criticality'), values: [1, 2] } })).toEqual([]);
  });

  it('filters edges on a property of their view', async () => {
    const filter = { containsAny: { property: ['sim_model', 'ActivityLink/v1', 'role'], values: ['performer', 'Überwacher'] } };
    const want = expected(['edge'], (i) => ['performer', 'Überwacher'].includes(valueIn(i, 'sim_model:ActivityLink', 'role') as string));
    expect(want.length).toBeGreaterThan(0);
    expect(await listed(filter, 'edge')).toEqual(want);
  });
});

describe('a malformed containsAny or containsAll', () => {
  const tags = asset('tags');
  const refusals: [unknown, string][] = [
    [{ containsAny: { property: tags } }, "Invalid property 'filter.containsAny.values': expected a non-empty array, got nothing."],
    [{ containsAll: { property: tags, values: [] } }, "Invalid property 'filter.containsAll.values': expected a non-empty array, got []."],
    [{ containsAny: { property: tags, values: 'pump' } }, "Invalid property 'filter.containsAny.values': expected a non-empty array, got \"pump\"."],
    [{ and: [{ matchAll: {} }, { containsAny: { property: tags, values: ['pump', 'critical', 3] } }] }, "Invalid property 'filter.and[1].containsAny.values[2]': expected a string, got 3."],
    [{ not: { containsAll: { property: asset('path'), values: [{ space: 'sim_site_a' }] } } }, "Invalid property 'filter.not.containsAll.values[0]': expected {\"space\": ..., \"externalId\": ...}"],
    [{ containsAny: { property: asset('criticality'), values: [1, 'two'] } }, "Invalid property 'filter.containsAny.values[1]': expected an int32, got \"two\"."],
    [{ containsAny: { property: series('thresholds'), values: [1, null] } }, "Invalid property 'filter.containsAny.values[1]': expected a number, got null."],
    [{ containsAny: { property: ['cdf_cdm', 'CogniteSchedulable', 'startTime'], values: [1_700_000_000_000] } }, "Invalid property 'filter.containsAny.values[0]': expected an ISO 8601 timestamp"],
    [{ containsAny: { property: tags, value: 'pump' } }, "Invalid property 'filter.containsAny.value': unrecognized; containsAny takes property, values."],
    [{ containsAll: ['pump'] }, "Invalid property 'filter.containsAll': expected an object {property, values}"],
    [{ containsAny: { values: ['pump'] } }, "Invalid property 'filter.containsAny.property': expected [\"node\", field]"],
    [{ containsAny: { property: asset('nope'), values: ['pump'] } }, "view cdf_cdm:CogniteAsset/v1 has no property 'nope'."],
    [{ containsAny: { property: asset('extendedAttributes'), values: [{}] } }, "Invalid property 'filter.containsAny.property': containsAny cannot compare json properties."],
    [{ containsAny: { property: tags, values: [{ parameter: 'p' }] } }, "Invalid property 'filter.containsAny.values[0]': parameters and property references are not served"],
    [{ equals: { property: tags, value: 'pump' } }, 'equals takes a single-value property; this one is a list (containsAny and containsAll take lists).'],
  ];

  it.each(refusals)('%j is refused: %s', (filter, message) => {
    const parsed = parseFilter(filter, 'node');
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.message).toContain(message);
  });

  it.each(['nested', 'overlaps', 'instanceReferences'])('%s is still refused as not served, at its path', (op) => {
    const parsed = parseFilter({ and: [{ matchAll: {} }, { not: { [op]: {} } }] }, 'node');
    expect(parsed).toEqual({ ok: false, message: `Invalid property 'filter.and[1].not.${op}': the platform has this operator; the simulator does not serve it.` });
  });

  it('is a 400 in the platform\'s error body naming the path, on the list and in a sync', async () => {
    const reply = await post(sim, '/models/instances/list', { filter: { and: [{ matchAll: {} }, { containsAny: { property: tags, values: ['a', 'b', 7] } }] } }, AUTH);
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error: { code: 400, message: "Invalid property 'filter.and[1].containsAny.values[2]': expected a string, got 7." } });
    const sync = await post(sim, '/models/instances/sync', {
      with: { assets: { nodes: { filter: { containsAll: { property: tags, values: [] } } } } },
      select: { assets: {} },
    }, AUTH);
    expect(sync.status).toBe(400);
    expect(sync.json<{ error: { message: string } }>().error.message).toBe("Invalid property 'with.assets.nodes.filter.containsAll.values': expected a non-empty array, got [].");
  });
});
