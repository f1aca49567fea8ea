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

/** Syncs from `cursors` until an answer is shorter than `limit` (caught up): every answer, and the cursors then. */
async function drain(
  sim: Simulator,
  limit: number,
  cursors?: Record<string, string>,
): Promise<{ answers: SyncAnswer[]; cursors: Record<string, string> }> {
  const answers: SyncAnswer[] = [];
  let at = cursors;
  for (let n = 0; n < 500; n++) {
    const answer = await sync(sim, assetsSync(limit, at));
    expect(answer, 'the platform\'s answer has no moreData').not.toHaveProperty('moreData');
    answers.push(answer);
    at = answer.nextCursor;
    if ((answer.items.assets ?? []).length < limit) return { answers, cursors: at };
  }
  throw new Error('the sync did not catch up within 500 answers');
}

const assetsOf = (answers: SyncAnswer[]) => answers.flatMap((answer) => (answer.items.assets ?? []).map(keyOf));
const sizes = (answers: SyncAnswer[]) => answers.map((answer) => answer.items.assets?.length);
const node = (instance: { space: string; externalId: string }) =>
  ({ instanceType: 'node' as const, space: instance.space, externalId: instance.externalId });

describe('POST /models/instances/sync: a page is short only when caught up', () => {
  it('a backfill of several pages: full pages, then a short last one; no moreData', async () => {
    const sim = await simulator(createFakeClock());
    const { answers } = await drain(sim, 50);
    expect(sizes(answers)).toEqual([50, 50, 20]);
    expect(assetsOf(answers)).toEqual(liveKeys(sim, 'asset'));
  });

  it('a backfill whose instances fill its last page exactly: the next answer is empty', async () => {
    const sim = await simulator(createFakeClock());
    const { answers } = await drain(sim, 40);
    expect(sizes(answers)).toEqual([40, 40, 40, 0]);
    expect(assetsOf(answers)).toEqual(liveKeys(sim, 'asset'));
  });

  it('caught up and nothing changed: empty answers, and from the start with noBackfill', async () => {
    const clock = createFakeClock();
    const sim = await simulator(clock);
    let { cursors } = await drain(sim, 50);
    for (let n = 0; n < 3; n++) {
      clock.advance(60_000);
      const answer = await sync(sim, assetsSync(50, cursors));
      expect(answer.items.assets).toEqual([]);
      cursors = answer.nextCursor;
    }
    const fresh = await sync(sim, assetsSync(50, undefined, { mode: 'noBackfill' }));
    expect(fresh.items.assets).toEqual([]);
    expect(fresh).not.toHaveProperty('moreData');
  });

  it.each([
    ['updateInstances', (sim: Simulator) => sim.updateInstances([3, 4].map((i) => node(sim.instances.instance('asset', i))))],
    ['insertInstances', (sim: Simulator) => sim.insertInstances('asset', 2)],
    ['deleteInstances', (sim: Simulator) => sim.deleteInstances([3, 4].map((i) => node(sim.instances.instance('asset', i))))],
  ] as const)('after sim.%s: full pages while the changes are unread, then a short one', async (_, change) => {
    const clock = createFakeClock();
    const sim = await simulator(clock);
    const { cursors } = await drain(sim, 50);
    clock.advance(1000);
    change(sim);
    const { answers } = await drain(sim, 1, cursors);
    expect(sizes(answers)).toEqual([1, 1, 0]);
    const changed = await drain(sim, 50, cursors);
    expect(sizes(changed.answers)).toEqual([2]);
  });

  it('the changes made during a backfill follow its last instances on the same page', async () => {
    const clock = createFakeClock();
    const sim = await simulator(clock);
    const first = await sync(sim, assetsSync(50));
    clock.advance(1000);
    const updated = [3, 4, 5].map((i) => node(sim.instances.instance('asset', i)));
    sim.updateInstances(updated);
    const rest = await drain(sim, 50, first.nextCursor);
    expect(sizes(rest.answers)).toEqual([50, 23]);
    expect(assetsOf(rest.answers)).toEqual([...liveKeys(sim, 'asset').slice(50), ...updated.map(keyOf)]);
  });

  it('a short-page fault never shortens a sync answer: full pages while more remains, in the backfill and in the changes', async () => {
    const clock = createFakeClock();
    const sim = await simulator(clock, { faults: { shortPageRate: 1 } });
    const backfill = await drain(sim, 50);
    expect(sizes(backfill.answers)).toEqual([50, 50, 20]);
    expect(assetsOf(backfill.answers)).toEqual(liveKeys(sim, 'asset'));

    clock.advance(1000);
    const updated = Array.from({ length: 60 }, (_, i) => node(sim.instances.instance('asset', i)));
    sim.updateInstances(updated);
    const changes = await drain(sim, 50, backfill.cursors);
    expect(sizes(changes.answers)).toEqual([50, 10]);
    expect(assetsOf(changes.answers)).toEqual(updated.map(keyOf));
    expect(sim.stats().faults['short-page'] ?? 0).toBe(0);
  });

  it('the scan budget never cuts a sync answer: a filter that matches few is walked to the limit or the end', async () => {
    const clock = createFakeClock();
    const sim = await simulator(clock, { scanBudget: 4 });
    const backfill = await drain(sim, 50);
    expect(sizes(backfill.answers)).toEqual([50, 50, 20]);

    clock.advance(1000);
    sim.updateInstances([0, 1, 2, 3, 4, 5].map((i) => node(sim.instances.instance('activity', i))));
    const asset = sim.instances.instance('asset', 7);
    sim.updateInstances([node(asset)]);
    const changes = await drain(sim, 50, backfill.cursors);
    expect(sizes(changes.answers)).toEqual([1]);
    expect(assetsOf(changes.answers)).toEqual([keyOf(asset)]);
  });

  it('changes that do not match the filter are passed over: the page with the others is short, and the next one empty', async () => {
    const clock = createFakeClock();
    const sim = await simulator(clock);
    const others = [node(sim.instances.instance('activity', 2)), node(sim.instances.instance('timeseries', 5))];
    const first = await sync(sim, assetsSync(50));
    clock.advance(1000);
    sim.updateInstances(others);
    const rest = await drain(sim, 50, first.nextCursor);
    expect(sizes(rest.answers)).toEqual([50, 20]);
    expect(sizes((await drain(sim, 50, rest.cursors)).answers)).toEqual([0]);

    clock.advance(1000);
    const asset = sim.instances.instance('asset', 11);
    sim.updateInstances([node(asset)]);
    sim.deleteInstances(others);
    const changes = await drain(sim, 1, rest.cursors);
    expect(sizes(changes.answers)).toEqual([1, 0]);
    expect(assetsOf(changes.answers)).toEqual([keyOf(asset)]);
  });
});
