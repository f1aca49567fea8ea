import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/simulator/dataset/vocabulary.js';
import { parseListBody } from '../../src/simulator/list-body.js';
import { parseListQuery } from '../../src/simulator/query.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { drainPost, send } from '../support/http.js';

/**
 * The simulator serves events' `endTime: {isNull}`, `labels` (assets, files, relationships) and
 * events' asset lists of up to 5000 in the body, with the platform's meaning: checked against the
 * generated items directly, by list and by count, over real HTTP.
 */
const KEY = 'platform-filters-key-1';
const HEADERS = { 'api-key': KEY, 'content-type': 'application/json' };
let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ assets: 600, events: 3000, files: 800, relationships: 800, seed: 31, apiKeys: [KEY] });
});
afterAll(() => sim.close());

type Labelled = { labels?: { externalId: string }[] };
type Keyed = { id?: number; externalId?: string };

/** Every item of a POST /list with this filter, following cursors. */
async function listAll(resource: string, filter: object): Promise<Keyed[]> {
  const pages = await drainPost<Keyed>(sim.baseUrl, `/${resource}/list`, { limit: 1000, filter }, HEADERS);
  return pages.flatMap((page) => page.items);
}

async function counted(resource: string, filter: object): Promise<number> {
  const reply = await send(`${sim.baseUrl}/${resource}/aggregate`, { method: 'POST', headers: HEADERS, body: JSON.stringify({ filter }) });
  expect(reply.status, reply.text).toBe(200);
  return reply.json<{ items: { count: number }[] }>().items[0]?.count ?? -1;
}

/** The keys of the generated items that pass `keep`, judged here rather than by the simulator's filter code. */
function generated<T>(resource: 'assets' | 'events' | 'files' | 'relationships', keep: (item: T) => boolean): string[] {
  const set = sim.dataset[resource] as unknown as { count: number; item(index: number): T & Keyed };
  const keys: string[] = [];
  for (let i = 0; i < set.count; i++) {
    const item = set.item(i);
    if (keep(item)) keys.push(String(item.id ?? item.externalId));
  }
  return keys.sort();
}

const keysOf = (items: readonly Keyed[]) => items.map((item) => String(item.id ?? item.externalId)).sort();

