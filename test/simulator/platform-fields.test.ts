import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { createFakeClock } from '../support/fake-clock.js';
import { drain } from '../support/http.js';

/**
 * Fields the platform's description has and rehearsals must meet: served on a share of the items
 * (some have them, some do not), in the platform's shape; and lists the description requires to
 * hold at least one item when present are never served empty.
 */
const API_KEY = 'test-key-platform-fields';
const AUTH = { 'api-key': API_KEY };
const COUNTS = { assets: 600, events: 800, timeseries: 600, files: 600, sequences: 200, relationships: 600 } as const;
type Item = Record<string, unknown>;

let sim: Simulator;
const served: Partial<Record<keyof typeof COUNTS, Item[]>> = {};

beforeAll(async () => {
  // Half the series are CogniteTimeSeries nodes (those carry an instanceId).
  const instances = { timeseries: COUNTS.timeseries / 2 };
  const clock = createFakeClock();
  sim = await startSimulator({ ...COUNTS, instances, dataSets: 3, seed: 31, apiKeys: [API_KEY], clock });
  for (const resource of Object.keys(COUNTS) as (keyof typeof COUNTS)[]) {
    const pages = await drain<Item>(sim.baseUrl, `/${resource}`, { limit: 1000 }, AUTH);
    served[resource] = pages.flatMap((page) => page.items);
  }
});

afterAll(async () => {
  await sim.close();
});

const items = (resource: keyof typeof COUNTS): Item[] => served[resource] ?? [];

/** Some items have the field and some do not. */
function onAShare(resource: keyof typeof COUNTS, field: string): Item[] {
  const having = items(resource).filter((item) => field in item);
  expect(having.length, `${resource} with ${field}`).toBeGreaterThan(0);
  expect(having.length, `${resource} without ${field}`).toBeLessThan(items(resource).length);
  return having;
}

const isGeoJsonFeature = (value: unknown): boolean => {
  const feature = value as { type?: unknown; geometry?: { type?: unknown; coordinates?: unknown } };
  return feature.type === 'Feature' && ['Point', 'Polygon'].includes(feature.geometry?.type as string) &&
    Array.isArray(feature.geometry?.coordinates);
};

describe('fields of the platform the simulator serves on a share of the items', () => {
  it.each([['assets'], ['files'], ['relationships']] as const)('%s: labels, a list of 1 to 10 {externalId}', (resource) => {
    for (const item of onAShare(resource, 'labels')) {
      const labels = item.labels as unknown[];
      expect(labels.length).toBeGreaterThanOrEqual(1);
      expect(labels.length).toBeLessThanOrEqual(10);
      for (const label of labels) expect(Object.keys(label as object)).toEqual(['externalId']);
    }
  });

  it.each([['assets'], ['files']] as const)('%s: geoLocation, a GeoJSON Feature', (resource) => {
    for (const item of onAShare(resource, 'geoLocation')) expect(isGeoJsonFeature(item.geoLocation), JSON.stringify(item.geoLocation)).toBe(true);
  });

  it('assets: parentExternalId, the externalId of the asset parentId names', () => {
    const byId = new Map(items('assets').map((asset) => [asset.id, asset]));
    for (const asset of onAShare('assets', 'parentExternalId')) expect(asset.parentExternalId).toBe(byId.get(asset.parentId)?.externalId);
  });

  it.each([['timeseries'], ['files']] as const)('%s: instanceId, {space, externalId}', (resource) => {
    for (const item of onAShare(resource, 'instanceId')) {
      const instanceId = item.instanceId as Record<string, unknown>;
      expect(Object.keys(instanceId).sort()).toEqual(['externalId', 'space']);
      expect(typeof instanceId.space).toBe('string');
      expect(typeof instanceId.externalId).toBe('string');
    }
  });

  it("sequences: every column carries an id, unique across the project's sequences", () => {
    const ids = items('sequences').flatMap((sequence) => (sequence.columns as Item[]).map((column) => column.id));
    expect(ids.every((id) => Number.isSafeInteger(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('lists the description requires to hold at least one item when present', () => {
  it.each([['events'], ['files']] as const)('%s: assetIds is never served empty, and is absent on items linked to no asset', (resource) => {
    const linked = onAShare(resource, 'assetIds');
    for (const item of linked) expect((item.assetIds as unknown[]).length).toBeGreaterThan(0);
  });
});
