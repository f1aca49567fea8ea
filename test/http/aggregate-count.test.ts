import { afterEach, describe, expect, it } from 'vitest';
import { Secret } from '../../src/util/secret.js';
import { sourceSchema } from '../../src/config/source-schema.js';
import { parseAggregateCount } from '../../src/http/aggregate-count.js';
import { StaticAuth } from '../../src/http/auth/static-auth.js';
import { createPlatformClient } from '../../src/connect/index.js';
import { AuthError, BadResponseError, HttpStatusError } from '../../src/http/errors.js';
import { type Limiter, PlatformClient, type PlatformClientOptions } from '../../src/http/platform-client.js';
import { type Simulator, type SimulatorOptions, startSimulator } from '../../src/simulator/index.js';
import { createFakeClock } from '../support/fake-clock.js';
import { indexes } from '../support/items.js';
import { type ScriptedResponse, startScriptedServer } from '../support/scripted-server.js';

/** `PlatformClient.post` and `aggregateCount` against the simulator; a scripted server for shapes it never sends. */
const API_KEY = 'aggregate-client-key-0001';
const CLIENT = { id: 'aggregate-client', secret: 'aggregate-client-secret-0001' };

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

async function simulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const sim = await startSimulator({
    events: 2000,
    assets: 300,
    seed: 11,
    apiKeys: [API_KEY],
    clients: [CLIENT],
    recordRequests: true,
    ...options,
  });
  cleanup.push(() => sim.close());
  return sim;
}

function connect(baseUrl: string, options: Partial<PlatformClientOptions> = {}, key = API_KEY) {
  const clock = createFakeClock();
  const client = new PlatformClient({
    baseUrl,
    auth: StaticAuth.apiKey(new Secret(key)),
    clock,
    random: () => 0.5,
    ...options,
  });
  cleanup.push(() => client.close());
  return { client, clock };
}

