import { afterEach, describe, expect, it } from 'vitest';
import { type Simulator, type SimulatorOptions, startSimulator } from '../../src/simulator/index.js';
import { createFakeClock } from '../support/fake-clock.js';
import { listUrl, type Reply, send } from '../support/http.js';

const API_KEY = 'test-api-key-0001';
const CLIENT = { id: 'worker-client', secret: 'worker-secret-123' };
const USER = { user: 'alice@example.com', password: 'correct-horse-battery' };
const UNAUTHORIZED = { error: { code: 401, message: 'Unauthorized' } };

const open: Simulator[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((sim) => sim.close()));
});

async function simulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const sim = await startSimulator({
    assets: 20,
    events: 30,
    apiKeys: [API_KEY],
    clients: [CLIENT],
    users: [USER],
    ...options,
  });
  open.push(sim);
  return sim;
}

function events(sim: Simulator, headers: Record<string, string> = {}): Promise<Reply> {
  return send(listUrl(sim.baseUrl, '/events', { limit: 5 }), { headers });
}

function form(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

function requestToken(sim: Simulator, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return send(sim.tokenUrl, { method: 'POST', headers: { ...FORM, ...headers }, body: form(fields) });
}

async function token(sim: Simulator): Promise<string> {
  const reply = await requestToken(sim, {
    grant_type: 'client_credentials',
    client_id: CLIENT.id,
    client_secret: CLIENT.secret,
    scope: 'https://platform.example/.default',
  });
  expect(reply.status).toBe(200);
  const body = reply.json<{ access_token: string }>();
  return body.access_token;
}

function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
}

function sessionCookie(reply: Reply): string {
  const header = reply.headers['set-cookie'];
  const first = Array.isArray(header) ? header[0] : header;
  const pair = (first ?? '').split(';')[0] ?? '';
  expect(pair).toMatch(/^session=.+/);
  return pair;
}

async function login(sim: Simulator): Promise<Reply> {
  return send(`${sim.origin}/login`, {
    method: 'POST',
    headers: FORM,
    body: form({ user: USER.user, password: USER.password }),
  });
}

function status(sim: Simulator, headers: Record<string, string> = {}): Promise<Reply> {
  return send(`${sim.origin}/login/status`, { headers: { accept: 'application/json', ...headers } });
}

describe('api-key header', () => {
  it('a configured api-key gets 200 with items', async () => {
    const sim = await simulator();
    const reply = await events(sim, { 'api-key': API_KEY });
    expect(reply.status).toBe(200);
    expect(reply.json<{ items: unknown[] }>().items).toHaveLength(5);
  });

  it('an unknown api-key gets 401 with exactly the platform Unauthorized body', async () => {
    const sim = await simulator();
    const reply = await events(sim, { 'api-key': 'not-a-configured-key' });
    expect(reply.status).toBe(401);
    expect(reply.json()).toEqual(UNAUTHORIZED);
  });

  it('a request without credentials gets 401 with exactly the platform Unauthorized body', async () => {
    const sim = await simulator();
    const reply = await events(sim);
    expect(reply.status).toBe(401);
    expect(reply.json()).toEqual(UNAUTHORIZED);
  });
});

