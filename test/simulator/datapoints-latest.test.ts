import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { createFakeClock } from '../support/fake-clock.js';
import { type Reply, send } from '../support/http.js';

/**
 * `POST /timeseries/data/latest`: each series' latest point before `before` (default now), as the
 * platform answers it, checked against the series' points walked one by one; unknown series are
 * the platform's 400 with `missing`, or left out with ignoreUnknownIds; a bad body names its field.
 */
const API_KEY = 'datapoints-latest-key';
const AUTH = { 'api-key': API_KEY };
const SERIES = 40;

let sim: Simulator;
const clock = createFakeClock();

beforeAll(async () => {
  sim = await startSimulator({
    seed: 21,
    timeseries: SERIES,
    datapoints: 20_000,
    instances: { assets: 5, activities: 0, timeseries: 10, edges: 0 },
    apiKeys: [API_KEY],
    clock,
  });
});

afterAll(async () => {
  await sim.close();
});

function postLatest(body: unknown): Promise<Reply> {
  return send(`${sim.baseUrl}/timeseries/data/latest`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...AUTH },
    body: JSON.stringify(body),
  });
}

interface LatestItem {
  id: number;
  externalId?: string;
  instanceId?: { space: string; externalId: string };
  isString: boolean;
  datapoints: { timestamp: number; value?: unknown; status?: unknown }[];
}

async function latest(body: unknown): Promise<LatestItem[]> {
  const reply = await postLatest(body);
  if (reply.status !== 200) throw new Error(`data/latest answered ${reply.status}: ${reply.text}`);
  return reply.json<{ items: LatestItem[] }>().items;
}

/** The timestamp of the last point of series `index` before `before`, walked point by point; Good only unless `all`. */
function lastBefore(index: number, before: number, all = false): number | undefined {
  const points = sim.dataset.datapoints.series(index);
  let found: number | undefined;
  for (let k = 0; k < points.count; k++) {
    const timestamp = points.timestampOf(k);
    if (timestamp >= before) break;
    if (all || points.qualityOf(k) === 'good') found = timestamp;
  }
  return found;
}

describe('POST /timeseries/data/latest', () => {
  it('gives each series its latest Good point before now, or none, in the order asked', async () => {
    const indexes = Array.from({ length: SERIES }, (_, index) => index);
    const items = await latest({ items: indexes.map((index) => ({ id: sim.dataset.timeseries.idOf(index) })) });
    expect(items.map((item) => item.id)).toEqual(indexes.map((index) => sim.dataset.timeseries.idOf(index)));
    const now = clock.now();
    expect(items.map((item) => item.datapoints[0]?.timestamp)).toEqual(indexes.map((index) => lastBefore(index, now)));
    expect(items.every((item) => item.datapoints.length <= 1)).toBe(true);
    expect(items.some((item) => item.datapoints.length === 0), 'a series without points').toBe(true);
    expect(items.some((item) => item.datapoints.length === 1)).toBe(true);
  });

  it('takes before (epoch ms or N-ago) per item, exclusive, and the status flags', async () => {
    const index = Array.from({ length: SERIES }, (_, i) => i).find((i) => sim.dataset.datapoints.series(i).count > 10)!;
    const id = sim.dataset.timeseries.idOf(index);
    const points = sim.dataset.datapoints.series(index);
    const fifth = points.timestampOf(5);
    const [at] = await latest({ items: [{ id, before: fifth, ignoreBadDataPoints: false }] });
    expect(at?.datapoints[0]?.timestamp).toBe(points.timestampOf(4));
    const [good] = await latest({ items: [{ id, before: fifth + 1 }] });
    expect(good?.datapoints[0]?.timestamp).toBe(lastBefore(index, fifth + 1));
    const [ago] = await latest({ items: [{ id, before: '1d-ago' }] });
    expect(ago?.datapoints[0]?.timestamp).toBe(lastBefore(index, clock.now() - 86_400_000));
    const externalId = sim.dataset.timeseries.item(index, false).externalId ?? '';
    const [all] = await latest({ items: [{ externalId, ignoreBadDataPoints: false }] });
    expect(all?.datapoints[0]?.timestamp).toBe(lastBefore(index, clock.now(), true));
  });

  it('finds a series by instanceId, and answers it with its instanceId', async () => {
    const nodes = Array.from({ length: SERIES }, (_, i) => i);
    const index = nodes.find((i) => sim.dataset.timeseries.item(i, false).instanceId !== undefined)!;
    const { instanceId, id } = sim.dataset.timeseries.item(index, false);
    const [item] = await latest({ items: [{ instanceId }] });
    expect(item).toMatchObject({ id, instanceId });
    expect(item?.datapoints[0]?.timestamp).toBe(lastBefore(index, clock.now()));
  });

  it('unknown series: 400 listing them under missing; left out with ignoreUnknownIds', async () => {
    const known = { id: sim.dataset.timeseries.idOf(1) };
    const body = { items: [{ id: 1 }, known, { externalId: 'NO-SUCH' }] };
    const reply = await postLatest(body);
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({
      error: { code: 400, message: 'Time series ids not found', missing: [{ id: 1 }, { externalId: 'NO-SUCH' }] },
    });
    const items = await latest({ ...body, ignoreUnknownIds: true });
    expect(items.map((item) => item.id)).toEqual([known.id]);
  });

  it.each([
    [{}, "'items'"],
    [{ items: [] }, "'items'"],
    [{ items: Array.from({ length: 101 }, () => ({ id: 1 })) }, "'items'"],
    [{ items: [{ id: 1, start: 0 }] }, "'items[0].start'"],
    [{ items: [{ id: 1, externalId: 'x' }] }, "'items[0]'"],
    [{ items: [{ id: 1, before: 'yesterday' }] }, "'items[0].before'"],
    [{ items: [{ id: 1 }], limit: 1 }, "'limit'"],
    [{ items: [{ id: 1 }], ignoreUnknownIds: 'yes' }, "'ignoreUnknownIds'"],
  ])('refuses %j naming %s', async (body, field) => {
    const reply = await postLatest(body);
    expect(reply.status).toBe(400);
    expect(reply.text).toContain(field);
  });
});
