import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { answerItems, drainQueries, postPoints } from '../support/datapoints.js';
import { createFakeClock } from '../support/fake-clock.js';
import { keyOf, listAll, viewRef } from '../support/instances.js';

/**
 * The time series that live in the data model: the simulator's CogniteTimeSeries nodes and its
 * timeseries collection are one set. Every node generated at start is a series with points, whose
 * collection item carries the node's key as `instanceId`, and `POST /timeseries/data/list` finds
 * it by that key; a node that is no series (inserted later) is unknown, as an unknown id is.
 */
const API_KEY = 'datapoints-instances-key';
const AUTH = { 'api-key': API_KEY };
const SERIES = 80;
const NODES = 50;

let sim: Simulator;
/** The CogniteTimeSeries nodes as the instances list gives them, in order. */
let nodes: { space: string; externalId: string }[];

beforeAll(async () => {
  sim = await startSimulator({
    seed: 12,
    timeseries: SERIES,
    datapoints: 40_000,
    instances: { assets: 20, activities: 0, timeseries: NODES, edges: 0 },
    apiKeys: [API_KEY],
    clock: createFakeClock(),
  });
  const body = { sources: [{ source: viewRef('CogniteTimeSeries') }], limit: 1000 };
  const pages = await listAll(sim, body, AUTH);
  nodes = pages.flatMap((page) => page.items).map(({ space, externalId }) => ({ space, externalId }));
});

afterAll(async () => {
  await sim.close();
});

const seriesItems = () => Array.from({ length: SERIES }, (_, index) => sim.dataset.timeseries.item(index, false));

describe('CogniteTimeSeries nodes and the timeseries collection: one set', () => {
  it('every node is a series, whose item carries its key as instanceId; no other series has one', () => {
    expect(nodes).toHaveLength(NODES);
    const withInstance = seriesItems().filter((item) => item.instanceId !== undefined);
    expect(withInstance.map((item) => keyOf(item.instanceId!)).sort()).toEqual(nodes.map(keyOf).sort());
  });

  it('the points of a node by instanceId are its series\' points by id, the item named by both', async () => {
    const items = seriesItems();
    for (const node of nodes.slice(0, 12)) {
      const series = items.find((item) => item.instanceId !== undefined && keyOf(item.instanceId) === keyOf(node))!;
      const window = { start: 0, end: Date.UTC(2030, 0, 1), limit: 1000 };
      const byInstance = await drainQueries(sim, { items: [{ instanceId: node, ...window }] }, AUTH);
      const byId = await drainQueries(sim, { items: [{ id: series.id, ...window }] }, AUTH);
      expect(byInstance.points).toEqual(byId.points);
      const [answered] = await answerItems(sim, { limit: 1, items: [{ instanceId: node }] }, AUTH);
      expect(answered).toMatchObject({ id: series.id, instanceId: node, isString: series.isString });
    }
    const everything = { start: 0, end: Date.UTC(2030, 0, 1), limit: 10_000 };
    const counts = await Promise.all(nodes.map(async (node) =>
      (await drainQueries(sim, { items: [{ instanceId: node, ...everything }] }, AUTH)).points[0]?.length ?? 0));
    expect(counts.filter((count) => count > 0).length, 'most nodes hold points').toBeGreaterThan(NODES / 2);
  });

  it('a node that is no series, and a key no node has: 400 listing them under missing, or left out with ignoreUnknownIds', async () => {
    const [inserted] = sim.insertInstances('timeseries', 1);
    const notSeries = { space: inserted!.space, externalId: inserted!.externalId };
    const wrongSpace = { space: 'sp_elsewhere', externalId: nodes[0]!.externalId };
    const known = { instanceId: nodes[1]! };
    const body = { limit: 2, items: [{ instanceId: notSeries }, known, { instanceId: wrongSpace }] };
    const reply = await postPoints(sim, body, AUTH);
    expect(reply.status).toBe(400);
    expect(reply.json()).toEqual({
      error: { code: 400, message: 'Time series ids not found', missing: [{ instanceId: notSeries }, { instanceId: wrongSpace }] },
    });
    const items = await answerItems(sim, { ...body, ignoreUnknownIds: true }, AUTH);
    expect(items.map((item) => item.instanceId)).toEqual([nodes[1]]);
  });
});
