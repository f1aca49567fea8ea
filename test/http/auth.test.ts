import { afterEach, describe, expect, it } from 'vitest';
import { Redactor } from '../../src/util/redact.js';
import { Secret } from '../../src/util/secret.js';
import { sourceSchema, type SourceConfig } from '../../src/config/source-schema.js';
import { TOKEN_LEEWAY_MS } from '../../src/http/auth/client-credentials.js';
import { type ClientDeps, createPlatformClient } from '../../src/connect/index.js';
import { drainCursorChain } from '../../src/http/cursor-chain.js';
import { authStatus } from '../../src/cli/auth.js';
import { AuthError, HttpStatusError } from '../../src/http/errors.js';
import type { PlatformClient } from '../../src/http/platform-client.js';
import { type Simulator, type SimulatorOptions, startSimulator } from '../../src/simulator/index.js';
import { createFakeClock } from '../support/fake-clock.js';
import { drain } from '../support/http.js';
import { idOf, idsOf } from '../support/items.js';
import { captureLogger } from '../support/log-capture.js';
import { type ScriptedRequest, type ScriptedResponse, startScriptedServer } from '../support/scripted-server.js';
import { issueToken, loginCookie } from '../support/simulator-auth.js';

const API_KEY = 'auth-test-api-key-0001';
const CLIENT = { id: 'auth-test-client', secret: 'auth-test-client-secret-0001' };
const USER = { user: 'alice@example.com', password: 'auth-test-password-0001' };
const UNAUTHORIZED = { error: { code: 401, message: 'Unauthorized' } };

const cleanup: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

async function simulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const sim = await startSimulator({
    assets: 20,
    events: 300,
    apiKeys: [API_KEY],
    clients: [CLIENT],
    users: [USER],
    recordRequests: true,
    ...options,
  });
  cleanup.push(() => sim.close());
  return sim;
}

async function scripted(respond: (request: ScriptedRequest, index: number) => ScriptedResponse) {
  const server = await startScriptedServer(respond);
  cleanup.push(() => server.close());
  return server;
}

type AuthInput =
  | { type: 'api-key'; apiKey: Secret } |
  { type: 'token'; token: Secret } |
  { type: 'cookie'; cookie: Secret } |
  {
    type: 'oauth-client-credentials';
    tokenUrl: string;
    clientId: string;
    clientSecret: Secret;
    scopes?: string[];
    audience?: string;
  };

function source(baseUrl: string, auth: AuthInput): SourceConfig {
  return sourceSchema.parse({ baseUrl, auth });
}

function oauth(
  tokenUrl: string,
  secret = CLIENT.secret,
  extra: { scopes?: string[]; audience?: string } = {},
): AuthInput {
  return { type: 'oauth-client-credentials', tokenUrl, clientId: CLIENT.id, clientSecret: new Secret(secret), ...extra };
}

function client(config: SourceConfig, deps: ClientDeps = {}): PlatformClient {
  const created = createPlatformClient(config, { clock: createFakeClock(), ...deps });
  cleanup.push(() => created.close());
  return created;
}

async function items(c: PlatformClient, limit = 5): Promise<unknown[]> {
  const response = await c.get('/events', [['limit', String(limit)]]);
  return (response.body as { items: unknown[] }).items;
}

/** `session=...` from the Set-Cookie of a password login. */

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(Error);
    return error as Error;
  }
  throw new Error('expected the promise to reject');
}

function tokenRequests(server: { requests: ScriptedRequest[] }): ScriptedRequest[] {
  return server.requests.filter((request) => request.url.startsWith('/oauth2/token'));
}

function apiRequests(server: { requests: ScriptedRequest[] }): ScriptedRequest[] {
  return server.requests.filter((request) => !request.url.startsWith('/oauth2/token'));
}

function mechanisms(sim: Simulator): (string | undefined)[] {
  return sim.requests().filter((r) => r.route === 'GET /events').map((r) => r.mechanism);
}