describe('OAuth client credentials at the token endpoint', () => {
  it('a form-encoded client-credentials grant returns a Bearer token with expires_in = tokenTtlSeconds', async () => {
    const sim = await simulator({ faults: { tokenTtlSeconds: 900 } });
    const reply = await requestToken(sim, {
      grant_type: 'client_credentials',
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
      scope: 'https://platform.example/.default',
    });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^application\/json/);
    const body = reply.json<Record<string, unknown>>();
    expect(typeof body.access_token).toBe('string');
    expect((body.access_token as string).length).toBeGreaterThan(10);
    expect(body.token_type).toBe('Bearer');
    expect(body.expires_in).toBe(900);
    expect(sim.stats().tokensIssued).toBe(1);
  });

  it('the issued token authenticates /events as Authorization: Bearer <token>', async () => {
    const sim = await simulator();
    const accessToken = await token(sim);
    const reply = await events(sim, { authorization: `Bearer ${accessToken}` });
    expect(reply.status).toBe(200);
    expect(reply.json<{ items: unknown[] }>().items).toHaveLength(5);
  });

  it('HTTP Basic client authentication (client id and secret in the Authorization header) works', async () => {
    const sim = await simulator();
    const reply = await requestToken(
      sim,
      { grant_type: 'client_credentials' },
      { authorization: basic(CLIENT.id, CLIENT.secret) },
    );
    expect(reply.status).toBe(200);
    const accessToken = reply.json<{ access_token: string }>().access_token;
    expect((await events(sim, { authorization: `Bearer ${accessToken}` })).status).toBe(200);
  });

  it('HTTP Basic with form-urlencoded id and secret (RFC 6749 2.3.1) is decoded', async () => {
    const client = { id: 'client:with/odd chars', secret: 'p@ss:w0rd/+%&=' };
    const sim = await simulator({ clients: [client] });
    const reply = await requestToken(
      sim,
      { grant_type: 'client_credentials' },
      { authorization: basic(encodeURIComponent(client.id), encodeURIComponent(client.secret)) },
    );
    expect(reply.status).toBe(200);
  });

  it('HTTP Basic: the secret is everything after the first colon (RFC 7617), even when it holds a colon', async () => {
    const client = { id: 'colon-client', secret: 'abc:defgh' };
    const sim = await simulator({ clients: [client] });
    const reply = await requestToken(
      sim,
      { grant_type: 'client_credentials' },
      { authorization: basic(client.id, client.secret) },
    );
    expect(reply.status).toBe(200);
  });

  it('malformed HTTP Basic credentials (bad %-escape) get an OAuth 4xx error, never a 500', async () => {
    const sim = await simulator();
    const reply = await requestToken(
      sim,
      { grant_type: 'client_credentials' },
      { authorization: basic(CLIENT.id, 'bad%zzsecret') },
    );
    expect([400, 401]).toContain(reply.status);
    expect(['invalid_request', 'invalid_client']).toContain(reply.json<{ error: string }>().error);
  });

  it('a wrong client secret gets 401 invalid_client', async () => {
    const sim = await simulator();
    const reply = await requestToken(sim, {
      grant_type: 'client_credentials',
      client_id: CLIENT.id,
      client_secret: 'wrong-secret-999',
    });
    expect(reply.status).toBe(401);
    expect(reply.json()).toMatchObject({ error: 'invalid_client' });
    expect(sim.stats().tokensIssued).toBe(0);
  });

  it('an unknown grant_type gets 400 unsupported_grant_type', async () => {
    const sim = await simulator();
    const reply = await requestToken(sim, {
      grant_type: 'password',
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
    });
    expect(reply.status).toBe(400);
    expect(reply.json()).toMatchObject({ error: 'unsupported_grant_type' });
  });

  it('a JSON body instead of a form gets 400 invalid_request', async () => {
    const sim = await simulator();
    const reply = await send(sim.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'client_credentials',
        client_id: CLIENT.id,
        client_secret: CLIENT.secret,
      }),
    });
    expect(reply.status).toBe(400);
    expect(reply.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('a missing client_secret gets 400 invalid_request', async () => {
    const sim = await simulator();
    const reply = await requestToken(sim, { grant_type: 'client_credentials', client_id: CLIENT.id });
    expect(reply.status).toBe(400);
    expect(reply.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('GET on the token URL gets 405', async () => {
    const sim = await simulator();
    const reply = await send(sim.tokenUrl);
    expect(reply.status).toBe(405);
    expect(reply.headers.allow).toBe('POST');
  });
});

describe('token lifetime and Authorization header form', () => {
  it('a token is accepted just before expiry and gets 401 at and after expiry; a new token works again', async () => {
    const clock = createFakeClock();
    const sim = await simulator({ clock, faults: { tokenTtlSeconds: 60 } });
    const first = await token(sim);
    const bearer = { authorization: `Bearer ${first}` };

    clock.advance(59_999);
    expect((await events(sim, bearer)).status).toBe(200);

    clock.advance(1);
    const atExpiry = await events(sim, bearer);
    expect(atExpiry.status).toBe(401);
    expect(atExpiry.json()).toEqual(UNAUTHORIZED);

    clock.advance(10_000);
    expect((await events(sim, bearer)).status).toBe(401);

    const second = await token(sim);
    expect(second).not.toBe(first);
    expect((await events(sim, { authorization: `Bearer ${second}` })).status).toBe(200);
  });

  it('a valid token sent without the Bearer scheme gets 401', async () => {
    const sim = await simulator();
    const accessToken = await token(sim);
    const reply = await events(sim, { authorization: accessToken });
    expect(reply.status).toBe(401);
    expect(reply.json()).toEqual(UNAUTHORIZED);
  });

  it('a made-up Bearer token gets 401', async () => {
    const sim = await simulator();
    const reply = await events(sim, { authorization: 'Bearer bm90LWEtcmVhbC10b2tlbi1hdC1hbGw' });
    expect(reply.status).toBe(401);
    expect(reply.json()).toEqual(UNAUTHORIZED);
  });
});

describe('cookie session', () => {
  it('POST /login sets an HttpOnly session cookie and answers the status shape with loggedIn true', async () => {
    const sim = await simulator();
    const reply = await login(sim);
    expect(reply.status).toBe(200);
    const header = reply.headers['set-cookie'];
    const setCookie = Array.isArray(header) ? header.join('\n') : (header ?? '');
    expect(setCookie).toMatch(/^session=[^;]+;/);
    expect(setCookie).toMatch(/;\s*HttpOnly/i);
    expect(reply.json()).toEqual({
      data: { user: USER.user, loggedIn: true, project: sim.project, projectId: sim.projectId },
    });
  });

  it('the session cookie authenticates /events', async () => {
    const sim = await simulator();
    const cookie = sessionCookie(await login(sim));
    const reply = await events(sim, { cookie });
    expect(reply.status).toBe(200);
    expect(reply.json<{ items: unknown[] }>().items).toHaveLength(5);
  });

  it('a wrong password gets 401 and no session cookie', async () => {
    const sim = await simulator();
    const reply = await send(`${sim.origin}/login`, {
      method: 'POST',
      headers: FORM,
      body: form({ user: USER.user, password: 'wrong-password-1' }),
    });
    expect(reply.status).toBe(401);
    expect(reply.json()).toEqual(UNAUTHORIZED);
    expect(reply.headers['set-cookie']).toBeUndefined();
  });

  it('GET /logout ends the session: loggedIn false, then the cookie gets 401 on /events and loggedIn false on /login/status', async () => {
    const sim = await simulator();
    const cookie = sessionCookie(await login(sim));
    expect((await status(sim, { cookie })).json()).toMatchObject({ data: { loggedIn: true } });

    const out = await send(`${sim.origin}/logout`, { headers: { cookie } });
    expect(out.status).toBe(200);
    const body = out.json<{ data: Record<string, unknown> }>();
    expect(body.data.loggedIn).toBe(false);
    expect(body.data).toHaveProperty('user');
    expect(body.data).toHaveProperty('project');
    expect(body.data).toHaveProperty('projectId');

    const after = await events(sim, { cookie });
    expect(after.status).toBe(401);
    expect(after.json()).toEqual(UNAUTHORIZED);
    expect((await status(sim, { cookie })).json()).toEqual({
      data: { user: '', loggedIn: false, project: '', projectId: -1 },
    });
  });
});

describe('GET /login/status at the server origin', () => {
  it('with an api-key: loggedIn true with user, project, projectId and a numeric apiKeyId', async () => {
    const sim = await simulator();
    const reply = await status(sim, { 'api-key': API_KEY });
    expect(reply.status).toBe(200);
    const body = reply.json<{ data: Record<string, unknown> }>();
    expect(Object.keys(body)).toEqual(['data']);
    expect(body.data).toMatchObject({ loggedIn: true, project: sim.project, projectId: sim.projectId });
    expect(typeof body.data.user).toBe('string');
    expect(body.data.user).not.toBe('');
    expect(typeof body.data.apiKeyId).toBe('number');
    expect(Number.isInteger(body.data.apiKeyId)).toBe(true);
  });

  it('with the session cookie: loggedIn true without apiKeyId', async () => {
    const sim = await simulator();
    const cookie = sessionCookie(await login(sim));
    const reply = await status(sim, { cookie });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({
      data: { user: USER.user, loggedIn: true, project: sim.project, projectId: sim.projectId },
    });
  });

  it('with no credentials or a wrong key: 200 with the logged-out shape', async () => {
    const sim = await simulator();
    const loggedOut = { data: { user: '', loggedIn: false, project: '', projectId: -1 } };
    const none = await status(sim);
    expect(none.status).toBe(200);
    expect(none.json()).toEqual(loggedOut);
    const wrong = await status(sim, { 'api-key': 'not-a-configured-key' });
    expect(wrong.status).toBe(200);
    expect(wrong.json()).toEqual(loggedOut);
  });

  it('with a Bearer token (legacy endpoint does not know tokens): loggedIn false', async () => {
    const sim = await simulator();
    const accessToken = await token(sim);
    const reply = await status(sim, { authorization: `Bearer ${accessToken}` });
    expect(reply.status).toBe(200);
    expect(reply.json()).toMatchObject({ data: { loggedIn: false } });
  });

  it('with Accept: text/html: 406 with the platform error body', async () => {
    const sim = await simulator();
    const reply = await send(`${sim.origin}/login/status`, {
      headers: { 'accept': 'text/html', 'api-key': API_KEY },
    });
    expect(reply.status).toBe(406);
    const body = reply.json<{ error: { code: number; message: string } }>();
    expect(body.error.code).toBe(406);
    expect(typeof body.error.message).toBe('string');
  });

  it('{baseUrl}/login/status does not exist (404)', async () => {
    const sim = await simulator();
    const reply = await send(`${sim.baseUrl}/login/status`, {
      headers: { 'accept': 'application/json', 'api-key': API_KEY },
    });
    expect(reply.status).toBe(404);
    expect(reply.json()).toMatchObject({ error: { code: 404 } });
  });
});

describe('authorization by project', () => {
  it('a valid credential on another project path gets 403 with the error body', async () => {
    const sim = await simulator();
    const reply = await send(`${sim.origin}/api/v1/projects/other/events?limit=5`, {
      headers: { 'api-key': API_KEY },
    });
    expect(reply.status).toBe(403);
    const body = reply.json<{ error: { code: number; message: string } }>();
    expect(body.error.code).toBe(403);
    expect(body.error.message.length).toBeGreaterThan(0);
  });
});

describe('capabilities', () => {
  it('a credential named in `capabilities` reads only what they grant: 403 naming the capability it lacks', async () => {
    const sim = await simulator({ capabilities: { [API_KEY]: ['assetsAcl:READ'], [CLIENT.id]: ['eventsAcl:READ'] } });
    const assets = await send(listUrl(sim.baseUrl, '/assets', { limit: 5 }), { headers: { 'api-key': API_KEY } });
    expect(assets.status).toBe(200);
    const denied = await events(sim, { 'api-key': API_KEY });
    expect(denied.status).toBe(403);
    expect(denied.json()).toEqual({
      error: { code: 403, message: "Missing capability eventsAcl:READ: the credential may not make this request in project 'demo'" },
    });
    const count = await send(`${sim.baseUrl}/timeseries/aggregate`, { method: 'POST', headers: { 'api-key': API_KEY }, body: '{}' });
    expect(count.json()).toMatchObject({ error: { code: 403, message: expect.stringContaining('timeSeriesAcl:READ') as unknown } });
    // A token is named by its client id; the unknown project is refused as before.
    expect((await events(sim, { authorization: `Bearer ${await token(sim)}` })).status).toBe(200);
    const other = await send(`${sim.origin}/api/v1/projects/other/events?limit=5`, { headers: { 'api-key': API_KEY } });
    expect(other.json()).toEqual({ error: { code: 403, message: "Project 'other' does not exist" } });
  });
});
