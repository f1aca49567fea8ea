import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Instance, type InstanceKind, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { matches } from '../../src/simulator/models/filter-match.js';
import { filterAt, parseFilter } from '../../src/simulator/models/filter-parse.js';
import { keyOf, listAll, liveKeys, post, valueIn } from '../support/instances.js';

const AUTH = { 'api-key': 'filters-api-key-1' };
const NODES: InstanceKind[] = ['asset', 'activity', 'timeseries'];

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ seed: 3, apiKeys: [AUTH['api-key']], instances: { assets: 400, activities: 400, timeseries: 300, edges: 300 } });
});

afterAll(() => sim.close());

async function listed(filter: unknown, instanceType: 'node' | 'edge' = 'node'): Promise<string[]> {
  const pages = await listAll(sim, { filter, instanceType, limit: 1000 }, AUTH);
  return pages.flatMap((page) => page.items.map(keyOf));
}

function expected(kinds: InstanceKind[], keep: (instance: Instance) => boolean): string[] {
  return kinds.flatMap((kind) => liveKeys(sim, kind, keep));
}

const ms = (text: unknown) => (typeof text === 'string' ? Date.parse(text) : Number.NaN);
const asset = (name: string) => ['cdf_cdm', 'CogniteAsset/v1', name];
const activity = (name: string) => ['cdf_cdm', 'CogniteActivity/v1', name];
const series = (name: string) => ['cdf_cdm', 'CogniteTimeSeries/v1', name];
/** The root asset of tree `n` (trees of 50), as a direct relation's value. */
function rootOfTree(n: number): { space: string; externalId: string } {
  const { space, externalId } = sim.instances.instance('asset', 50 * n);
  return { space, externalId };
}

