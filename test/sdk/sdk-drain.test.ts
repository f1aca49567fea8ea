import * as sdk from '@cognite/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Resource, RESOURCES, resourceSpec } from '../../src/resources/index.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';

/**
 * The platform's own JavaScript SDK (@cognite/sdk), unmodified, drains every collection of the
 * simulator with its own list methods (which POST to `/{resource}/list` and follow the cursors),
 * three partitions each: the union is the simulator's data, item for item.
 */
/** The SDK's declarations re-export './src/index' without an extension, which NodeNext resolution cannot follow. */
interface Listing {
  autoPagingToArray(options: { limit: number }): Promise<unknown[]>;
}
type ListMethod = { list(scope: { partition: string; limit: number }): Listing };
interface CogniteClient {
  authenticate(): Promise<unknown>;
  assets: ListMethod;
  events: ListMethod;
  timeseries: ListMethod;
  files: ListMethod;
  sequences: ListMethod;
  relationships: ListMethod;
}
const { CogniteClient } = sdk as unknown as {
  CogniteClient: new (options: {
    appId: string;
    project: string;
    baseUrl: string;
    oidcTokenProvider: () => Promise<string>;
  }) => CogniteClient;
};

const SECRET = 'sdk-drain-test-secret';
const COUNT = 1500;

let sim: Simulator;
let client: CogniteClient;

beforeAll(async () => {
  sim = await startSimulator({
    seed: 23,
    assets: COUNT,
    events: COUNT,
    timeseries: COUNT,
    files: COUNT,
    sequences: COUNT,
    relationships: COUNT,
    clients: [{ id: 'sdk', secret: SECRET }],
  });
  const origin = new URL(sim.baseUrl).origin;
  client = new CogniteClient({ appId: 'bulk-extract-test', project: sim.project, baseUrl: origin, oidcTokenProvider: token });
  await client.authenticate();
});

afterAll(async () => {
  await sim.close();
});

async function token(): Promise<string> {
  const response = await fetch(sim.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'sdk', client_secret: SECRET }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { access_token: string }).access_token;
}

/** One partition through the SDK's own `list(...).autoPagingToArray()` of the collection. */
function drain(resource: Resource, partition: string): Promise<unknown[]> {
  const scope = { partition, limit: 1000 };
  const all = { limit: Infinity };
  switch (resource) {
    case 'assets':
      return client.assets.list(scope).autoPagingToArray(all);
    case 'events':
      return client.events.list(scope).autoPagingToArray(all);
    case 'timeseries':
      return client.timeseries.list(scope).autoPagingToArray(all);
    case 'files':
      return client.files.list(scope).autoPagingToArray(all);
    case 'sequences':
      return client.sequences.list(scope).autoPagingToArray(all);
    case 'relationships':
      return client.relationships.list(scope).autoPagingToArray(all);
  }
}

/** The SDK turns epoch-ms fields into Dates; back to numbers, as the platform sent them. */
function asSent(value: unknown): unknown {
  if (value instanceof Date) return value.getTime();
  if (Array.isArray(value)) return value.map(asSent);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, asSent(inner)]));
  }
  return value;
}

describe.each(RESOURCES.map((resource) => [resource]))('@cognite/sdk lists %s', (resource) => {
  it('in 3 partitions whose union is the simulator\'s collection, each item once and equal', async () => {
    const set = sim.dataset[resource];
    const key = resourceSpec(resource).key;
    const parts = await Promise.all(['1/3', '2/3', '3/3'].map((partition) => drain(resource, partition)));
    for (const part of parts) expect(part.length).toBeGreaterThan(0);
    const byKey = new Map<unknown, unknown>();
    for (const item of parts.flat().map(asSent) as Record<string, unknown>[]) {
      expect(byKey.has(item[key]), `${key} ${String(item[key])} listed twice`).toBe(false);
      byKey.set(item[key], item);
    }
    expect(byKey.size).toBe(set.count);
    for (let index = 0; index < set.count; index++) {
      const expected = set.item(index) as unknown as Record<string, unknown>;
      expect(byKey.get(expected[key]), `${resource} item ${index}`).toEqual(expected);
    }
  });
});
