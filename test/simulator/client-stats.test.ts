import { afterEach, describe, expect, it } from 'vitest';
import { type ClientCount, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { countClient } from '../../src/simulator/stats.js';
import { listUrl, send } from '../support/http.js';

const API_KEY = 'client-stats-key-0001';
const CLIENT = { id: 'client-stats', secret: 'client-stats-secret-0001' };
const APP = { 'x-cdp-app': 'my-app', 'x-cdp-sdk': 'my-sdk:1.2.3' };

const open: Simulator[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((sim) => sim.close()));
});

async function simulator(): Promise<Simulator> {
  const sim = await startSimulator({ assets: 5, events: 10, apiKeys: [API_KEY], clients: [CLIENT] });
  open.push(sim);
  return sim;
}

function requestToken(sim: Simulator, headers: Record<string, string> = {}) {
  const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT.id, client_secret: CLIENT.secret });
  return send(sim.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: body.toString(),
  });
}

describe('countClient', () => {
  it('counts by the pair of headers, null for one not sent, in order of first sight', () => {
    const counts: ClientCount[] = [];
    for (const headers of [APP, {}, APP, { 'x-cdp-app': 'my-app' }, { 'x-cdp-sdk': 'my-sdk:1.2.3' }, {}, APP]) {
      countClient(counts, headers);
    }
    expect(counts).toEqual([
      { app: 'my-app', sdk: 'my-sdk:1.2.3', requests: 3 },
      { app: null, sdk: null, requests: 2 },
      { app: 'my-app', sdk: null, requests: 1 },
      { app: null, sdk: 'my-sdk:1.2.3', requests: 1 },
    ]);
  });

  it('an empty header is an empty string, not a missing one; repeats are joined', () => {
    const counts: ClientCount[] = [];
    countClient(counts, { 'x-cdp-app': '', 'x-cdp-sdk': ['a', 'b'] });
    expect(counts).toEqual([{ app: '', sdk: 'a, b', requests: 1 }]);
  });
});

describe('simulator stats: clients', () => {
  it('starts empty', async () => {
    const sim = await simulator();
    expect(sim.stats().clients).toEqual({ platform: [], token: [] });
  });

  it('counts platform routes and the token endpoint apart, every request once', async () => {
    const sim = await simulator();
    const key = { 'api-key': API_KEY };
    expect((await send(listUrl(sim.baseUrl, '/events', { limit: 5 }), { headers: { ...key, ...APP } })).status).toBe(200);
    expect((await send(listUrl(sim.baseUrl, '/assets', {}), { headers: { ...key, ...APP } })).status).toBe(200);
    expect((await send(listUrl(sim.baseUrl, '/events', {}), { headers: key })).status).toBe(200);
    expect((await send(`${sim.origin}/login/status`, { headers: APP })).status).toBe(200);
    expect((await send(`${sim.origin}/nowhere`, { headers: APP })).status).toBe(404);
    expect((await requestToken(sim)).status).toBe(200);
    expect((await requestToken(sim, APP)).status).toBe(200);

    const stats = sim.stats();
    expect(stats.clients).toEqual({
      platform: [
        { app: 'my-app', sdk: 'my-sdk:1.2.3', requests: 4 },
        { app: null, sdk: null, requests: 1 },
      ],
      token: [
        { app: null, sdk: null, requests: 1 },
        { app: 'my-app', sdk: 'my-sdk:1.2.3', requests: 1 },
      ],
    });
    const counted = [...stats.clients.platform, ...stats.clients.token].reduce((sum, c) => sum + c.requests, 0);
    expect(counted).toBe(stats.requests);
    expect(stats.byRoute['POST /oauth2/token']).toBe(2);
  });

  it('resetStats empties it, and stats() hands out a copy', async () => {
    const sim = await simulator();
    await send(listUrl(sim.baseUrl, '/events', {}), { headers: { 'api-key': API_KEY, ...APP } });
    const before = sim.stats();
    before.clients.platform.push({ app: 'x', sdk: 'y', requests: 9 });
    expect(sim.stats().clients.platform).toEqual([{ app: 'my-app', sdk: 'my-sdk:1.2.3', requests: 1 }]);
    sim.resetStats();
    expect(sim.stats().clients).toEqual({ platform: [], token: [] });
  });
});
