import * as sdk from '@cognite/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { expectedAggregates, expectedRawPoints } from '../support/datapoints.js';
import { createFakeClock } from '../support/fake-clock.js';
import { issueToken } from '../support/simulator-auth.js';

/**
 * The platform's own JavaScript SDK (@cognite/sdk), unmodified, reads the simulator's datapoints
 * with its `client.datapoints.retrieve(...)` and follows the `nextCursor` of each series, as its
 * users do: it gets exactly the generator's points, raw and aggregated.
 */

/** The SDK's declarations re-export './src/index' without an extension, which NodeNext resolution cannot follow. */
interface RetrievedPoint {
  timestamp: Date;
  [aggregateOrValue: string]: unknown;
}
interface Retrieved {
  id: number;
  externalId?: string;
  isString: boolean;
  nextCursor?: string;
  datapoints: RetrievedPoint[];
}
type Query = Record<string, unknown>;
interface CogniteClient {
  authenticate(): Promise<unknown>;
  datapoints: { retrieve(query: { items: Query[] } & Query): Promise<Retrieved[]> };
}
const { CogniteClient } = sdk as unknown as {
  CogniteClient: new (options: {
    appId: string;
    project: string;
    baseUrl: string;
    oidcTokenProvider: () => Promise<string>;
  }) => CogniteClient;
};

const SECRET = 'sdk-datapoints-secret';
const NOW = Date.UTC(2026, 0, 1);

let sim: Simulator;
let client: CogniteClient;

beforeAll(async () => {
  sim = await startSimulator({
    seed: 5,
    timeseries: 40,
    datapoints: 200_000,
    clients: [{ id: 'sdk', secret: SECRET }],
    clock: createFakeClock(NOW),
  });
  const origin = new URL(sim.baseUrl).origin;
  client = new CogniteClient({ appId: 'bulk-extract-test', project: sim.project, baseUrl: origin, oidcTokenProvider: token });
  await client.authenticate();
});

afterAll(async () => {
  await sim.close();
});

/** The SDK's token provider: the client-credentials grant (it fails on any answer but 200). */
function token(): Promise<string> {
  return issueToken(sim, { id: 'sdk', secret: SECRET });
}

/**
 * Calls `retrieve` until no series has a `nextCursor`, each call repeating the queries of the
 * series not yet done with the cursor the SDK handed back. Points come back with epoch ms again.
 */
async function retrieveAll(
  top: Query,
  items: Query[],
): Promise<{ points: Record<string, unknown>[][]; calls: number }> {
  const points: Record<string, unknown>[][] = items.map(() => []);
  let going = items.map((query, index) => ({ index, query }));
  let calls = 0;
  while (going.length > 0) {
    calls++;
    const answers = await client.datapoints.retrieve({ ...top, items: going.map(({ query }) => query) });
    const next: typeof going = [];
    answers.forEach((answer, position) => {
      const { index, query } = going[position] ?? { index: -1, query: {} };
      expect(answer.datapoints.every((point) => point.timestamp instanceof Date)).toBe(true);
      points[index]?.push(...answer.datapoints.map((point) => ({ ...point, timestamp: point.timestamp.getTime() })));
      if (answer.nextCursor !== undefined) next.push({ index, query: { ...query, cursor: answer.nextCursor } });
    });
    going = next;
  }
  return { points, calls };
}

function longest(count: number, numericOnly: boolean): number[] {
  return Array.from({ length: sim.dataset.timeseries.count }, (_, index) => index)
    .filter((index) => !numericOnly || !sim.dataset.timeseries.item(index).isString)
    .sort((a, b) => sim.dataset.datapoints.countOf(b) - sim.dataset.datapoints.countOf(a))
    .slice(0, count);
}

describe('@cognite/sdk datapoints.retrieve', () => {
  it('reads raw points of several series, numeric and string, following its cursors, exactly', async () => {
    const indexes = longest(5, false);
    const strings = Array.from({ length: sim.dataset.timeseries.count }, (_, index) => index).filter(
      (index) => sim.dataset.timeseries.item(index).isString && sim.dataset.datapoints.countOf(index) > 0,
    );
    const chosen = [...indexes, ...strings.slice(0, 2)];
    const items = chosen.map((index) => ({ id: sim.dataset.timeseries.idOf(index), limit: 5000 }));
    const { points, calls } = await retrieveAll({ start: 0, end: NOW }, items);
    expect(calls).toBeGreaterThan(2);
    chosen.forEach((index, position) => {
      expect(points[position], `series ${index}`).toEqual(expectedRawPoints(sim.dataset.datapoints.series(index), 0, NOW));
    });
    expect(points.flat().length).toBeGreaterThan(50_000);
  });

  it('reads bad points and statuses when asked, by externalId', async () => {
    const index =
      longest(40, true).find(
        (one) => sim.dataset.datapoints.series(one).shape.badShare > 0 && sim.dataset.timeseries.item(one).externalId,
      ) ?? -1;
    const externalId = sim.dataset.timeseries.item(index).externalId;
    expect(externalId).toBeDefined();
    const flags = { includeStatus: true, ignoreBadDataPoints: false };
    const { points } = await retrieveAll({}, [{ externalId, limit: 3000, start: 0, end: NOW, ...flags }]);
    expect(points[0]).toEqual(expectedRawPoints(sim.dataset.datapoints.series(index), 0, NOW, flags));
    expect(points[0]?.some((point) => point.value === 'NaN' || point.value === 'Infinity')).toBe(true);
  });

  it('reads aggregates, following its cursors, equal to a recomputation from the raw points', async () => {
    const indexes = longest(3, true);
    const items = indexes.map((index) => ({ id: sim.dataset.timeseries.idOf(index), limit: 100 }));
    const top = { start: 0, end: NOW, aggregates: ['count', 'average', 'min', 'max', 'sum'], granularity: '10m' };
    const { points, calls } = await retrieveAll(top, items);
    expect(calls).toBeGreaterThan(1);
    indexes.forEach((index, position) => {
      const expected = expectedAggregates(sim.dataset.datapoints.series(index), { start: 0, end: NOW, granularity: '10m' });
      expect(points[position], `series ${index}`).toEqual(expected);
    });
  });
});
