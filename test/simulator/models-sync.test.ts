import { afterEach, describe, expect, it } from 'vitest';
import { type InstanceRef, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';
import { type InstanceItem, keyOf, liveKeys, post, type SyncAnswer, viewRef } from '../support/instances.js';

const AUTH = { 'api-key': 'sync-api-key-01' };
const DAY = 86_400_000;
const ASSET_VIEW = viewRef('CogniteAsset');
const HAS_ASSET = { hasData: [ASSET_VIEW] };

const open: Simulator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((sim) => sim.close()));
});

async function simulator(clock: FakeClock, options: { churn?: number; seed?: number } = {}): Promise<Simulator> {
  const sim = await startSimulator({
    apiKeys: [AUTH['api-key']],
    clock,
    instances: { assets: 120, activities: 80, timeseries: 40, edges: 60 },
    ...options,
  });
  open.push(sim);
  return sim;
}

/** A sync of the asset nodes (and, with `edges`, of every edge) with every property of their views. */
function assetsSync(
  cursors?: Record<string, string>,
  extra: Record<string, unknown> = {},
  edges = false,
): Record<string, unknown> {
  return {
    with: {
      assets: { nodes: { filter: HAS_ASSET }, limit: 50 },
      ...(edges ? { links: { edges: {}, limit: 1000 } } : {}),
    },
    select: {
      assets: { sources: [{ source: ASSET_VIEW, properties: ['*'] }] },
      ...(edges ? { links: { sources: [{ source: viewRef('ActivityLink', 'sim_model'), properties: ['*'] }] } } : {}),
    },
    ...(cursors === undefined ? {} : { cursors }),
    ...extra,
  };
}

async function sync(sim: Simulator, body: Record<string, unknown>): Promise<SyncAnswer> {
  const reply = await post(sim, '/models/instances/sync', body, AUTH);
  expect(reply.status, reply.text).toBe(200);
  return reply.json<SyncAnswer>();
}

/** Syncs until the assets come back fewer than their limit; every asset item seen, and the cursors to go on from. */
async function backfill(
  sim: Simulator,
  edges = false,
): Promise<{ items: InstanceItem[]; cursors: Record<string, string>; calls: number }> {
  const items: InstanceItem[] = [];
  let cursors: Record<string, string> | undefined;
  let calls = 0;
  for (;;) {
    const answer = await sync(sim, assetsSync(cursors, {}, edges));
    calls++;
    expect(Object.keys(answer.nextCursor).sort()).toEqual(edges ? ['assets', 'links'] : ['assets']);
    items.push(...(answer.items.assets ?? []));
    cursors = answer.nextCursor;
    if ((answer.items.assets ?? []).length < 50) return { items, cursors, calls };
  }
}

const ref = (item: { instanceType: 'node' | 'edge'; space: string; externalId: string }): InstanceRef =>
  ({ instanceType: item.instanceType, space: item.space, externalId: item.externalId });