describe('instances/list filters, each against the generated instances', () => {
  const cases: [string, unknown, InstanceKind[], (instance: Instance) => boolean][] = [
    ['equals on the node space', { equals: { property: ['node', 'space'], value: 'sim_site_a' } }, NODES, (i) => i.space === 'sim_site_a'],
    ['equals on an enum', { equals: { property: series('type'), value: 'string' } }, ['timeseries'], (i) => valueIn(i, 'cdf_cdm:CogniteTimeSeries', 'type') === 'string'],
    ['equals on a boolean', { equals: { property: asset('operational'), value: false } }, ['asset'], (i) => valueIn(i, 'cdf_cdm:CogniteAsset', 'operational') === false],
    ['equals on a direct relation', () => ({ equals: { property: asset('root'), value: rootOfTree(2) } }), ['asset'], (i) =>
      (valueIn(i, 'cdf_cdm:CogniteAsset', 'assetHierarchy_root') as { externalId: string }).externalId === 'AST-00002S'],
    ['equals on the node type', { equals: { property: ['node', 'type'], value: { space: 'sim_model', externalId: 'inspection' } } }, NODES, (i) => i.type?.externalId === 'inspection'],
    ['in on the externalId', { in: { property: ['node', 'externalId'], values: ['AST-000003', 'CTS-000007', 'NOPE'] } }, NODES, (i) => ['AST-000003', 'CTS-000007'].includes(i.externalId)],
    ['range on an int32', { range: { property: asset('criticality'), gte: 2, lt: 4 } }, ['asset'], (i) => {
      const c = valueIn(i, 'cdf_cdm:CogniteAsset', 'criticality') as number | null;
      return c !== null && c >= 2 && c < 4;
    }],
    ['range on a float32', { range: { property: activity('laborHours'), lte: 10.5 } }, ['activity'], (i) => {
      const h = valueIn(i, 'cdf_cdm:CogniteActivity', 'laborHours') as number | null;
      return h !== null && h <= 10.5;
    }],
    ['range on a timestamp, through its container', { range: { property: ['cdf_cdm', 'CogniteSchedulable', 'startTime'], gte: '2021-01-01T00:00:00.000+00:00', lt: '2022-01-01T00:00:00Z' } }, ['activity'], (i) => {
      const t = ms(valueIn(i, 'cdf_cdm:CogniteSchedulable', 'startTime'));
      return t >= Date.UTC(2021, 0, 1) && t < Date.UTC(2022, 0, 1);
    }],
    ['range on a date', { range: { property: asset('installationDate'), gt: '2016-06-30' } }, ['asset'], (i) => {
      const d = valueIn(i, 'cdf_cdm:CogniteAsset', 'installationDate') as string | null;
      return d !== null && d > '2016-06-30';
    }],
    ['range on lastUpdatedTime', { range: { property: ['node', 'lastUpdatedTime'], gt: Date.UTC(2023, 0, 1) } }, NODES, (i) => i.lastUpdatedTime > Date.UTC(2023, 0, 1)],
    ['prefix on the externalId', { prefix: { property: ['node', 'externalId'], value: 'ACT-00000' } }, NODES, (i) => i.externalId.startsWith('ACT-00000')],
    ['prefix on a text property', { prefix: { property: ['cdf_cdm', 'CogniteDescribable/v1', 'name'], value: 'Pump' } }, NODES, (i) => String(valueIn(i, 'cdf_cdm:CogniteDescribable', 'name')).startsWith('Pump')],
    ['exists', { exists: { property: activity('workOrderNumber') } }, ['activity'], (i) => valueIn(i, 'cdf_cdm:CogniteActivity', 'workOrderNumber') !== null],
    ['not exists (plain negation: every other node too)', { not: { exists: { property: ['cdf_cdm', 'CogniteSchedulable/v1', 'endTime'] } } }, NODES, (i) => valueIn(i, 'cdf_cdm:CogniteSchedulable', 'endTime') === null],
    ['hasData on a view', { hasData: [{ type: 'view', space: 'cdf_cdm', externalId: 'CogniteActivity', version: 'v1' }] }, ['activity'], () => true],
    ['hasData on a container every node has', { hasData: [{ type: 'container', space: 'cdf_cdm', externalId: 'CogniteSourceable' }] }, NODES, () => true],
    ['hasData on two views no node has both of', { hasData: [{ type: 'view', space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' }, { type: 'view', space: 'cdf_cdm', externalId: 'CogniteTimeSeries', version: 'v1' }] }, NODES, () => false],
    ['matchAll', { matchAll: {} }, NODES, () => true],
    ['or of two', { or: [{ equals: { property: ['node', 'space'], value: 'sim_site_c' } }, { prefix: { property: ['node', 'externalId'], value: 'CTS-' } }] }, NODES, (i) => i.space === 'sim_site_c' || i.kind === 'timeseries'],
    ['and with a not inside', {
      and: [
        { hasData: [{ type: 'view', space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' }] },
        { not: { equals: { property: asset('operational'), value: true } } },
        { or: [{ range: { property: ['node', 'version'], gte: 3 } }, { equals: { property: ['node', 'space'], value: 'sim_site_a' } }] },
      ],
    }, NODES, (i) => i.kind === 'asset' && valueIn(i, 'cdf_cdm:CogniteAsset', 'operational') !== true && (i.version >= 3 || i.space === 'sim_site_a')],
  ];

  it.each(cases)('%s', async (_, filter, kinds, keep) => {
    const want = expected(kinds, keep);
    const got = await listed(typeof filter === 'function' ? (filter as () => unknown)() : filter);
    expect(got).toEqual(want);
  });

  it('matches some and misses some in every case (the cases test something)', () => {
    for (const [name, , kinds, keep] of cases.filter(([name]) => !name.startsWith('hasData') && name !== 'matchAll')) {
      const want = expected(kinds, keep).length;
      expect(want, name).toBeGreaterThan(0);
      expect(want, name).toBeLessThan(1100);
    }
  });

  it('ranges over texts in code-point order, as the platform (collation ucs_basic): U+FFFF before U+1F600', () => {
    const named = (externalId: string): Instance => ({ ...sim.instances.instance('asset', 0), externalId });
    const below = filterAt({ range: { property: ['node', 'externalId'], lt: '😀' } }, 'node');
    const from = filterAt({ range: { property: ['node', 'externalId'], gte: '😀' } }, 'node');
    // By UTF-16 code unit (JavaScript's <) '\uffffz' would come after '😀'.
    expect('\uffffz' < '😀').toBe(false);
    expect([matches(named('\uffffz'), below), matches(named('\uffffz'), from)]).toEqual([true, false]);
    expect([matches(named('😀'), below), matches(named('😀'), from)]).toEqual([false, true]);
    expect([matches(named('zz'), below), matches(named('zz'), from)]).toEqual([true, false]);
  });

  it('filters edges on their own fields and their view\'s properties', async () => {
    const firstEdge = sim.instances.instance('edge', 0);
    const start = firstEdge.startNode ?? { space: '', externalId: '' };
    expect(await listed({ equals: { property: ['edge', 'startNode'], value: start } }, 'edge')).toEqual(
      expected(['edge'], (i) => i.startNode !== undefined && keyOf(i.startNode) === keyOf(start)),
    );
    expect(await listed({ equals: { property: ['edge', 'type'], value: { space: 'sim_model', externalId: 'assetActivity' } } }, 'edge')).toHaveLength(300);
    const heavy = { range: { property: ['sim_model', 'ActivityLink/v1', 'weight'], gt: 0.5 } };
    expect(await listed(heavy, 'edge')).toEqual(expected(['edge'], (i) => (valueIn(i, 'sim_model:ActivityLink', 'weight') as number) > 0.5));
    expect(await listed({ hasData: [{ type: 'view', space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' }] }, 'edge')).toEqual([]);
  });
});

describe('a malformed filter', () => {
  const refusals: [unknown, string][] = [
    [{}, "Invalid property 'filter': expected exactly one operator, got none."],
    ['equals', "Invalid property 'filter': expected an object with one operator"],
    [{ and: [] }, "Invalid property 'filter.and': expected a non-empty array of filters"],
    [{ and: [{ matchAll: {} }, { range: { property: ['node', 'createdTime'], gt: 'x' } }] }, "Invalid property 'filter.and[1].range.gt': expected an integer, got \"x\"."],
    [{ or: [{ foo: {} }] }, "Invalid property 'filter.or[0].foo': unknown operator."],
    [{ not: { nested: { scope: ['cdf_cdm', 'CogniteAsset/v1', 'parent'], filter: { matchAll: {} } } } }, "Invalid property 'filter.not.nested': the platform has this operator; the simulator does not serve it."],
    [{ equals: { property: ['node', 'externalId'] } }, "Invalid property 'filter.equals.value': expected a string, got nothing."],
    [{ equals: { property: ['node', 'externalId'], value: 'x', extra: 1 } }, "Invalid property 'filter.equals.extra': unrecognized"],
    [{ equals: { property: 'node.externalId', value: 'x' } }, "Invalid property 'filter.equals.property': expected [\"node\", field]"],
    [{ equals: { property: ['edge', 'externalId'], value: 'x' } }, "Invalid property 'filter.equals.property': refers to edges; this query reads nodes"],
    [{ equals: { property: ['node', 'startNode'], value: { space: 'a', externalId: 'b' } } }, 'nodes have no field "startNode"'],
    [{ equals: { property: asset('nope'), value: 1 } }, "view cdf_cdm:CogniteAsset/v1 has no property 'nope'."],
    [{ equals: { property: ['cdf_cdm', 'CogniteAsset/v2', 'name'], value: 'x' } }, 'no view cdf_cdm:CogniteAsset/v2.'],
    [{ equals: { property: asset('children'), value: 'x' } }, 'children is a connection of CogniteAsset/v1'],
    [{ equals: { property: ['cdf_cdm', 'CogniteNothing', 'name'], value: 'x' } }, 'no container cdf_cdm:CogniteNothing'],
    [{ equals: { property: asset('tags'), value: 'x' } }, 'equals takes a single-value property; this one is a list (containsAny and containsAll take lists).'],
    [{ equals: { property: asset('extendedAttributes'), value: {} } }, 'equals cannot compare json properties.'],
    [{ equals: { property: series('type'), value: 'other' } }, "Invalid property 'filter.equals.value': expected one of numeric, string"],
    [{ equals: { property: ['node', 'externalId'], value: { parameter: 'p' } } }, 'parameters and property references are not served'],
    [{ in: { property: ['node', 'space'], values: [] } }, "Invalid property 'filter.in.values': expected a non-empty array"],
    [{ in: { property: asset('criticality'), values: [1, 'two'] } }, "Invalid property 'filter.in.values[1]': expected an int32"],
    [{ range: { property: ['node', 'createdTime'] } }, "Invalid property 'filter.range': expected at least one bound"],
    [{ range: { property: ['node', 'createdTime'], gt: 1, gte: 2 } }, 'give gt or gte, not both.'],
    [{ range: { property: ['cdf_cdm', 'CogniteSchedulable', 'startTime'], gte: 1_700_000_000_000 } }, "Invalid property 'filter.range.gte': expected an ISO 8601 timestamp"],
    [{ range: { property: asset('operational'), gt: false } }, 'range cannot order boolean values.'],
    [{ prefix: { property: asset('criticality'), value: '1' } }, 'prefix takes a text property.'],
    [{ hasData: [{ type: 'view', space: 'cdf_cdm', externalId: 'X', version: 'v1' }] }, "Invalid property 'filter.hasData[0]': no view cdf_cdm:X/v1."],
    [{ hasData: [{ space: 'cdf_cdm', externalId: 'CogniteAsset' }] }, "Invalid property 'filter.hasData[0]': expected type \"view\""],
  ];

  it.each(refusals)('%j is refused: %s', (filter, message) => {
    const parsed = parseFilter(filter, 'node');
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.message).toContain(message);
  });

  it('is a 400 in the platform\'s error body naming the path, on the list and in a sync', async () => {
    const reply = await post(sim, '/models/instances/list', { filter: { and: [{ matchAll: {} }, { range: { property: asset('criticality'), gte: 'high' } }] } }, AUTH);
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({ error: { code: 400, message: "Invalid property 'filter.and[1].range.gte': expected an int32, got \"high\"." } });
    const sync = await post(sim, '/models/instances/sync', {
      with: { assets: { nodes: { filter: { not: { prefix: { property: ['node', 'version'], value: '1' } } } } } },
      select: { assets: {} },
    }, AUTH);
    expect(sync.status).toBe(400);
    expect(sync.json<{ error: { message: string } }>().error.message).toBe("Invalid property 'with.assets.nodes.filter.not.prefix.property': prefix takes a text property.");
  });
});
