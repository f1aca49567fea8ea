import * as sdk from '@cognite/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';
import { type InstanceItem, keyOf, liveKeys, type SyncAnswer, viewRef } from '../support/instances.js';
import { issueToken } from '../support/simulator-auth.js';

/**
 * The platform's own JavaScript SDK (@cognite/sdk), unmodified, reads the simulator's data model
 * with `client.views.retrieve`/`list`, `client.instances.list` (every page, by its cursor) and
 * `client.instances.sync` (a backfill, then the changes), as its users do.
 */

/** The SDK's declarations re-export './src/index' without an extension, which NodeNext resolution cannot follow. */
interface ViewDefinition {
  space: string;
  externalId: string;
  version: string;
  properties: Record<string, { type?: { type: string } }>;
}
type ViewId = { space: string; externalId: string; version?: string };
interface CogniteClient {
  authenticate(): Promise<unknown>;
  views: {
    retrieve(ids: ViewId[], options?: { includeInheritedProperties?: boolean }): Promise<{ items: ViewDefinition[] }>;
    list(params?: Record<string, unknown>): { autoPagingToArray(paging: { limit: number }): Promise<ViewDefinition[]> };
  };
  instances: {
    list(params: Record<string, unknown>): Promise<{ items: InstanceItem[]; nextCursor?: string }>;
    sync(params: Record<string, unknown>): Promise<SyncAnswer>;
  };
}
const { CogniteClient } = sdk as unknown as {
  CogniteClient: new (options: {
    appId: string;
    project: string;
    baseUrl: string;
    oidcTokenProvider: () => Promise<string>;
  }) => CogniteClient;
};

const SECRET = 'sdk-models-secret';

let sim: Simulator;
let clock: FakeClock;
let client: CogniteClient;

beforeAll(async () => {
  clock = createFakeClock();
  sim = await startSimulator({
    seed: 9,
    instances: { assets: 700, activities: 300, timeseries: 200, edges: 250 },
    clients: [{ id: 'sdk', secret: SECRET }],
    clock,
  });
  client = new CogniteClient({
    appId: 'bulk-extract-test',
    project: sim.project,
    baseUrl: new URL(sim.baseUrl).origin,
    oidcTokenProvider: () => issueToken(sim, { id: 'sdk', secret: SECRET }),
  });
  await client.authenticate();
});

afterAll(() => sim.close());

describe('@cognite/sdk on the data model', () => {
  it('views.retrieve and views.list read the view definitions', async () => {
    const { items } = await client.views.retrieve([{ space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' }]);
    expect(items.map((view) => view.externalId)).toEqual(['CogniteAsset']);
    expect(items[0]?.properties.parent?.type).toMatchObject({ type: 'direct', list: false });
    const own = await client.views.retrieve([{ space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' }], { includeInheritedProperties: false });
    expect(Object.keys(own.items[0]?.properties ?? {})).not.toContain('name');
    const listed = await client.views.list({ includeGlobal: true, limit: 2 }).autoPagingToArray({ limit: 100 });
    expect(listed).toHaveLength(7);
  });

  it('instances.list reads every node of a view, page by page, and the edges', async () => {
    const keys: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.instances.list({
        instanceType: 'node',
        sources: [{ source: viewRef('CogniteAsset') }],
        limit: 250,
        ...(cursor === undefined ? {} : { cursor }),
      });
      pages++;
      keys.push(...page.items.map(keyOf));
      expect(page.items.every((item) => item.properties.cdf_cdm?.['CogniteAsset/v1'] !== undefined)).toBe(true);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(pages).toBe(3);
    expect(keys).toEqual(liveKeys(sim, 'asset'));
    const edges = await client.instances.list({ instanceType: 'edge', limit: 1000 });
    expect(edges.items.map(keyOf)).toEqual(liveKeys(sim, 'edge'));
  });

  it('instances.sync backfills, then reads exactly the changes, the delete with deletedTime', async () => {
    const query = {
      with: { series: { nodes: { filter: { hasData: [viewRef('CogniteTimeSeries')] } }, limit: 100 } },
      select: { series: { sources: [{ source: viewRef('CogniteTimeSeries'), properties: ['*'] }] } },
    };
    const seen: string[] = [];
    let cursors: Record<string, string> | undefined;
    for (;;) {
      const answer = await client.instances.sync({ ...query, ...(cursors === undefined ? {} : { cursors }) });
      seen.push(...(answer.items.series ?? []).map(keyOf));
      cursors = answer.nextCursor;
      if ((answer.items.series ?? []).length < 100) break;
    }
    expect(seen).toEqual(liveKeys(sim, 'timeseries'));

    clock.advance(60_000);
    const [one, two] = [sim.instances.instance('timeseries', 4), sim.instances.instance('timeseries', 8)];
    sim.updateInstances([{ instanceType: 'node', space: one.space, externalId: one.externalId }]);
    const [created] = sim.insertInstances('timeseries', 1);
    sim.deleteInstances([{ instanceType: 'node', space: two.space, externalId: two.externalId }]);
    const changes = await client.instances.sync({ ...query, cursors });
    expect(changes.items.series?.map(keyOf)).toEqual([keyOf(one), keyOf(created ?? one), keyOf(two)]);
    expect(changes.items.series?.map((item) => item.deletedTime)).toEqual([undefined, undefined, clock.now()]);
  });
});