describe('API key', () => {
  it('sends the api-key header on every request and the platform accepts it', async () => {
    const sim = await simulator();
    const c = client(source(sim.baseUrl, { type: 'api-key', apiKey: new Secret(API_KEY) }));
    expect(await items(c)).toHaveLength(5);
    expect(await items(c, 3)).toHaveLength(3);
    expect(mechanisms(sim)).toEqual(['api-key', 'api-key']);
    expect(sim.stats().byStatus).toEqual({ 200: 2 });
    const status = await c.loginStatus();
    expect(status).toMatchObject({ loggedIn: true, user: `service-account-1@${sim.project}`, apiKeyId: 1000 });
  });

  it('API keys and cookie sessions log one deprecation warning per client; tokens log none', async () => {
    const logs = captureLogger();
    const warnings = () => logs.records().filter((record) => record.level === 40);
    // Never contacted: the clients are closed without a request.
    const base = 'http://127.0.0.1:9/api/v1/projects/p';
    const create = (auth: AuthInput) => createPlatformClient(source(base, auth), { logger: logs.logger });
    const made = [
      create({ type: 'token', token: new Secret('t') }),
      create(oauth('http://127.0.0.1:9/oauth2/token')),
    ];
    expect(warnings()).toHaveLength(0);
    made.push(create({ type: 'api-key', apiKey: new Secret('k') }));
    expect(warnings()).toHaveLength(1);
    expect(String(warnings()[0]?.msg)).toMatch(/deprecated/i);
    expect(warnings()[0]).toMatchObject({ mechanism: 'api-key' });
    made.push(create({ type: 'cookie', cookie: new Secret('session=c') }));
    expect(warnings()).toHaveLength(2);
    expect(warnings()[1]).toMatchObject({ mechanism: 'cookie' });
    await Promise.all(made.map((c) => c.close()));
  });

  it('each client (one per run) warns once in its own log, however many requests it sends; no per-process flag', async () => {
    const sim = await simulator();
    const first = captureLogger();
    const second = captureLogger();
    const deprecations = (logs: { lines(): string[] }) => logs.lines().filter((line) => /deprecated/i.test(line));
    const c = client(source(sim.baseUrl, { type: 'api-key', apiKey: new Secret(API_KEY) }), { logger: first.logger });
    expect(await items(c)).toHaveLength(5);
    expect(await items(c)).toHaveLength(5);
    client(source(sim.baseUrl, { type: 'api-key', apiKey: new Secret(API_KEY) }), { logger: second.logger });
    expect(deprecations(first)).toHaveLength(1);
    expect(deprecations(second)).toHaveLength(1);
  });
});

describe('static token', () => {
  it('a token from the token endpoint is sent as Authorization: Bearer and accepted', async () => {
    const sim = await simulator();
    const token = await issueToken(sim, CLIENT);
    const c = client(source(sim.baseUrl, { type: 'token', token: new Secret(token) }));
    expect(await items(c)).toHaveLength(5);
    expect(mechanisms(sim)).toEqual(['token']);
  });

  it('once the server sees it expired, a request fails with E_AUTH after one request (nothing can renew it)', async () => {
    const simClock = createFakeClock();
    const sim = await simulator({ clock: simClock, faults: { tokenTtlSeconds: 600 } });
    const token = await issueToken(sim, CLIENT);
    const c = client(source(sim.baseUrl, { type: 'token', token: new Secret(token) }));
    expect(await items(c)).toHaveLength(5);
    simClock.advance(600_000);
    sim.resetStats();
    const error = await rejection(items(c));
    expect(error).toBeInstanceOf(AuthError);
    expect(error).toMatchObject({ code: 'E_AUTH' });
    expect(error.message).toContain('HTTP 401');
    expect(sim.stats().byRoute).toEqual({ 'GET /events': 1 });
    expect(sim.stats().byStatus).toEqual({ 401: 1 });
    expect(c.stats.requests).toBe(2);
  });
});