describe('POST /models/instances/sync', () => {
  it('backfills every asset once, then answers nothing until something changes', async () => {
    const sim = await simulator(createFakeClock());
    const { items, cursors, calls } = await backfill(sim);
    expect(calls).toBe(3);
    expect(items.map(keyOf)).toEqual(liveKeys(sim, 'asset'));
    expect(items.every((item) => item.deletedTime === undefined && item.properties.cdf_cdm?.['CogniteAsset/v1'] !== undefined)).toBe(true);
    const again = await sync(sim, assetsSync(cursors));
    expect(again.items.assets).toEqual([]);
    expect(again.nextCursor.assets).not.toBe(cursors.assets);
  });

  it('then returns exactly the updates, inserts and deletes since the cursor, in change order, each once', async () => {
    const clock = createFakeClock();
    const sim = await simulator(clock);
    const { items, cursors } = await backfill(sim);
    const [a5, a7, a9] = [items[5], items[7], items[9]].map((item) => ref(item ?? items[0]!));
    clock.advance(1000);
    sim.updateInstances([a5!]);
    clock.advance(1000);
    sim.updateInstances([a7!]);
    const inserted = sim.insertInstances('asset', 2);
    sim.updateInstances([{ instanceType: 'node', ...keyParts(sim.instances.instance('activity', 3)) }]);
    clock.advance(1000);
    sim.deleteInstances([a9!]);
    sim.updateInstances([a5!]);

    const changed = await sync(sim, assetsSync(cursors));
    const got = changed.items.assets ?? [];
    expect(got.map(keyOf)).toEqual([a7, ...inserted, a9, a5].map((one) => keyOf(one!)));
    const now = clock.now();
    expect(got.map((item) => item.lastUpdatedTime)).toEqual([now - 1000, now - 1000, now - 1000, now, now]);
    const versionBefore = (item: InstanceItem) => items.find((old) => keyOf(old) === keyOf(item))?.version ?? 0;
    expect(got.map((item) => item.version - versionBefore(item))).toEqual([1, 1, 1, 1, 2]);
    expect(got.map((item) => item.deletedTime)).toEqual([undefined, undefined, undefined, now, undefined]);
    const updated = got[0]!;
    const before = items[7]!;
    expect(updated.createdTime).toBe(before.createdTime);
    expect(updated.properties.cdf_cdm?.['CogniteAsset/v1']?.name).toBe(before.properties.cdf_cdm?.['CogniteAsset/v1']?.name);
    expect(updated.properties).not.toEqual(before.properties);
    expect((await sync(sim, assetsSync(changed.nextCursor))).items.assets).toEqual([]);

    // Lists leave the deleted asset out; a fresh backfill does too.
    expect((await backfill(sim)).items.map(keyOf)).toEqual(liveKeys(sim, 'asset'));
    expect(liveKeys(sim, 'asset')).not.toContain(keyOf(a9!));
  });

  it('keeps each result set apart: nodes and edges with their own cursors and limits', async () => {
    const clock = createFakeClock();
    const sim = await simulator(clock);
    const { cursors } = await backfill(sim, true);
    clock.advance(10);
    const edge = sim.instances.instance('edge', 4);
    sim.deleteInstances([{ instanceType: 'edge', space: edge.space, externalId: edge.externalId }]);
    const answer = await sync(sim, assetsSync(cursors, {}, true));
    expect(answer.items.assets).toEqual([]);
    expect(answer.items.links?.map(keyOf)).toEqual([keyOf(edge)]);
    expect(answer.items.links?.[0]).toMatchObject({ instanceType: 'edge', deletedTime: clock.now(), startNode: edge.startNode });
  });

  it('starts from now with mode noBackfill, and backfills deleted instances too with skipAlreadyDeleted: false', async () => {
    const clock = createFakeClock();
    const sim = await simulator(clock);
    const gone = sim.instances.instance('asset', 2);
    sim.deleteInstances([{ instanceType: 'node', ...keyParts(gone) }]);
    const fresh = { assets: { nodes: { filter: HAS_ASSET }, limit: 1000, mode: 'noBackfill' } };
    const first = await sync(sim, { ...assetsSync(), with: fresh });
    expect(first.items.assets).toEqual([]);
    clock.advance(5);
    sim.updateInstances([{ instanceType: 'node', ...keyParts(sim.instances.instance('asset', 3)) }]);
    const next = await sync(sim, { ...assetsSync(first.nextCursor), with: fresh });
    expect(next.items.assets?.map(keyOf)).toEqual([keyOf(sim.instances.instance('asset', 3))]);

    const withDeleted = { assets: { nodes: { filter: HAS_ASSET }, limit: 1000, skipAlreadyDeleted: false } };
    const all = await sync(sim, { ...assetsSync(), with: withDeleted });
    expect(all.items.assets).toHaveLength(120);
    expect(all.items.assets?.[2]).toMatchObject({ externalId: gone.externalId, deletedTime: clock.now() - 5 });
  });

  it('refuses a cursor older than 3 days with the platform\'s error, unless allowExpiredCursorsAndAcceptMissedDeletes', async () => {
    const clock = createFakeClock();
    const sim = await simulator(clock);
    const { cursors } = await backfill(sim);
    clock.advance(3 * DAY);
    expect((await post(sim, '/models/instances/sync', assetsSync(cursors), AUTH)).status).toBe(200);
    clock.advance(1);
    const refused = await post(sim, '/models/instances/sync', assetsSync(cursors), AUTH);
    expect(refused.status).toBe(400);
    const { error } = refused.json<{ error: { code: number; message: string } }>();
    expect(error.code).toBe(400);
    expect(error.message).toMatch(/^Cursor has expired: cursors\.assets was issued 3\.0 days ago/);
    expect(error.message).toContain('allowExpiredCursorsAndAcceptMissedDeletes');
    expect(sim.stats().faults['cursor-expired']).toBe(1);
    const allowed = await post(sim, '/models/instances/sync', assetsSync(cursors, { allowExpiredCursorsAndAcceptMissedDeletes: true }), AUTH);
    expect(allowed.status).toBe(200);
  });

  it('purges deletes after 3 days: a reader that waited that long with the allow flag misses them, and sees the rest', async () => {
    const clock = createFakeClock();
    const sim = await simulator(clock);
    const { cursors } = await backfill(sim);
    const [deleted, updated] = [sim.instances.instance('asset', 10), sim.instances.instance('asset', 11)];
    clock.advance(1);
    sim.deleteInstances([{ instanceType: 'node', ...keyParts(deleted) }]);
    sim.updateInstances([{ instanceType: 'node', ...keyParts(updated) }]);
    clock.advance(3 * DAY + 1);
    const answer = await sync(sim, assetsSync(cursors, { allowExpiredCursorsAndAcceptMissedDeletes: true }));
    expect(answer.items.assets?.map(keyOf)).toEqual([keyOf(updated)]);
  });

  it('hands out a fresh cursor on every answer, so a reader that keeps calling never expires', async () => {
    const clock = createFakeClock();
    const sim = await simulator(clock);
    let { cursors } = await backfill(sim);
    for (let day = 0; day < 5; day++) {
      clock.advance(2 * DAY);
      cursors = (await sync(sim, assetsSync(cursors))).nextCursor;
    }
  });

  it('binds a cursor to its result set\'s query, and says which cursor is wrong', async () => {
    const sim = await simulator(createFakeClock());
    const { cursors } = await backfill(sim);
    const changedFilter = assetsSync(cursors);
    (changedFilter.with as Record<string, unknown>).assets = { nodes: {}, limit: 50 };
    const mismatch = await post(sim, '/models/instances/sync', changedFilter, AUTH);
    expect(mismatch.status).toBe(400);
    expect(mismatch.text).toContain("Invalid property 'cursors.assets': Cursor does not match the request parameters");
    const bent = await post(sim, '/models/instances/sync', assetsSync({ assets: `${cursors.assets}x` }), AUTH);
    expect(bent.json<{ error: { message: string } }>().error.message).toContain("'cursors.assets': Invalid cursor");
    // Another limit, or other properties selected, keep the cursor.
    const otherLimit = assetsSync(cursors);
    (otherLimit.with as Record<string, unknown>).assets = { nodes: { filter: HAS_ASSET }, limit: 7 };
    expect((await post(sim, '/models/instances/sync', otherLimit, AUTH)).status).toBe(200);
  });

  it('returns the selected properties only, and typing with includeTyping', async () => {
    const sim = await simulator(createFakeClock());
    const body = assetsSync(undefined, { includeTyping: true });
    (body.select as Record<string, unknown>).assets = { sources: [{ source: ASSET_VIEW, properties: ['name', 'criticality'] }] };
    const answer = await sync(sim, body);
    expect(Object.keys(answer.items.assets?.[0]?.properties.cdf_cdm?.['CogniteAsset/v1'] ?? {})).toEqual(['name', 'criticality']);
    expect(answer.typing).toEqual({
      assets: {
        cdf_cdm: {
          'CogniteAsset/v1': {
            name: expect.objectContaining({ type: { type: 'text', list: false, collation: 'ucs_basic' } }),
            criticality: expect.objectContaining({ type: { type: 'int32', list: false } }),
          },
        },
      },
    });
  });

  it('refuses what it does not serve, naming the property', async () => {
    const sim = await simulator(createFakeClock());
    const base = assetsSync();
    for (const [body, fragment] of [
      [{ ...base, with: { assets: { nodes: { from: 'x' } } } }, "'with.assets.nodes.from': the platform takes it; the simulator does not serve it."],
      [{ ...base, with: { assets: { nodes: {}, limit: 2001 } } }, "'with.assets.limit': expected an integer in 1..2000"],
      [{ ...base, with: { assets: { nodes: {}, edges: {} } } }, "'with.assets': expected exactly one of nodes and edges."],
      [{ ...base, with: { assets: { nodes: {}, mode: 'fast' } } }, "'with.assets.mode': expected one of onePhase, twoPhase, noBackfill"],
      [{ ...base, with: { assets: { nodes: {}, backfillSort: [{ property: ['node', 'externalId'] }] } } }, "'with.assets.backfillSort'"],
      [{ ...base, select: { others: {} } }, "'select.others': no result set 'others' in with."],
      [{ ...base, select: { assets: { sources: [{ source: ASSET_VIEW }] } } }, "'select.assets.sources[0].properties'"],
      [{ ...base, cursors: { others: 'x' } }, "'cursors.others'"],
      [{ ...base, parameters: { p: 1 } }, "'parameters'"],
      [{ select: base.select }, "'with': expected an object of 1 to 50 named result sets"],
    ] as const) {
      const reply = await post(sim, '/models/instances/sync', body, AUTH);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.json<{ error: { message: string } }>().error.message).toContain(fragment);
    }
  });
});

describe('churn', () => {
  it('changes instances as the clock passes, the same changes for the same seed', async () => {
    const feeds: string[][] = [];
    for (const run of [0, 1]) {
      const clock = createFakeClock();
      const sim = await simulator(clock, { churn: 20, seed: 4 });
      const { cursors } = await backfill(sim, true);
      expect((await sync(sim, assetsSync(cursors, {}, true))).items.assets).toEqual([]);
      clock.advance(10_000);
      const answer = await sync(sim, assetsSync(cursors, {}, true));
      const changes = [...(answer.items.assets ?? []), ...(answer.items.links ?? [])];
      feeds.push(changes.map((item) => `${keyOf(item)} v${item.version} ${item.deletedTime ?? ''}`));
      expect(changes.length, `run ${run}`).toBeGreaterThan(10);
      expect(changes.some((item) => item.deletedTime !== undefined)).toBe(true);
      expect(changes.some((item) => item.version === 1)).toBe(true);
    }
    expect(feeds[1]).toEqual(feeds[0]);
  });
});

function keyParts(instance: { space: string; externalId: string }): { space: string; externalId: string } {
  return { space: instance.space, externalId: instance.externalId };
}