describe('events: endTime {isNull}', () => {
  it.each([true, false])('isNull %s lists and counts exactly the events %s an end', async (isNull) => {
    const expected = generated<{ endTime?: number }>('events', (event) => (event.endTime === undefined) === isNull);
    expect(expected.length).toBeGreaterThan(isNull ? 50 : 2000);
    expect(keysOf(await listAll('events', { endTime: { isNull } }))).toEqual(expected);
    expect(await counted('events', { endTime: { isNull } })).toBe(expected.length);
  });

  it('a range and isNull together, or isNull with another value, are refused naming the property', () => {
    const both = parseListBody('events', { filter: { endTime: { isNull: true, min: 1 } } });
    const refused = (pattern: RegExp) => ({ ok: false, message: expect.stringMatching(pattern) as unknown });
    expect(both).toMatchObject(refused(/'filter\.endTime'.*\{isNull: boolean\} alone/));
    const text = parseListBody('events', { filter: { endTime: { isNull: 'yes' } } });
    expect(text).toMatchObject({ ok: false, message: expect.stringMatching(/'filter\.endTime'/) });
    const other = parseListBody('events', { filter: { endTime: { max: 1, at: 2 } } });
    expect(other).toMatchObject(refused(/filter\.endTime\.at'\. Allowed: min, max; or isNull alone/));
    expect(parseListBody('relationships', { filter: { endTime: { isNull: true } } })).toMatchObject({ ok: false });
    expect(parseListQuery('events', new URLSearchParams({ endTime: 'true' }))).toMatchObject({ ok: false });
  });
});

describe('labels', () => {
  it('some generated items carry two labels, so that containsAll differs from containsAny', () => {
    for (const resource of ['assets', 'files', 'relationships'] as const) {
      const twice = generated<Labelled>(resource, (item) => (item.labels?.length ?? 0) === 2);
      expect(twice.length, resource).toBeGreaterThan(0);
    }
  });

  it('docs/simulator.md names the labels it serves, to write a rehearsal\'s filter with', () => {
    const page = readFileSync(new URL('../../docs/simulator.md', import.meta.url), 'utf8');
    const served = new Set<string>();
    for (const resource of ['assets', 'files', 'relationships'] as const) {
      generated<Labelled>(resource, (item) => (item.labels ?? []).every((label) => served.add(label.externalId)));
    }
    expect([...served].sort()).toEqual([...LABELS].sort());
    for (const label of LABELS) expect(page).toContain(`\`${label}\``);
  });

  it.each(['assets', 'files', 'relationships'] as const)('%s: containsAny and containsAll list and count what they mean', async (resource) => {
    const held = (item: Labelled) => new Set((item.labels ?? []).map((label) => label.externalId));
    const wanted = ['pump', 'critical'];
    const any = generated<Labelled>(resource, (item) => wanted.some((label) => held(item).has(label)));
    const all = generated<Labelled>(resource, (item) => wanted.every((label) => held(item).has(label)));
    const refs = wanted.map((externalId) => ({ externalId }));
    expect(any.length).toBeGreaterThan(all.length);
    expect(keysOf(await listAll(resource, { labels: { containsAny: refs } }))).toEqual(any);
    expect(keysOf(await listAll(resource, { labels: { containsAll: refs } }))).toEqual(all);
    if (resource !== 'relationships') expect(await counted(resource, { labels: { containsAll: refs } })).toBe(all.length);
  });

  it.each([
    ['both forms', { containsAny: [{ externalId: 'a' }], containsAll: [{ externalId: 'b' }] }],
    ['an empty list', { containsAny: [] }],
    ['a bare string', { containsAny: ['pump'] }],
    ['101 labels', { containsAny: Array.from({ length: 101 }, (_, i) => ({ externalId: `l${i}` })) }],
    ['another key', { containsNone: [{ externalId: 'a' }] }],
  ])('refuses %s, naming filter.labels', (_, labels) => {
    expect(parseListBody('assets', { filter: { labels } })).toMatchObject({ ok: false, message: expect.stringContaining("'filter.labels'") });
  });
});

describe('events: assetIds and assetExternalIds', () => {
  const ids = (n: number, from = 1) => Array.from({ length: n }, (_, i) => from + i);

  it('GET takes 100, refusing 101; the body takes 5000, refusing 5001', () => {
    const query = (n: number) => parseListQuery('events', new URLSearchParams({ assetIds: JSON.stringify(ids(n)) }));
    expect(query(100)).toMatchObject({ ok: true });
    const refusal = query(101);
    expect(refusal).toMatchObject({
      ok: false,
      message: expect.stringMatching(/'assetIds': expected a list of 1 to 100 ids/),
    });
    expect(parseListBody('events', { filter: { assetIds: ids(5000) } })).toMatchObject({ ok: true });
    expect(parseListBody('events', { filter: { assetIds: ids(5001) } })).toMatchObject({
      ok: false,
      message: expect.stringMatching(/'filter\.assetIds': expected a list of 1 to 5000 ids/),
    });
    const names = ids(5000).map((i) => `AS-${i}`);
    expect(parseListBody('events', { filter: { assetExternalIds: names } })).toMatchObject({ ok: true });
  });

  it('5000 asset ids of 16 digits (a body over 64 KiB) list exactly the events linked to any of them', async () => {
    const assets = sim.dataset.assets;
    const linked = new Set<number>();
    for (let i = 0; i < assets.count; i += 2) linked.add(assets.idOf(i));
    const large = ids(5000 - linked.size, 8_000_000_000_000_000);
    const filter = { assetIds: [...linked, ...large] };
    expect(JSON.stringify({ filter }).length).toBeGreaterThan(64 * 1024);
    const expected = generated<{ assetIds?: number[] }>('events', (event) => (event.assetIds ?? []).some((id) => linked.has(id)));
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(3000);
    expect(keysOf(await listAll('events', filter))).toEqual(expected);
    expect(await counted('events', filter)).toBe(expected.length);
  });
});