describe('OAuth client credentials', () => {
  it('the first request fetches a token and the next requests reuse it', async () => {
    const sim = await simulator();
    const c = client(source(sim.baseUrl, oauth(sim.tokenUrl)));
    expect(await items(c)).toHaveLength(5);
    expect(sim.stats().tokensIssued).toBe(1);
    for (let i = 0; i < 9; i++) await items(c);
    expect(sim.stats().tokensIssued).toBe(1);
    expect(sim.stats().byRoute).toEqual({ 'POST /oauth2/token': 1, 'GET /events': 10 });
    expect(new Set(mechanisms(sim))).toEqual(new Set(['token']));
  });

  it('the token request is a form POST with grant_type, client_id, client_secret, scope and audience', async () => {
    const server = await scripted((request) =>
      request.url.startsWith('/oauth2/token')
        ? { body: { access_token: 'scripted-token-1', token_type: 'Bearer', expires_in: 3600 } }
        : { body: { items: [] } },
    );
    const c = client(
      source(
        server.baseUrl,
        oauth(`${server.origin}/oauth2/token`, CLIENT.secret, {
          scopes: ['https://platform.example/.default', 'offline'],
          audience: 'https://api.platform.example',
        }),
      ),
    );
    await c.get('/events');
    const [tokenRequest, ...more] = tokenRequests(server);
    expect(more).toHaveLength(0);
    expect(tokenRequest?.method).toBe('POST');
    expect(tokenRequest?.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded/);
    const form = new URLSearchParams(tokenRequest?.body);
    expect(Object.fromEntries(form)).toEqual({
      grant_type: 'client_credentials',
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
      scope: 'https://platform.example/.default offline',
      audience: 'https://api.platform.example',
    });
    expect(apiRequests(server).map((r) => r.headers.authorization)).toEqual(['Bearer scripted-token-1']);
  });

  it('without scopes or audience the token request carries neither field', async () => {
    const server = await scripted((request) =>
      request.url.startsWith('/oauth2/token') ? { body: { access_token: 'scripted-token-1' } } : { body: { items: [] } },
    );
    const c = client(source(server.baseUrl, oauth(`${server.origin}/oauth2/token`)));
    await c.get('/events');
    const form = new URLSearchParams(tokenRequests(server)[0]?.body);
    expect([...form.keys()].sort()).toEqual(['client_id', 'client_secret', 'grant_type']);
  });

  it(`renews the token ${TOKEN_LEEWAY_MS / 1000} s before it expires, before the request, with no 401`, async () => {
    expect(TOKEN_LEEWAY_MS).toBe(30_000);
    const clock = createFakeClock();
    const sim = await simulator({ clock, faults: { tokenTtlSeconds: 120 } });
    const c = client(source(sim.baseUrl, oauth(sim.tokenUrl)), { clock });
    await items(c);
    expect(sim.stats().tokensIssued).toBe(1);
    clock.advance(89_000);
    await items(c);
    expect(sim.stats().tokensIssued).toBe(1);
    clock.advance(2_000);
    await items(c);
    expect(sim.stats().tokensIssued).toBe(2);
    expect(sim.stats().byStatus['401']).toBeUndefined();
    expect(sim.requests().map((r) => r.route)).toEqual([
      'POST /oauth2/token',
      'GET /events',
      'GET /events',
      'POST /oauth2/token',
      'GET /events',
    ]);
  });

  it('a cursor chain that outlives several token lifetimes yields every item exactly once without a failure', async () => {
    const clock = createFakeClock();
    const sim = await simulator({ clock, events: 400, faults: { tokenTtlSeconds: 120 } });
    const expected = idsOf(await drain(sim.baseUrl, '/events', { limit: 1000 }, { 'api-key': API_KEY }));
    expect(expected).toHaveLength(400);
    sim.resetStats();
    const c = client(source(sim.baseUrl, oauth(sim.tokenUrl)), { clock });
    const ids: number[] = [];
    let pages = 0;
    for await (const page of drainCursorChain(c, { path: '/events', params: [['limit', '10']] })) {
      ids.push(...page.items.toArray().map((item) => idOf(item as Record<string, unknown>)));
      pages++;
      clock.advance(45_000);
    }
    expect(pages).toBe(40);
    expect(ids).toHaveLength(400);
    expect(new Set(ids).size).toBe(400);
    expect([...ids].sort((a, b) => a - b)).toEqual([...expected].sort((a, b) => a - b));
    // 40 pages x 45 s = 30 min, 15 lifetimes of 2 min: a token is renewed every second page.
    expect(sim.stats().tokensIssued).toBeGreaterThanOrEqual(15);
    expect(sim.stats().byStatus).toEqual({ 200: 40 + sim.stats().tokensIssued });
    expect(c.stats.retries).toBe(0);
  });

  it('a 401 on a token the server considers expired renews the token once and resends successfully', async () => {
    const simClock = createFakeClock();
    const clientClock = createFakeClock();
    const logs = captureLogger();
    const sim = await simulator({ clock: simClock, faults: { tokenTtlSeconds: 600 } });
    const c = client(source(sim.baseUrl, oauth(sim.tokenUrl)), { clock: clientClock, logger: logs.logger });
    await items(c);
    simClock.advance(600_000);
    expect(await items(c)).toHaveLength(5);
    expect(sim.stats().byStatus['401']).toBe(1);
    expect(sim.stats().tokensIssued).toBe(2);
    expect(sim.stats().byRoute).toEqual({ 'POST /oauth2/token': 2, 'GET /events': 3 });
    expect(c.stats.retries).toBe(0);
    expect(logs.lines().filter((line) => line.includes('credential refused (401)'))).toHaveLength(1);
  });

  it('a 401 after the renewal fails with E_AUTH after exactly two API requests (no retry loop)', async () => {
    let issued = 0;
    const server = await scripted((request) => {
      if (request.url.startsWith('/oauth2/token')) {
        return { body: { access_token: `scripted-token-${++issued}`, expires_in: 3600 } };
      }
      return { status: 401, body: UNAUTHORIZED };
    });
    const c = client(source(server.baseUrl, oauth(`${server.origin}/oauth2/token`)));
    const error = await rejection(c.get('/events', [['limit', '10']]));
    expect(error).toBeInstanceOf(AuthError);
    expect(error).toMatchObject({ code: 'E_AUTH' });
    expect(error.message).toContain('Unauthorized');
    expect(apiRequests(server).map((r) => r.headers.authorization)).toEqual([
      'Bearer scripted-token-1',
      'Bearer scripted-token-2',
    ]);
    expect(tokenRequests(server)).toHaveLength(2);
    expect(c.stats).toEqual({ requests: 2, retries: 0, throttled: 0, answers: { '4xx': 2 }, responseBytes: expect.any(Number) });
  });

  it('concurrent requests share one renewal in flight: 20 at start and 20 after expiry fetch one token each', async () => {
    const clock = createFakeClock();
    const sim = await simulator({ clock, faults: { tokenTtlSeconds: 120 } });
    const c = client(source(sim.baseUrl, oauth(sim.tokenUrl)), { clock });
    const burst = () => Promise.all(Array.from({ length: 20 }, () => items(c, 1)));
    expect(await burst()).toHaveLength(20);
    expect(sim.stats().tokensIssued).toBe(1);
    clock.advance(120_000);
    await burst();
    expect(sim.stats().tokensIssued).toBe(2);
    expect(sim.stats().byRoute).toEqual({ 'POST /oauth2/token': 2, 'GET /events': 40 });
    expect(sim.stats().byStatus['401']).toBeUndefined();
  });

  it('20 concurrent requests refused with 401 share one renewal and all succeed', async () => {
    const simClock = createFakeClock();
    const sim = await simulator({ clock: simClock, faults: { tokenTtlSeconds: 600 } });
    const c = client(source(sim.baseUrl, oauth(sim.tokenUrl)));
    await items(c);
    simClock.advance(600_000);
    const pages = await Promise.all(Array.from({ length: 20 }, () => items(c, 1)));
    expect(pages.every((page) => page.length === 1)).toBe(true);
    expect(sim.stats().tokensIssued).toBe(2);
    expect(sim.stats().byStatus['401']).toBe(20);
  });
});