async function scripted(respond: (index: number) => ScriptedResponse) {
  const server = await startScriptedServer((_request, index) => respond(index));
  cleanup.push(() => server.close());
  return server;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

const COUNT = (n: unknown): ScriptedResponse => ({ body: { items: [{ count: n }] } });

describe('PlatformClient.post', () => {
  it('sends JSON with content-type, accept, user agent and the credential, to {baseUrl}{path}', async () => {
    const server = await scripted(() => COUNT(3));
    const { client } = connect(server.baseUrl);
    const response = await client.post('/events/list', { limit: 10, filter: { type: 'alarm' } });
    expect(response).toMatchObject({ body: { items: [{ count: 3 }] }, attempts: 1, requestId: 'scripted-1' });
    expect(response.path).toBe('/api/v1/projects/scripted/events/list');
    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/api/v1/projects/scripted/events/list');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers.accept).toBe('application/json');
    expect(request?.headers['user-agent']).toMatch(/^bulk-extract\//);
    expect(request?.headers['api-key']).toBe(API_KEY);
    expect(JSON.parse(request?.body ?? '')).toEqual({ limit: 10, filter: { type: 'alarm' } });
  });

  it('retries 503 twice with backoff, sending the same body each time, through the limiter', async () => {
    const server = await scripted((i) => (i < 2 ? { status: 503, body: { error: { code: 503, message: 'busy' } } } : COUNT(9)));
    let calls = 0;
    const limiter: Limiter = (task) => {
      calls++;
      return task();
    };
    const { client, clock } = connect(server.baseUrl, { limiter });
    const response = await client.post('/events/aggregate', { filter: { source: 'SAP' } });
    expect(response.attempts).toBe(3);
    expect(server.requests.map((r) => r.body)).toEqual(Array.from({ length: 3 }, () => '{"filter":{"source":"SAP"}}'));
    expect(clock.sleeps).toEqual([250, 500]);
    expect(client.stats).toEqual({ requests: 3, retries: 2, throttled: 0, answers: { '5xx': 2, '2xx': 1 }, responseBytes: expect.any(Number) });
    expect(calls).toBe(3);
  });

  it('a 400 of the platform is an HttpStatusError naming POST, the path and the platform message, not retried', async () => {
    const sim = await simulator();
    const { client } = connect(sim.baseUrl);
    const error = await rejection(client.post('/events/aggregate', { filter: { colour: 'red' } }));
    expect(error).toBeInstanceOf(HttpStatusError);
    expect(error).toMatchObject({ status: 400, method: 'POST', attempts: 1, path: '/api/v1/projects/demo/events/aggregate' });
    expect((error as Error).message).toContain("Unrecognized property 'filter.colour'");
    expect((error as Error).message).toContain('POST /api/v1/projects/demo/events/aggregate');
    expect(sim.stats().requests).toBe(1);
  });

  it('a refused key is an AuthError after one request', async () => {
    const sim = await simulator();
    const { client } = connect(sim.baseUrl, {}, 'aggregate-wrong-key-0002');
    const error = await rejection(client.aggregateCount('events'));
    expect(error).toBeInstanceOf(AuthError);
    expect(error).toMatchObject({ code: 'E_AUTH', method: 'POST', attempts: 1 });
    expect(sim.stats().requests).toBe(1);
  });

  it('OAuth: a 401 on an expired token renews it once and sends the POST again, body and all', async () => {
    const simClock = createFakeClock();
    const sim = await simulator({ clock: simClock, faults: { tokenTtlSeconds: 600 } });
    const source = sourceSchema.parse({
      baseUrl: sim.baseUrl,
      auth: { type: 'oauth-client-credentials', tokenUrl: sim.tokenUrl, clientId: CLIENT.id, clientSecret: new Secret(CLIENT.secret) },
    });
    const client = createPlatformClient(source, { clock: createFakeClock() });
    cleanup.push(() => client.close());
    expect(await client.aggregateCount('events')).toBe(2000);
    simClock.advance(600_000);
    const filter = { type: 'alarm' };
    const count = await client.aggregateCount('events', filter);
    expect(sim.stats().byRoute).toEqual({ 'POST /oauth2/token': 2, 'POST /events/aggregate': 3 });
    expect(sim.stats().byStatus['401']).toBe(1);
    const sent = sim.requests().filter((r) => r.route === 'POST /events/aggregate').map((r) => [r.status, r.body]);
    expect(sent.slice(1)).toEqual([
      [401, undefined],
      [200, { aggregate: 'count', filter }],
    ]);
    expect(count).toBe(indexes(2000).filter((i) => sim.dataset.events.matches(i, filter)).length);
  });
});

describe('aggregateCount', () => {
  it('counts what the simulator holds: every item without a filter, the matching ones with one', async () => {
    const sim = await simulator();
    const { client } = connect(sim.baseUrl);
    expect(await client.aggregateCount('events')).toBe(2000);
    expect(await client.aggregateCount('assets')).toBe(300);
    const filter = { type: 'failure', startTime: { min: Date.UTC(2021, 0, 1) } };
    const expected = indexes(2000).filter((i) =>
      sim.dataset.events.matches(i, { type: 'failure', minStartTime: Date.UTC(2021, 0, 1) }),
    ).length;
    expect(expected).toBeGreaterThan(0);
    expect(await client.aggregateCount('events', filter)).toBe(expected);
    expect(sim.requests().map((r) => [r.route, r.body])).toEqual([
      ['POST /events/aggregate', { aggregate: 'count', filter: {} }],
      ['POST /assets/aggregate', { aggregate: 'count', filter: {} }],
      ['POST /events/aggregate', { aggregate: 'count', filter }],
    ]);
  });

  it.each([
    ['no items', { count: 5 }],
    ['empty items', { items: [] }],
    ['a count that is text', { items: [{ count: '5' }] }],
    ['a negative count', { items: [{ count: -1 }] }],
    ['a fractional count', { items: [{ count: 1.5 }] }],
    ['null', null],
  ])('an answer with %s is a BadResponseError naming the request and what came', async (_what, body) => {
    const server = await scripted(() => ({ body: body === null ? 'null' : body }));
    const { client } = connect(server.baseUrl);
    const error = await rejection(client.aggregateCount('events'));
    expect(error).toBeInstanceOf(BadResponseError);
    expect(error).toMatchObject({ code: 'E_BAD_RESPONSE', method: 'POST', requestId: 'scripted-1', retryable: false });
    const message = (error as Error).message;
    expect(message).toContain('{"items":[{"count":N}]}');
    expect(message).toContain(`got ${JSON.stringify(body)}`);
    expect(message).toContain('POST /api/v1/projects/scripted/events/aggregate');
    expect(server.requests).toHaveLength(1);
  });

  it('parseAggregateCount cuts a long answer short in the message', () => {
    const body = { items: [{ total: 'x'.repeat(500) }] };
    const response = { body, bytes: Buffer.alloc(0), path: '/p/events/aggregate', requestId: 'r-1', attempts: 1 };
    expect(() => parseAggregateCount(response)).toThrow(
      /got \{"items":\[\{"total":"x+\.\.\. \(POST \/p\/events\/aggregate, request id r-1/,
    );
  });
});
