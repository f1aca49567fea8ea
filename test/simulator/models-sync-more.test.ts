import { afterEach, describe, expect, it } from 'vitest';
import { type Simulator, type SimulatorOptions, startSimulator } from '../../src/simulator/index.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';
import { keyOf, liveKeys, post, type SyncAnswer, viewRef } from '../support/instances.js';

const AUTH = { 'api-key': 'sync-more-api-key' };
const ASSET_VIEW = viewRef('CogniteAsset');

const open: Simulator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((sim) => sim.close()));
});

async function simulator(clock: FakeClock, options: SimulatorOptions = {}): Promise<Simulator> {
  const sim = await startSimulator({
    apiKeys: [AUTH['api-key']],
    clock,
    instances: { assets: 120, activities: 80, timeseries: 40, edges: 60 },
    ...options,
  });
  open.push(sim);
  return sim;
}

/** A sync of the asset nodes (their names), `limit` a page; `extra` joins the `with` entry (e.g. `mode`). */
function assetsSync(
  limit: number,
  cursors?: Record<string, string>,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    with: { assets: { nodes: { filter: { hasData: [ASSET_VIEW] } }, limit, ...extra } },
    select: { assets: { sources: [{ source: ASSET_VIEW, properties: ['name'] }] } },
    ...(cursors === undefined ? {} : { cursors }),
  };
}

async function sync(sim: Simulator, body: Record<string, unknown>): Promise<SyncAnswer> {
  const reply = await post(sim, '/models/instances/sync', body, AUTH);
  expect(reply.status, reply.text).toBe(200);
  const answer = reply.json<SyncAnswer>();
  expect(Object.keys(answer.nextCursor)).toEqual(['assets']);
  return answer;
}

/** Syncs from `cursors` until an answer says `moreData: false`; every answer, and the cursors to go on from. */
async function drain(
  sim: Simulator,
  limit: number,
  cursors?: Record<string, string>,
): Promise<{ answers: SyncAnswer[]; cursors: Record<string, string> }> {
  const answers: SyncAnswer[] = [];
  let at = cursors;
  for (let n = 0; n < 500; n++) {
    const answer = await sync(sim, assetsSync(limit, at));
    answers.push(answer);
    at = answer.nextCursor;
    if (!answer.moreData) return { answers, cursors: at };
  }
  throw new Error('the sync did not catch up within 500 answers');
}

const assetsOf = (answers: SyncAnswer[]) => answers.flatMap((answer) => (answer.items.assets ?? []).map(keyOf));
const sizes = (answers: SyncAnswer[]) => answers.map((answer) => answer.items.assets?.length);
const mores = (answers: SyncAnswer[]) => answers.map((answer) => answer.moreData);
const node = (instance: { space: string; externalId: string }) =>
  ({ instanceType: 'node' as const, space: instance.space, externalId: instance.externalId });