describe('token endpoint failures', () => {
  it('a wrong client secret fails with E_AUTH naming the client id and invalid_client, not the secret', async () => {
    const sim = await simulator();
    const wrong = 'wrong-client-secret-0002';
    const c = client(source(sim.baseUrl, oauth(sim.tokenUrl, wrong)));
    const error = await rejection(items(c));
    expect(error).toBeInstanceOf(AuthError);
    expect(error).toMatchObject({ code: 'E_AUTH' });
    expect(error.message).toContain(CLIENT.id);
    expect(error.message).toContain('invalid_client');
    expect(error.message).not.toContain(wrong);
    expect(error.message).not.toContain(CLIENT.secret);
    expect(sim.stats().byRoute).toEqual({ 'POST /oauth2/token': 1 });
  });

  it('a token endpoint answering 503 twice then 200 succeeds after two retries', async () => {
    const clock = createFakeClock();
    let tokenCalls = 0;
    const server = await scripted((request) => {
      if (!request.url.startsWith('/oauth2/token')) return { body: { items: [{ id: 1 }] } };
      tokenCalls++;
      return tokenCalls <= 2
        ? { status: 503, body: { error: 'temporarily_unavailable' } }
        : { body: { access_token: 'scripted-token-after-503', expires_in: 3600 } };
    });
    const c = client(source(server.baseUrl, oauth(`${server.origin}/oauth2/token`)), { clock });
    const response = await c.get('/events');
    expect(response.body).toEqual({ items: [{ id: 1 }] });
    expect(tokenRequests(server)).toHaveLength(3);
    expect(clock.sleeps).toHaveLength(2);
    expect(apiRequests(server).map((r) => r.headers.authorization)).toEqual(['Bearer scripted-token-after-503']);
  });

  it('a token endpoint answering 200 without access_token fails with E_AUTH and sends no API request', async () => {
    const server = await scripted((request) =>
      request.url.startsWith('/oauth2/token')
        ? { body: { token_type: 'Bearer', expires_in: 3600 } }
        : { body: { items: [] } },
    );
    const c = client(source(server.baseUrl, oauth(`${server.origin}/oauth2/token`)));
    const error = await rejection(c.get('/events'));
    expect(error).toBeInstanceOf(AuthError);
    expect(error).toMatchObject({ code: 'E_AUTH' });
    expect(error.message).toContain('access_token');
    expect(tokenRequests(server)).toHaveLength(1);
    expect(apiRequests(server)).toHaveLength(0);
  });
});

