import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { createFakeClock } from '../support/fake-clock.js';
import { drain, drainPost as drainPages, type Page, type Reply, send } from '../support/http.js';

/**
 * `POST /{resource}/list` on the simulator over loopback: the pages a GET chain gives, with the
 * paging and filter in a JSON body; a cursor is bound to every other property of the body.
 */
const API_KEY = 'post-list-test-key-1';
const AUTH = { 'api-key': API_KEY };
const JSON_AUTH = { ...AUTH, 'content-type': 'application/json' };

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({
    assets: 700,
    events: 2500,
    seed: 11,
    apiKeys: [API_KEY],
    clock: createFakeClock(),
    recordRequests: true,
  });
});
afterAll(async () => {
  await sim.close();
});

function post(resource: string, body: unknown, headers: Record<string, string> = JSON_AUTH): Promise<Reply> {
  return send(`${sim.baseUrl}/${resource}/list`, { method: 'POST', headers, body: JSON.stringify(body) });
}

/** Follows a POST chain to its end, the body repeated with only `cursor` changing. */
const drainPost = (resource: string, body: Record<string, unknown>) => drainPages(sim.baseUrl, `/${resource}/list`, body, AUTH);

const itemsOf = (pages: readonly Page[]) => pages.flatMap((page) => page.items);

function message(reply: Reply, status = 400): string {
  expect(reply.status, reply.text).toBe(status);
  return reply.json<{ error: { code: number; message: string } }>().error.message;
}

describe('POST /{resource}/list', () => {
  it.each([
    ['assets', 1],
    ['assets', 3],
    ['events', 1],
    ['events', 10],
  ] as const)('%s in %i partition(s): the same pages, item for item, as the GET chains', async (resource, n) => {
    for (let m = 1; m <= n; m++) {
      const byPost = await drainPost(resource, { limit: 400, partition: `${m}/${n}` });
      const byGet = await drain(sim.baseUrl, `/${resource}`, { limit: 400, partition: `${m}/${n}` }, AUTH);
      expect(byPost.map((page) => page.items.length)).toEqual(byGet.map((page) => page.items.length));
      expect(itemsOf(byPost)).toEqual(itemsOf(byGet));
    }
  });

  it('a filter in the body selects what the same GET parameters select', async () => {
    const all = itemsOf(await drain(sim.baseUrl, '/events', { limit: 1000 }, AUTH));
    const type = String(all[0]?.type);
    const maxLastUpdatedTime = Number(all[Math.floor(all.length / 2)]?.lastUpdatedTime);
    const byPost = itemsOf(await drainPost('events', { limit: 1000, filter: { type, lastUpdatedTime: { max: maxLastUpdatedTime } } }));
    const byGet = itemsOf(await drain(sim.baseUrl, '/events', { limit: 1000, type, maxLastUpdatedTime }, AUTH));
    expect(byPost.length).toBeGreaterThan(0);
    expect(byPost.length).toBeLessThan(all.length);
    expect(byPost).toEqual(byGet);
  });

  it.each(['events', 'assets'] as const)('%s: externalIdPrefix, by GET and in the body, selects exactly the items whose externalId starts with it', async (resource) => {
    const prefix = resource === 'events' ? 'EV-0000' : 'AS-00000';
    const all = itemsOf(await drain(sim.baseUrl, `/${resource}`, { limit: 1000 }, AUTH));
    const wanted = all.filter((item) => String(item.externalId).startsWith(prefix));
    expect(wanted.length).toBeGreaterThan(0);
    expect(wanted.length).toBeLessThan(all.length);
    expect(itemsOf(await drain(sim.baseUrl, `/${resource}`, { limit: 1000, externalIdPrefix: prefix }, AUTH))).toEqual(wanted);
    expect(itemsOf(await drainPost(resource, { limit: 1000, filter: { externalIdPrefix: prefix } }))).toEqual(wanted);
    expect(message(await post(resource, { filter: { externalIdPrefix: 'x'.repeat(256) } }))).toMatch(/1 to 255 characters/);
  });

  it('the request is recorded with its body', async () => {
    const before = sim.requests().length;
    await post('assets', { limit: 5, filter: { lastUpdatedTime: { min: 0 } } });
    const recorded = sim.requests().slice(before).find((request) => request.route === 'POST /assets/list');
    expect(recorded?.status).toBe(200);
    expect(recorded?.body).toEqual({ limit: 5, filter: { lastUpdatedTime: { min: 0 } } });
  });

  it('a cursor continues only the body it came from: another limit, or the GET chain, is refused', async () => {
    const first = (await post('events', { limit: 10, partition: '1/2' })).json<Page>();
    expect(first.nextCursor).toBeDefined();
    const cursor = first.nextCursor ?? '';
    expect((await post('events', { limit: 10, partition: '1/2', cursor })).status).toBe(200);
    expect(message(await post('events', { limit: 11, partition: '1/2', cursor }))).toMatch(/every parameter but cursor must be identical/);
    const viaGet = await send(`${sim.baseUrl}/events?limit=10&partition=1%2F2&cursor=${encodeURIComponent(cursor)}`, { headers: AUTH });
    expect(message(viaGet)).toMatch(/every parameter but cursor must be identical/);
  });

  it('answers as the platform does: 400 naming the property, 415 without JSON, 405 for GET, 401 without a credential', async () => {
    expect(message(await post('events', { limit: 0 }))).toMatch(/Invalid property 'limit'/);
    expect(message(await post('assets', { filter: { type: 'alarm' } }))).toMatch(/Unrecognized property 'filter.type' for \/assets\/list/);
    const notJson = await send(`${sim.baseUrl}/events/list`, { method: 'POST', headers: JSON_AUTH, body: '{"limit":' });
    expect(message(notJson)).toMatch(/not valid JSON/);
    expect(message(await post('events', {}, AUTH), 415)).toMatch(/Expected a JSON body/);
    const get = await send(`${sim.baseUrl}/events/list`, { headers: AUTH });
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
    expect((await post('events', {}, { 'content-type': 'application/json' })).status).toBe(401);
  });
});