describe('POST /models/instances/sync: moreData', () => {
  it('is true on every page of a backfill of several pages and false on its last', async () => {
    const sim = await simulator(createFakeClock());
    const { answers } = await drain(sim, 50);
    expect(sizes(answers)).toEqual([50, 50, 20]);
    expect(mores(answers)).toEqual([true, true, false]);
    expect(assetsOf(answers)).toEqual(liveKeys(sim, 'asset'));
  });

  it('is false when caught up and nothing changed, on every answer after, and from the start with noBackfill', async () => {
    const clock = createFakeClock();
    const sim = await simulator(clock);
    let { cursors } = await drain(sim, 50);
    for (let n = 0; n < 3; n++) {
      clock.advance(60_000);
      const answer = await sync(sim, assetsSync(50, cursors));
      expect(answer.items.assets).toEqual([]);
      expect(answer.moreData).toBe(false);
      cursors = answer.nextCursor;
    }
    const fresh = await sync(sim, assetsSync(50, undefined, { mode: 'noBackfill' }));
    expect([fresh.items.assets, fresh.moreData]).toEqual([[], false]);
  });

  it.each([
    ['updateInstances', (sim: Simulator) => sim.updateInstances([3, 4].map((i) => node(sim.instances.instance('asset', i))))],
    ['insertInstances', (sim: Simulator) => sim.insertInstances('asset', 2)],
    ['deleteInstances', (sim: Simulator) => sim.deleteInstances([3, 4].map((i) => node(sim.instances.instance('asset', i))))],
  ] as const)('is true again after sim.%s while the changes are unread, false once they are read', async (_, change) => {
    const clock = createFakeClock();
    const sim = await simulator(clock);
    const { cursors } = await drain(sim, 50);
    clock.advance(1000);
    change(sim);
    const first = await sync(sim, assetsSync(1, cursors));
    expect([first.items.assets?.length, first.moreData]).toEqual([1, true]);
    const second = await sync(sim, assetsSync(1, first.nextCursor));
    expect([second.items.assets?.length, second.moreData]).toEqual([1, false]);
    const after = await sync(sim, assetsSync(1, second.nextCursor));
    expect([after.items.assets, after.moreData]).toEqual([[], false]);
  });

  it('is true on a short page (fault) while more remains, in the backfill and in the changes', async () => {
    const clock = createFakeClock();
    const sim = await simulator(clock, { faults: { shortPageRate: 1 } });
    const backfill = await drain(sim, 50);
    expect(assetsOf(backfill.answers)).toEqual(liveKeys(sim, 'asset'));
    expect(backfill.answers.length).toBeGreaterThan(3);
    expect(sizes(backfill.answers).every((size) => (size ?? 0) < 50)).toBe(true);
    expect(mores(backfill.answers)).toEqual([...backfill.answers.slice(1).map(() => true), false]);

    clock.advance(1000);
    const updated = Array.from({ length: 60 }, (_, i) => node(sim.instances.instance('asset', i)));
    sim.updateInstances(updated);
    const changes = await drain(sim, 50, backfill.cursors);
    expect(assetsOf(changes.answers)).toEqual(updated.map(keyOf));
    expect(changes.answers.length).toBeGreaterThan(1);
    expect(sizes(changes.answers).every((size) => (size ?? 0) < 50)).toBe(true);
    expect(mores(changes.answers)).toEqual([...changes.answers.slice(1).map(() => true), false]);
    expect(sim.stats().faults['short-page']).toBe(backfill.answers.length + changes.answers.length);
  });

  it('is true on a page cut by the scan budget while more remains', async () => {
    const clock = createFakeClock();
    const sim = await simulator(clock, { scanBudget: 4 });
    const backfill = await drain(sim, 50);
    expect(sizes(backfill.answers)).toEqual(Array.from({ length: 30 }, () => 4));
    expect(mores(backfill.answers)).toEqual([...Array.from({ length: 29 }, () => true), false]);

    clock.advance(1000);
    sim.updateInstances([0, 1, 2, 3, 4, 5].map((i) => node(sim.instances.instance('activity', i))));
    const asset = sim.instances.instance('asset', 7);
    sim.updateInstances([node(asset)]);
    const changes = await drain(sim, 50, backfill.cursors);
    expect(sizes(changes.answers)).toEqual([0, 1]);
    expect(mores(changes.answers)).toEqual([true, false]);
    expect(assetsOf(changes.answers)).toEqual([keyOf(asset)]);
  });

  it('is true when changes exist that do not match the filter, false after the empty page that skipped them', async () => {
    const clock = createFakeClock();
    const sim = await simulator(clock);
    const others = [node(sim.instances.instance('activity', 2)), node(sim.instances.instance('timeseries', 5))];
    // Changed during the backfill: its last page, shorter than its limit, still says more.
    const first = await sync(sim, assetsSync(50));
    clock.advance(1000);
    sim.updateInstances(others);
    const rest = await drain(sim, 50, first.nextCursor);
    expect(sizes(rest.answers)).toEqual([50, 20, 0]);
    expect(mores(rest.answers)).toEqual([true, true, false]);

    // Changed after it: an asset, then other nodes; the page with the asset says more.
    clock.advance(1000);
    const asset = sim.instances.instance('asset', 11);
    sim.updateInstances([node(asset)]);
    sim.deleteInstances(others);
    const changes = await drain(sim, 1, rest.cursors);
    expect(sizes(changes.answers)).toEqual([1, 0]);
    expect(mores(changes.answers)).toEqual([true, false]);
    expect(assetsOf(changes.answers)).toEqual([keyOf(asset)]);
  });
});