describe('every token obtained is added to the redactor as it arrives', () => {
  it('the first token and a renewed one: an error quoting either shows Bearer [redacted]', async () => {
    const clock = createFakeClock();
    const tokens: string[] = [];
    const server = await scripted((request) => {
      if (!request.url.startsWith('/oauth2/token')) {
        return { status: 400, body: { error: { code: 400, message: `not accepted: ${String(request.headers.authorization)}` } } };
      }
      tokens.push(`issued-token-${tokens.length + 1}-of-the-identity-provider`);
      return { body: { access_token: tokens.at(-1), expires_in: 120 } };
    });
    const redactor = new Redactor([]);
    const logs = captureLogger('debug', redactor);
    const c = client(source(server.baseUrl, oauth(`${server.origin}/oauth2/token`)), { clock, redactor, logger: logs.logger });
    for (const n of [1, 2]) {
      const error = await rejection(c.get('/events'));
      expect(error.message).toContain(`not accepted: Bearer ${tokens[n - 1]}`);
      expect(redactor.redact(error.message)).toContain('not accepted: Bearer [redacted]');
      expect(redactor.redact(`the token alone: ${tokens[n - 1]}`)).toBe('the token alone: [redacted]');
      logs.logger.info({ err: error }, error.message);
      clock.advance(120_000);
    }
    expect(tokens).toHaveLength(2);
    for (const token of tokens) expect(logs.lines().join('\n')).not.toContain(token);
  });
});

describe('one retry budget per request, renewing its token included', () => {
  const SERVER_ERROR = { status: 500, body: { error: 'server_error', error_description: 'try later' } };

  /** A loopback IdP answering the first `failures` token requests with `failure`, then tokens; the API pages. */
  async function flakyIdp(failures: number, failure: ScriptedResponse = SERVER_ERROR) {
    let calls = 0;
    return scripted((request) => {
      if (!request.url.startsWith('/oauth2/token')) return { body: { items: [{ id: 1 }] } };
      return ++calls <= failures ? failure : { body: { access_token: `budget-token-${calls}`, expires_in: 3600 } };
    });
  }

  function budgetClient(server: { baseUrl: string; origin: string }, maxAttempts: number) {
    const logs = captureLogger();
    const config = sourceSchema.parse({
      baseUrl: server.baseUrl,
      auth: oauth(`${server.origin}/oauth2/token`),
      retry: { maxAttempts },
    });
    const clock = createFakeClock();
    const c = client(config, { clock, logger: logs.logger, random: () => 0.5 });
    const warnings = () => logs.records().filter((record) => record.level === 40).map((record) => String(record.msg));
    return { c, clock, warnings };
  }

  /** Every `attempt k/max` of the warnings, as [k, max]. */
  function attemptsLogged(warnings: string[]): [number, number][] {
    return warnings.map((line) => {
      const match = /attempt (\d+)\/(\d+)/.exec(line);
      expect(match, line).not.toBeNull();
      return [Number(match?.[1]), Number(match?.[2])];
    });
  }

  it.each([3, 10])('an IdP answering 500: at most maxAttempts (%i) requests in all, each attempt logged once', async (maxAttempts) => {
    const server = await flakyIdp(Infinity);
    const { c, clock, warnings } = budgetClient(server, maxAttempts);
    const error = await rejection(c.get('/events'));
    expect(tokenRequests(server).length + apiRequests(server).length).toBeLessThanOrEqual(maxAttempts);
    expect(tokenRequests(server)).toHaveLength(maxAttempts);
    expect(apiRequests(server)).toHaveLength(0);
    expect(clock.sleeps).toHaveLength(maxAttempts - 1);
    const logged = attemptsLogged(warnings());
    expect(logged.map(([k]) => k)).toEqual(Array.from({ length: maxAttempts - 1 }, (_, i) => i + 2));
    for (const [k, max] of logged) {
      expect(max).toBe(maxAttempts);
      expect(k).toBeLessThanOrEqual(maxAttempts);
    }
    expect(warnings()[0]).toBe(
      `POST ${server.origin}/oauth2/token: HTTP 500 server_error: try later; attempt 2/${maxAttempts} in 0.3 s (request id scripted-1)`,
    );
    expect(c.stats).toMatchObject({ requests: 0, retries: maxAttempts - 1 });
    // What failed: the identity provider, its status, after how many attempts.
    expect(error).toBeInstanceOf(HttpStatusError);
    expect(error).toMatchObject({ code: 'E_HTTP_STATUS', status: 500, attempts: maxAttempts, method: 'POST', path: '/oauth2/token' });
    expect(error.message).toBe(
      `The identity provider at ${server.origin} answered HTTP 500: server_error: try later ` +
      `(POST /oauth2/token, request id scripted-${maxAttempts}, after ${maxAttempts} attempts)`,
    );
  });

  it('a token failure and a platform failure share the budget: 500 from the IdP, then 503 from the platform', async () => {
    let apiCalls = 0;
    let tokenCalls = 0;
    const server = await scripted((request) => {
      if (request.url.startsWith('/oauth2/token')) {
        return ++tokenCalls === 1 ? SERVER_ERROR : { body: { access_token: 'budget-token', expires_in: 3600 } };
      }
      return ++apiCalls === 1 ? { status: 503, body: { error: { code: 503, message: 'busy' } } } : { body: { items: [] } };
    });
    const { c, warnings } = budgetClient(server, 3);
    expect((await c.get('/events')).attempts).toBe(3);
    expect(server.requests.map((r) => r.url.split('?')[0])).toEqual([
      '/oauth2/token',
      '/oauth2/token',
      '/api/v1/projects/scripted/events',
      '/api/v1/projects/scripted/events',
    ]);
    expect(attemptsLogged(warnings())).toEqual([[2, 3], [3, 3]]);
  });

  it('the same with maxAttempts 2: the budget is spent, the platform error after 2 attempts', async () => {
    let tokenCalls = 0;
    const server = await scripted((request) => {
      if (request.url.startsWith('/oauth2/token')) {
        return ++tokenCalls === 1 ? SERVER_ERROR : { body: { access_token: 'budget-token', expires_in: 3600 } };
      }
      return { status: 503, body: { error: { code: 503, message: 'busy' } } };
    });
    const { c } = budgetClient(server, 2);
    const error = await rejection(c.get('/events'));
    expect(error).toMatchObject({ code: 'E_HTTP_STATUS', status: 503, attempts: 2 });
    expect(tokenRequests(server)).toHaveLength(2);
    expect(apiRequests(server)).toHaveLength(1);
  });

  it('a 400 from the IdP stays an AuthError after one request, not retried', async () => {
    const server = await flakyIdp(Infinity, { status: 400, body: { error: 'invalid_client' } });
    const { c, warnings } = budgetClient(server, 10);
    const error = await rejection(c.get('/events'));
    expect(error).toBeInstanceOf(AuthError);
    expect(error).toMatchObject({ code: 'E_AUTH', attempts: 1 });
    expect(tokenRequests(server)).toHaveLength(1);
    expect(warnings()).toEqual([]);
  });

  it('20 concurrent requests share one renewal in flight, a failed one included: 2 token requests', async () => {
    const server = await flakyIdp(1);
    const { c, warnings } = budgetClient(server, 10);
    const answers = await Promise.all(Array.from({ length: 20 }, () => c.get('/events')));
    expect(answers.every((answer) => answer.attempts === 2)).toBe(true);
    expect(tokenRequests(server)).toHaveLength(2);
    expect(apiRequests(server)).toHaveLength(20);
    expect(attemptsLogged(warnings())).toEqual(Array.from({ length: 20 }, () => [2, 10]));
  });

  it('auth status alone retries a transient token failure within the one budget', async () => {
    const server = await flakyIdp(1, { status: 503, body: { error: 'temporarily_unavailable' } });
    const { c } = budgetClient(server, 2);
    const status = await authStatus(c, { type: 'oauth-client-credentials', clientId: CLIENT.id });
    expect(status).toMatchObject({ works: true, user: CLIENT.id });
    expect(tokenRequests(server)).toHaveLength(2);
    expect(apiRequests(server)).toHaveLength(1);
    expect(c.stats).toMatchObject({ requests: 1, retries: 1 });
  });

  it('auth status: two token failures spend a budget of 2 and fail, naming the identity provider', async () => {
    const server = await flakyIdp(2, { status: 503, body: { error: 'temporarily_unavailable' } });
    const { c } = budgetClient(server, 2);
    const error = await rejection(authStatus(c, { type: 'oauth-client-credentials', clientId: CLIENT.id }));
    expect(error).toMatchObject({ code: 'E_HTTP_STATUS', status: 503, attempts: 2 });
    expect(error.message).toMatch(/^The identity provider at .* answered HTTP 503: temporarily_unavailable \(POST /);
    expect(tokenRequests(server)).toHaveLength(2);
    expect(apiRequests(server)).toHaveLength(0);
  });
});

describe('cookie session', () => {
  it('a login cookie lists, reports the user, logs out, and is refused with E_AUTH afterwards', async () => {
    const sim = await simulator();
    const cookie = await loginCookie(sim, USER);
    const c = client(source(sim.baseUrl, { type: 'cookie', cookie: new Secret(cookie) }));
    expect(await items(c)).toHaveLength(5);
    expect(mechanisms(sim)).toEqual(['cookie']);
    expect(await c.loginStatus()).toEqual({
      loggedIn: true,
      user: USER.user,
      project: sim.project,
      projectId: sim.projectId,
    });
    const out = await c.logout();
    expect(out).toMatchObject({ loggedIn: false, user: USER.user });
    expect(await c.loginStatus()).toMatchObject({ loggedIn: false });
    const error = await rejection(items(c));
    expect(error).toBeInstanceOf(AuthError);
    expect(error).toMatchObject({ code: 'E_AUTH' });
    expect(sim.stats().byStatus['401']).toBe(1);
  });
});
