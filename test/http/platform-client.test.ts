import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { deflateSync, gzipSync } from 'node:zlib';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { Secret } from '../../src/util/secret.js';
import { StaticAuth } from '../../src/http/auth/static-auth.js';
import { AdaptiveLimiter } from '../../src/http/adaptive-limiter.js';
import {
  AbortedError,
  AuthError,
  BadResponseError,
  HttpStatusError,
  InsecureTransportError,
  InvalidJsonError,
  NetworkError,
  TimeoutError,
} from '../../src/http/errors.js';
import { type Limiter, PlatformClient, type PlatformClientOptions } from '../../src/http/platform-client.js';
import { assertSecureTransport, isLoopback } from '../../src/http/transport.js';
import {
  type FaultOptionsInput,
  type Simulator,
  type SimulatorStats,
  startSimulator,
} from '../../src/simulator/index.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';
import type { Page } from '../support/http.js';
import { idOf, indexes } from '../support/items.js';
import { type ScriptedResponse, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';
import { EventClock } from './throttle-model.js';

const API_KEY = 'client-test-api-key-7f3a9c2e51';
const WRONG_KEY = 'client-wrong-api-key-0b8d4e6f22';
/** Every credential this file hands to a client: none may appear in any error. */
const CREDENTIALS = [API_KEY, WRONG_KEY];
const EVENTS = 200;
const LIMIT = [['limit', '10']] as const;

/** Delay of retry k with random 0.5 and the default policy: floor(0.5 * min(30000, 500 * 2^(k-1))). */
function halfBackoff(k: number): number {
  return Math.floor(0.5 * Math.min(30_000, 500 * 2 ** (k - 1)));
}

const cleanup: (() => Promise<void>)[] = [];
/** Registers a closer: by default run after each test; concurrent tests pass their own. */
type Defer = (close: () => Promise<void>) => void;
const afterThisTest: Defer = (close) => {
  cleanup.push(close);
};

afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((close) => close()));
});

async function simulator(faults: FaultOptionsInput = {}, seed = 1): Promise<Simulator> {
  const sim = await startSimulator({ events: EVENTS, assets: 10, seed, apiKeys: [API_KEY], faults });
  cleanup.push(() => sim.close());
  return sim;
}

async function scripted(
  respond: (request: { url: string }, index: number) => ScriptedResponse | Promise<ScriptedResponse>,
  defer = afterThisTest,
): Promise<ScriptedServer> {
  const server = await startScriptedServer(respond);
  defer(() => server.close());
  return server;
}

interface RawServer {
  baseUrl: string;
  requests: IncomingHttpHeaders[];
}

/** A loopback server answering raw bytes (the scripted server only sends text). */
type RawHandler = (res: ServerResponse, index: number, req: IncomingMessage) => void;

async function rawServer(handle: RawHandler, defer = afterThisTest): Promise<RawServer> {
  const requests: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    requests.push(req.headers);
    req.resume();
    req.on('end', () => handle(res, requests.length - 1, req));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  defer(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { baseUrl: `http://127.0.0.1:${port}/api/v1/projects/raw`, requests };
}

function sendBytes(res: ServerResponse, bytes: Buffer, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(bytes.length), ...headers });
  res.end(bytes);
}

interface Harness {
  client: PlatformClient;
  clock: FakeClock;
}

function connect(
  baseUrl: string,
  options: Partial<PlatformClientOptions> = {},
  key = API_KEY,
  defer = afterThisTest,
): Harness {
  const clock = createFakeClock();
  const client = new PlatformClient({
    baseUrl,
    auth: StaticAuth.apiKey(new Secret(key)),
    clock,
    random: () => 0.5,
    ...options,
  });
  defer(() => client.close());
  return { client, clock };
}

/** Asserts that no credential of this file shows in the error's message, JSON or inspected form. */
function expectNoCredential(error: unknown): void {
  const views = [
    error instanceof Error ? error.message : String(error),
    JSON.stringify(error),
    inspect(error, { depth: 6 }),
  ];
  for (const view of views) for (const key of CREDENTIALS) expect(view).not.toContain(key);
}

/** Awaits a rejection of the given class and checks it carries no credential. */
async function failure<E extends Error>(promise: Promise<unknown>, type: new (...args: never[]) => E): Promise<E> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  if (!(caught instanceof type)) {
    throw new Error(`expected a ${type.name}, got ${caught === undefined ? 'success' : inspect(caught)}`);
  }
  expectNoCredential(caught);
  return caught;
}

/** Follows a chain of `/events` with the client, returning every id in order. */
async function drainIds(client: PlatformClient): Promise<number[]> {
  const ids: number[] = [];
  let cursor: string | undefined;
  do {
    const response = await client.get('/events', cursor === undefined ? LIMIT : [...LIMIT, ['cursor', cursor]]);
    const page = response.body as Page;
    ids.push(...page.items.map(idOf));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return ids;
}

function allEventIds(sim: Simulator): number[] {
  return indexes(sim.dataset.events.count).map((i) => sim.dataset.events.idOf(i));
}

/** Lets the event loop run until `done()` holds (the simulator counts a response when it closes). */
async function until(done: () => boolean): Promise<void> {
  for (let turn = 0; turn < 10_000; turn++) {
    if (done()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('gave up waiting');
}

async function settled(sim: Simulator): Promise<SimulatorStats> {
  await until(() => {
    const stats = sim.stats();
    return Object.values(stats.byStatus).reduce((sum, n) => sum + n, 0) === stats.requests;
  });
  return sim.stats();
}

/** Each sleep is the next backoff step of its request, starting again at step 1 for a new request. */
function expectBackoffSteps(sleeps: readonly number[]): void {
  let step = 0;
  for (const delay of sleeps) {
    step = delay === halfBackoff(1) ? 1 : step + 1;
    expect(delay, `retry step ${step}`).toBe(halfBackoff(step));
    expect(delay).toBeGreaterThanOrEqual(0);
    expect(delay).toBeLessThan(Math.min(30_000, 500 * 2 ** (step - 1)));
  }
}

function errorBody(status: number, message: string): ScriptedResponse {
  return { status, body: { error: { code: status, message } } };
}

const OK_PAGE: ScriptedResponse = { body: { items: [{ id: 1 }] } };

describe('retryable statuses are retried with backoff', () => {
  const cases: [number, keyof FaultOptionsInput][] = [
    [429, 'rate429'],
    [500, 'rate500'],
    [502, 'rate502'],
    [503, 'rate503'],
    [504, 'rate504'],
  ];

  it.each(cases)('HTTP %i twice, then 200: resolves on attempt 3 after sleeps of 250 and 500 ms', async (status) => {
    const server = await scripted((_req, i) => (i < 2 ? errorBody(status, `transient ${status}`) : OK_PAGE));
    const { client, clock } = connect(server.baseUrl);
    const response = await client.get('/events', LIMIT);
    expect(response.body).toEqual({ items: [{ id: 1 }] });
    expect(response.attempts).toBe(3);
    expect(response.requestId).toBe('scripted-3');
    expect(server.requests).toHaveLength(3);
    expect(client.stats).toEqual({
      requests: 3,
      retries: 2,
      throttled: status === 429 ? 2 : 0,
      answers: { [status === 429 ? '4xx' : '5xx']: 2, '2xx': 1 },
      // Every answer's body counts, the refused ones too.
      responseBytes: 2 * JSON.stringify(errorBody(status, `transient ${status}`).body).length + JSON.stringify(OK_PAGE.body).length,
    });
    expect(clock.sleeps).toEqual([halfBackoff(1), halfBackoff(2)]);
  });

  it.each(cases)('simulator %i at rate 0.5: a 20-page chain drains completely, one backoff sleep per retry', async (status, fault) => {
    const sim = await simulator({ [fault]: 0.5 });
    const { client, clock } = connect(sim.baseUrl, { retry: { maxAttempts: 20 } });
    expect(await drainIds(client)).toEqual(allEventIds(sim));
    const served = await settled(sim);
    expect(client.stats.retries).toBeGreaterThan(0);
    expect(served.byStatus[String(status)]).toBe(client.stats.retries);
    expect(client.stats.requests).toBe(served.requests);
    expect(client.stats.requests).toBe(20 + client.stats.retries);
    expect(clock.sleeps).toHaveLength(client.stats.retries);
    expectBackoffSteps(clock.sleeps);
  });
});

describe('non-retryable statuses fail at once', () => {
  it.each([400, 403, 404, 405, 409, 422])('HTTP %i rejects after 1 attempt with the platform message and request id', async (status) => {
    const server = await scripted(() => errorBody(status, `Nope: reason ${status}`));
    const { client, clock } = connect(server.baseUrl);
    const error = await failure(client.get('/events', [['limit', '10'], ['type', 'alarm']]), HttpStatusError);
    const path = '/api/v1/projects/scripted/events?limit=10&type=alarm';
    expect(error).toMatchObject({
      code: 'E_HTTP_STATUS',
      status,
      attempts: 1,
      retryable: false,
      method: 'GET',
      path,
      requestId: 'scripted-1',
      platformMessage: `Nope: reason ${status}`,
    });
    expect(error.message).toContain('GET');
    expect(error.message).toContain(path);
    expect(error.message).toContain('scripted-1');
    expect(error.message).toContain(`Nope: reason ${status}`);
    expect(server.requests).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
    expect(client.stats).toEqual({ requests: 1, retries: 0, throttled: 0, answers: { '4xx': 1 }, responseBytes: expect.any(Number) });
  });

  it('a wrong api key against the simulator gives AuthError E_AUTH after exactly one request', async () => {
    const sim = await simulator();
    const { client, clock } = connect(sim.baseUrl, {}, WRONG_KEY);
    const error = await failure(client.get('/events', LIMIT), AuthError);
    expect(error).toMatchObject({ code: 'E_AUTH', attempts: 1, retryable: false, method: 'GET' });
    expect(error.requestId).toEqual(expect.any(String));
    expect(error.message).toContain('401');
    expect(error.message).toContain(error.requestId);
    expect(error.message).toContain('/events?limit=10');
    expect((await settled(sim)).requests).toBe(1);
    expect(client.stats.requests).toBe(1);
    expect(clock.sleeps).toEqual([]);
  });
});

describe('Retry-After', () => {
  it('simulator 429 with Retry-After: 3 (rate 0.5): every retry sleeps exactly 3000 ms', async () => {
    const sim = await simulator({ rate429RetryAfter: 0.5, retryAfterSeconds: 3 });
    const { client, clock } = connect(sim.baseUrl, { retry: { maxAttempts: 20 } });
    expect(await drainIds(client)).toEqual(allEventIds(sim));
    const served = await settled(sim);
    expect(served.byStatus['429']).toBeGreaterThan(0);
    expect(clock.sleeps).toEqual(Array.from({ length: served.byStatus['429'] ?? 0 }, () => 3000));
  });

  it('scripted 429 with retry-after: 3 then 200: one sleep of 3000 ms', async () => {
    const server = await scripted((_req, i) =>
      i === 0 ? { ...errorBody(429, 'slow down'), headers: { 'retry-after': '3' } } : OK_PAGE,
    );
    const { client, clock } = connect(server.baseUrl);
    expect((await client.get('/events', LIMIT)).attempts).toBe(2);
    expect(clock.sleeps).toEqual([3000]);
  });

  it('an HTTP-date Retry-After 4 s after the clock sleeps 4000 ms', async () => {
    const clock = createFakeClock();
    const when = new Date(clock.now() + 4000).toUTCString();
    const server = await scripted((_req, i) =>
      i === 0 ? { ...errorBody(503, 'maintenance'), headers: { 'retry-after': when } } : OK_PAGE,
    );
    const { client } = connect(server.baseUrl, { clock });
    expect((await client.get('/events', LIMIT)).attempts).toBe(2);
    expect(clock.sleeps).toEqual([4000]);
  });

  it('a Retry-After longer than maxRetryAfterMs is cut to it', async () => {
    const server = await scripted((_req, i) =>
      i === 0 ? { ...errorBody(429, 'slow down'), headers: { 'retry-after': '86400' } } : OK_PAGE,
    );
    const { client, clock } = connect(server.baseUrl, { retry: { maxRetryAfterMs: 5000 } });
    await client.get('/events', LIMIT);
    expect(clock.sleeps).toEqual([5000]);
  });
});

describe('attempts exhausted', () => {
  it('rate503 1 with maxAttempts 4: HttpStatusError 503 after 4 attempts, 4 requests, 3 sleeps', async () => {
    const sim = await simulator({ rate503: 1 });
    const { client, clock } = connect(sim.baseUrl, { retry: { maxAttempts: 4 } });
    const error = await failure(client.get('/events', LIMIT), HttpStatusError);
    expect(error).toMatchObject({ code: 'E_HTTP_STATUS', status: 503, attempts: 4, retryable: true });
    expect(error.message).toContain('after 4 attempts');
    expect(error.message).toContain(error.requestId);
    const served = await settled(sim);
    expect(served.requests).toBe(4);
    expect(served.byStatus['503']).toBe(4);
    expect(clock.sleeps).toEqual([halfBackoff(1), halfBackoff(2), halfBackoff(3)]);
    expect(client.stats).toEqual({ requests: 4, retries: 3, throttled: 0, answers: { '5xx': 4 }, responseBytes: expect.any(Number) });
  });
});

describe('connection resets', () => {
  it('simulator resetRate 0.5: resets are retried and the chain drains completely', async () => {
    const sim = await simulator({ resetRate: 0.5 });
    const { client, clock } = connect(sim.baseUrl, { retry: { maxAttempts: 20 } });
    expect(await drainIds(client)).toEqual(allEventIds(sim));
    const served = await settled(sim);
    expect(served.faults.reset).toBeGreaterThan(0);
    expect(client.stats.retries).toBe(served.faults.reset);
    expectBackoffSteps(clock.sleeps);
  });

  it('scripted reset after 5 body bytes, then a full answer: succeeds on attempt 2', async () => {
    const server = await scripted((_req, i) => (i === 0 ? { ...OK_PAGE, resetAfterBytes: 5 } : OK_PAGE));
    const { client } = connect(server.baseUrl);
    const response = await client.get('/events', LIMIT);
    expect(response.body).toEqual({ items: [{ id: 1 }] });
    expect(response.attempts).toBe(2);
    expect(server.requests).toHaveLength(2);
    expect(client.stats.answers, 'a body cut short is no answer').toEqual({ 'none': 1, '2xx': 1 });
  });

  it('resetRate 1 with maxAttempts 3: NetworkError E_NETWORK after 3 attempts', async () => {
    const sim = await simulator({ resetRate: 1 });
    const { client, clock } = connect(sim.baseUrl, { retry: { maxAttempts: 3 } });
    const error = await failure(client.get('/events', LIMIT), NetworkError);
    expect(error).toMatchObject({ code: 'E_NETWORK', attempts: 3, retryable: true, method: 'GET' });
    expect(error.message).toContain('/api/v1/projects/demo/events?limit=10');
    expect((await settled(sim)).requests).toBe(3);
    expect(clock.sleeps).toHaveLength(2);
    expect(client.stats.answers).toEqual({ none: 3 });
  });
});

describe('bodies that are not JSON', () => {
  it('simulator truncateRate 0.5: truncated bodies are retried and the chain drains completely', async () => {
    const sim = await simulator({ truncateRate: 0.5 });
    const { client } = connect(sim.baseUrl, { retry: { maxAttempts: 20 } });
    expect(await drainIds(client)).toEqual(allEventIds(sim));
    const served = await settled(sim);
    expect(served.faults.truncate).toBeGreaterThan(0);
    expect(client.stats.retries).toBe(served.faults.truncate);
  });

  it('malformedRate 1 with maxAttempts 2: InvalidJsonError saying the body is not JSON', async () => {
    const sim = await simulator({ malformedRate: 1 });
    const { client } = connect(sim.baseUrl, { retry: { maxAttempts: 2 } });
    const error = await failure(client.get('/events', LIMIT), InvalidJsonError);
    expect(error).toMatchObject({ code: 'E_INVALID_JSON', attempts: 2, retryable: true });
    expect(error.message).toContain('not JSON');
    expect(error.message).toContain('/events?limit=10');
    expect(error.message).toContain(error.requestId);
    expect((await settled(sim)).requests).toBe(2);
  });

  it('an HTML 200 page: InvalidJsonError after maxAttempts attempts, with a preview of the body', async () => {
    const server = await scripted(() => ({
      headers: { 'content-type': 'text/html' },
      body: '<html><head><title>Sign in</title></head><body>portal</body></html>',
    }));
    const { client } = connect(server.baseUrl, { retry: { maxAttempts: 3 } });
    const error = await failure(client.get('/events', LIMIT), InvalidJsonError);
    expect(error).toMatchObject({ code: 'E_INVALID_JSON', attempts: 3, requestId: 'scripted-3' });
    expect(error.message).toContain('not JSON');
    expect(error.message).toContain('<html>');
    expect(server.requests).toHaveLength(3);
  });

  it('an empty 200 body: InvalidJsonError after maxAttempts attempts, saying it is empty', async () => {
    const server = await scripted(() => ({ body: '' }));
    const { client } = connect(server.baseUrl, { retry: { maxAttempts: 3 } });
    const error = await failure(client.get('/events', LIMIT), InvalidJsonError);
    expect(error).toMatchObject({ code: 'E_INVALID_JSON', attempts: 3 });
    expect(error.message).toContain('empty');
    expect(server.requests).toHaveLength(3);
  });
});

describe('HTML error pages from a load balancer', () => {
  it('simulator 502 HTML pages at rate 0.5 are retried and the chain drains', async () => {
    const sim = await simulator({ rate502: 0.5, htmlErrors: true });
    const { client } = connect(sim.baseUrl, { retry: { maxAttempts: 20 } });
    expect(await drainIds(client)).toEqual(allEventIds(sim));
    const served = await settled(sim);
    expect(served.byStatus['502']).toBeGreaterThan(0);
    expect(client.stats.retries).toBe(served.byStatus['502']);
  });

  it('rate 1, maxAttempts 2: HttpStatusError 502 whose platformMessage names the HTML page title', async () => {
    const sim = await simulator({ rate502: 1, htmlErrors: true });
    const { client } = connect(sim.baseUrl, { retry: { maxAttempts: 2 } });
    const error = await failure(client.get('/events', LIMIT), HttpStatusError);
    expect(error).toMatchObject({ status: 502, attempts: 2 });
    expect(error.platformMessage).toContain('502 Bad Gateway');
    expect(error.message).toContain('502 Bad Gateway');
  });
});

describe('compression', () => {
  const page = { items: [{ id: 1, name: 'Pumpe Ö 系统A 🚀' }], nextCursor: 'c1' };

  it('every request offers gzip in accept-encoding', async () => {
    const server = await scripted((_req, i) => (i === 0 ? errorBody(503, 'again') : OK_PAGE));
    const { client } = connect(server.baseUrl);
    await client.get('/events', LIMIT);
    expect(server.requests).toHaveLength(2);
    for (const request of server.requests) expect(request.headers['accept-encoding']).toMatch(/\bgzip\b/);
  });

  it('a gzip-compressed body is decoded', async () => {
    const server = await rawServer((res) =>
      sendBytes(res, gzipSync(JSON.stringify(page)), { 'content-encoding': 'gzip' }),
    );
    const { client } = connect(server.baseUrl);
    expect((await client.get('/events', LIMIT)).body).toEqual(page);
  });

  it('a deflate-compressed body is decoded', async () => {
    const server = await rawServer((res) =>
      sendBytes(res, deflateSync(JSON.stringify(page)), { 'content-encoding': 'deflate' }),
    );
    const { client } = connect(server.baseUrl);
    expect((await client.get('/events', LIMIT)).body).toEqual(page);
  });

  it('a gzip body of several members is decoded whole (its trailer gives the last member size only)', async () => {
    const text = JSON.stringify({ ...page, padding: 'p'.repeat(200_000) });
    const cut = 100_000;
    const members = Buffer.concat([gzipSync(text.slice(0, cut)), gzipSync(text.slice(cut))]);
    const server = await rawServer((res) => sendBytes(res, members, { 'content-encoding': 'gzip' }));
    const { client } = connect(server.baseUrl);
    expect((await client.get('/events', LIMIT)).body).toEqual(JSON.parse(text));
  });

  it('a gzip trailer that states a wrong size is refused as a broken body, retryable', async () => {
    const lying = Buffer.from(gzipSync(JSON.stringify(page)));
    lying.writeUInt32LE(0xffff_fff0, lying.length - 4);
    const server = await rawServer((res) => sendBytes(res, lying, { 'content-encoding': 'gzip' }));
    const { client } = connect(server.baseUrl, { retry: { maxAttempts: 2 } });
    const error = await failure(client.get('/events', LIMIT), NetworkError);
    expect(error).toMatchObject({ code: 'E_NETWORK', retryable: true, attempts: 2 });
  });

  it('a gzip stream cut short (content-length matching the cut bytes) is a retryable NetworkError', async () => {
    const whole = gzipSync(JSON.stringify(page));
    const server = await rawServer((res) =>
      sendBytes(res, whole.subarray(0, Math.floor(whole.length / 2)), { 'content-encoding': 'gzip' }),
    );
    const { client } = connect(server.baseUrl, { retry: { maxAttempts: 2 } });
    const error = await failure(client.get('/events', LIMIT), NetworkError);
    expect(error).toMatchObject({ code: 'E_NETWORK', retryable: true, attempts: 2 });
    expect(server.requests).toHaveLength(2);
  });

  it('a gzip stream cut short once, then whole: succeeds on attempt 2', async () => {
    const whole = gzipSync(JSON.stringify(page));
    const server = await rawServer((res, i) =>
      sendBytes(res, i === 0 ? whole.subarray(0, 10) : whole, { 'content-encoding': 'gzip' }),
    );
    const { client } = connect(server.baseUrl);
    const response = await client.get('/events', LIMIT);
    expect(response).toMatchObject({ body: page, attempts: 2 });
  });

  it('a gzip body whose connection resets mid-body is a retryable NetworkError', async () => {
    const whole = gzipSync(JSON.stringify(page));
    const server = await rawServer((res) => {
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': String(whole.length) });
      res.write(whole.subarray(0, 8), () => res.destroy());
    });
    const { client } = connect(server.baseUrl, { retry: { maxAttempts: 2 } });
    const error = await failure(client.get('/events', LIMIT), NetworkError);
    expect(error).toMatchObject({ code: 'E_NETWORK', retryable: true, attempts: 2 });
  });

  it('bytes that are not gzip at all under content-encoding: gzip are a retryable NetworkError', async () => {
    const server = await rawServer((res) => sendBytes(res, Buffer.from('{"items":[]}'), { 'content-encoding': 'gzip' }));
    const { client } = connect(server.baseUrl, { retry: { maxAttempts: 2 } });
    const error = await failure(client.get('/events', LIMIT), NetworkError);
    expect(error).toMatchObject({ code: 'E_NETWORK', retryable: true, attempts: 2 });
  });

  it('an unsupported content-encoding is a BadResponseError, not retried', async () => {
    const server = await rawServer((res) => sendBytes(res, Buffer.from('xx'), { 'content-encoding': 'br' }));
    const { client } = connect(server.baseUrl);
    const error = await failure(client.get('/events', LIMIT), BadResponseError);
    expect(error).toMatchObject({ code: 'E_BAD_RESPONSE', attempts: 1 });
    expect(error.message).toContain("content-encoding 'br'");
    expect(server.requests).toHaveLength(1);
  });
});

describe('request headers', () => {
  it('every request, retries included, carries accept: application/json, the user agent and the api key', async () => {
    const server = await scripted((_req, i) => (i < 2 ? errorBody(500, 'oops') : OK_PAGE));
    const { client } = connect(server.baseUrl);
    await client.get('/events', LIMIT);
    expect(server.requests).toHaveLength(3);
    for (const request of server.requests) {
      expect(request.method).toBe('GET');
      expect(request.headers.accept).toBe('application/json');
      expect(request.headers['user-agent']).toMatch(/^bulk-extract\/\d+\.\d+\.\d+/);
      expect(request.headers['api-key']).toBe(API_KEY);
      expect(request.headers.authorization).toBeUndefined();
    }
  });

  it('params are sent in the given order, repeated keys kept, and values encoded', async () => {
    const server = await scripted(() => OK_PAGE);
    const { client } = connect(server.baseUrl);
    const response = await client.get('/events', [
      ['limit', '10'],
      ['partition', '2/3'],
      ['source', '系统A & co'],
    ]);
    const url = new URL(server.requests[0]?.url ?? '', server.origin);
    expect(url.pathname).toBe('/api/v1/projects/scripted/events');
    expect([...url.searchParams]).toEqual([
      ['limit', '10'],
      ['partition', '2/3'],
      ['source', '系统A & co'],
    ]);
    expect(response.path).toBe(server.requests[0]?.url);
  });
});

// undici's fast timers tick about every 500 ms, so a 100 ms timeout fires within a second: these
// two run side by side, each closing its own server and client.
describe.concurrent('timeouts', () => {
  it('a server that never answers: TimeoutError E_TIMEOUT after 2 attempts (headersTimeoutMs 100)', async ({ onTestFinished }) => {
    const defer: Defer = (close) => onTestFinished(close);
    const server = await scripted(() => ({ hold: true }), defer);
    const { client, clock } = connect(server.baseUrl, {
      transport: { headersTimeoutMs: 100 },
      retry: { maxAttempts: 2 },
    }, API_KEY, defer);
    const error = await failure(client.get('/events', LIMIT), TimeoutError);
    expect(error).toMatchObject({ code: 'E_TIMEOUT', attempts: 2, retryable: true, requestId: undefined });
    expect(error.message).toContain('/events?limit=10');
    expect(server.requests).toHaveLength(2);
    expect(clock.sleeps).toHaveLength(1);
  });

  it('a body that stalls mid-way: TimeoutError E_TIMEOUT (bodyTimeoutMs 100)', async ({ onTestFinished }) => {
    const defer: Defer = (close) => onTestFinished(close);
    const server = await rawServer((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"items":[');
    }, defer);
    const options = { transport: { bodyTimeoutMs: 100 }, retry: { maxAttempts: 1 } };
    const { client } = connect(server.baseUrl, options, API_KEY, defer);
    const error = await failure(client.get('/events', LIMIT), TimeoutError);
    expect(error).toMatchObject({ code: 'E_TIMEOUT', attempts: 1 });
    expect(server.requests).toHaveLength(1);
  });
});

describe('redirects', () => {
  it.each([301, 302, 307, 308])('HTTP %i is a BadResponseError naming the redirect, not followed', async (status) => {
    const server = await scripted((request) =>
      request.url.startsWith('/elsewhere') ? OK_PAGE : { status, headers: { location: '/elsewhere/events' }, body: '' },
    );
    const { client } = connect(server.baseUrl);
    const error = await failure(client.get('/events', LIMIT), BadResponseError);
    expect(error).toMatchObject({ code: 'E_BAD_RESPONSE', attempts: 1, requestId: 'scripted-1' });
    expect(error.message).toMatch(/redirect/i);
    expect(error.message).toContain('/elsewhere/events');
    expect(server.requests).toHaveLength(1);
  });
});

describe('shared limiter', () => {
  function semaphore(max: number): { limiter: Limiter; calls: () => number; peak: () => number } {
    let active = 0;
    let calls = 0;
    let peak = 0;
    const waiting: (() => void)[] = [];
    const limiter: Limiter = async <T>(task: () => Promise<T>): Promise<T> => {
      calls++;
      while (active >= max) await new Promise<void>((resolve) => waiting.push(resolve));
      active++;
      peak = Math.max(peak, active);
      try {
        return await task();
      } finally {
        active--;
        waiting.shift()?.();
      }
    };
    return { limiter, calls: () => calls, peak: () => peak };
  }

  it('20 concurrent get() calls under a limiter of 3 never have more than 3 requests in flight', async () => {
    const sim = await simulator();
    const gate = semaphore(3);
    const { client } = connect(sim.baseUrl, { limiter: gate.limiter });
    const responses = await Promise.all(
      indexes(20).map((i) => client.get('/events', [['limit', String(i + 1)]])),
    );
    responses.forEach((response, i) => expect((response.body as Page).items).toHaveLength(i + 1));
    expect(gate.peak()).toBe(3);
    expect(gate.calls()).toBe(20);
    expect((await settled(sim)).maxInFlight).toBeLessThanOrEqual(3);
  });

  it('every attempt, retries included, passes through the limiter', async () => {
    const sim = await simulator({ rate503: 0.4 });
    const gate = semaphore(3);
    const { client } = connect(sim.baseUrl, { limiter: gate.limiter, retry: { maxAttempts: 20 } });
    await Promise.all(indexes(20).map((i) => client.get('/events', [['limit', String(i + 1)]])));
    const served = await settled(sim);
    expect(client.stats.retries).toBeGreaterThan(0);
    expect(gate.calls()).toBe(client.stats.requests);
    expect(gate.calls()).toBe(served.requests);
    expect(gate.peak()).toBeLessThanOrEqual(3);
    expect(served.maxInFlight).toBeLessThanOrEqual(3);
  });
});

describe('adaptive limiter', () => {
  const RATE_429 = "Project exceeded maximum number='20' of requests per second. Please try again later.";

  it('hears every answer: a 429 counts in stats.throttled and paces the next start (retry included)', async () => {
    const server = await scripted((_req, i) => (i === 0 ? errorBody(429, RATE_429) : OK_PAGE));
    const clock = createFakeClock();
    const limiter = new AdaptiveLimiter({ maxConcurrency: 4, clock });
    const { client } = connect(server.baseUrl, { clock, limiter });
    await client.get('/events', LIMIT);
    expect(client.stats).toEqual({ requests: 2, retries: 1, throttled: 1, answers: { '4xx': 1, '2xx': 1 }, responseBytes: expect.any(Number) });
    // Nothing was granted in the last second: the pace falls to its floor of 0.5/s, so the retry
    // waits the backoff (250 ms) and then the rest of the 2 s slot.
    expect(client.limiterState()).toMatchObject({ concurrency: 4, throttled: 1, decreases: 1 });
    // 0.5/s, then 2% more for the success of the retry.
    expect(client.limiterState()?.ratePerSecond).toBeCloseTo(0.51, 5);
    expect(clock.sleeps).toEqual([halfBackoff(1), 2000 - halfBackoff(1)]);
  });

  it('an abort while waiting for a pacing slot rejects with AbortedError and sends nothing', async () => {
    const server = await scripted(() => OK_PAGE);
    const clock = new EventClock();
    const limiter = new AdaptiveLimiter({ maxConcurrency: 4, maxRequestsPerSecond: 1, clock });
    const { client } = connect(server.baseUrl, { clock, limiter });
    await client.get('/events', LIMIT);
    const stop = new AbortController();
    const waiting = client.get('/events', LIMIT, stop.signal);
    await clock.run(0);
    stop.abort();
    const error = await failure(waiting, AbortedError);
    expect(error).toMatchObject({ code: 'E_ABORTED', method: 'GET' });
    expect(error.message).toContain('Stopped while waiting for a request slot');
    expect(server.requests).toHaveLength(1);
    expect(client.stats.requests).toBe(2);
  });

  it('a plain function limiter still works and learns nothing: no state to report', () => {
    const { client } = connect('http://127.0.0.1:9/api/v1/projects/p', { limiter: (task) => task() });
    expect(client.limiterState()).toBeUndefined();
  });
});

describe('plain http:// only to this machine', () => {
  function build(baseUrl: string, allowInsecureHttp?: boolean): PlatformClient {
    return new PlatformClient({
      baseUrl,
      auth: StaticAuth.apiKey(new Secret(API_KEY)),
      clock: createFakeClock(),
      ...(allowInsecureHttp === undefined ? {} : { allowInsecureHttp }),
    });
  }

  it('http:// to another host is refused at construction, naming the host and allowInsecureHttp', () => {
    let caught: unknown;
    try {
      build('http://platform.example.com/api/v1/projects/p');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InsecureTransportError);
    const error = caught as InsecureTransportError;
    expect(error.code).toBe('E_INSECURE_TRANSPORT');
    expect(error.message).toContain('platform.example.com');
    expect(error.message).toContain('allowInsecureHttp');
    expectNoCredential(error);
  });

  it('http:// to another host with allowInsecureHttp: true constructs (no request sent)', async () => {
    const client = build('http://platform.example.com/api/v1/projects/p', true);
    expect(client.baseUrl.host).toBe('platform.example.com');
    await client.close();
  });

  it.each([
    'http://127.0.0.1:8080/api/v1/projects/p',
    'http://localhost:8080/api/v1/projects/p',
    'http://[::1]:8080/api/v1/projects/p',
    'http://127.10.20.30/api/v1/projects/p',
    'https://platform.example.com/api/v1/projects/p',
    'https://platform.example.net/api/v1/projects/p',
  ])('%s is allowed without opting in', async (url) => {
    const client = build(url);
    expect(client.baseUrl.href).toBe(url);
    await client.close();
  });

  it.each([
    'http://10.0.0.1/api/v1/projects/p',
    'http://127.0.0.1.example.com/api/v1/projects/p',
    'http://localhost.example.com/api/v1/projects/p',
    'http://[::2]/api/v1/projects/p',
    'http://0.0.0.0/api/v1/projects/p',
  ])('%s is refused without opting in', (url) => {
    expect(() => assertSecureTransport(new URL(url), false, 'source.baseUrl')).toThrow(InsecureTransportError);
    expect(() => assertSecureTransport(new URL(url), true, 'source.baseUrl')).not.toThrow();
  });

  it.each([
    ['127.0.0.1', true],
    ['127.255.255.254', true],
    ['127.0.0.53', true],
    ['localhost', true],
    ['LocalHost', true],
    ['::1', true],
    ['[::1]', true],
    ['128.0.0.1', false],
    ['10.0.0.1', false],
    ['0.0.0.0', false],
    ['::', false],
    ['[::2]', false],
    ['localhost.example.com', false],
    ['127.0.0.1.example.com', false],
    ['my-localhost', false],
    ['platform.example.com', false],
  ] as const)('isLoopback(%j) is %s', (host, expected) => {
    expect(isLoopback(host)).toBe(expected);
  });
});

describe('login status', () => {
  it('with an api key the simulator knows: loggedIn true, with user, project, projectId and apiKeyId', async () => {
    const sim = await simulator();
    const { client } = connect(sim.baseUrl);
    const status = await client.loginStatus();
    expect(status).toEqual({
      user: expect.stringMatching(/\S/),
      loggedIn: true,
      project: sim.project,
      projectId: sim.projectId,
      apiKeyId: expect.any(Number),
    });
  });

  it('with a wrong key: loggedIn false, no apiKeyId', async () => {
    const sim = await simulator();
    const { client } = connect(sim.baseUrl, {}, WRONG_KEY);
    const status = await client.loginStatus();
    expect(status.loggedIn).toBe(false);
    expect(status).not.toHaveProperty('apiKeyId');
  });

  it('is asked at the cluster root, before /api/', async () => {
    const server = await scripted(() => ({ body: { data: { user: 'u', loggedIn: true, project: 'p', projectId: 7 } } }));
    const { client } = connect(`${server.origin}/gateway/api/v1/projects/p`);
    expect(await client.loginStatus()).toEqual({ user: 'u', loggedIn: true, project: 'p', projectId: 7 });
    expect(server.requests.map((r) => r.url)).toEqual(['/gateway/login/status']);
  });

  it('a /login/status answer without data is a BadResponseError naming the request path', async () => {
    const server = await scripted(() => ({ body: { something: 'else' } }));
    const { client } = connect(`${server.origin}/gateway/api/v1/projects/p`);
    const error = await failure(client.loginStatus(), BadResponseError);
    expect(error.requestId).toBe('scripted-1');
    expect(error.path).toBe('/gateway/login/status');
    expect(error.message).toContain('GET /gateway/login/status');
  });

  it('a /logout answer without data is a BadResponseError naming GET /logout', async () => {
    const server = await scripted(() => ({ body: [] }));
    const { client } = connect(server.baseUrl);
    const error = await failure(client.logout(), BadResponseError);
    expect(server.requests.map((r) => r.url)).toEqual(['/logout']);
    expect(error.path).toBe('/logout');
    expect(error.message).toContain('GET /logout');
  });
});

describe('errors and logs carry no credential', () => {
  it('retry warnings name method, path, request id and delay, and never the api key', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
    const server = await scripted((_req, i) => (i === 0 ? errorBody(503, 'busy') : OK_PAGE));
    const { client } = connect(server.baseUrl, { logger });
    await client.get('/events', LIMIT);
    const warnings = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((r) => r.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      method: 'GET',
      path: '/api/v1/projects/scripted/events?limit=10',
      requestId: 'scripted-1',
      attempt: 1,
      delayMs: halfBackoff(1),
    });
    for (const line of lines) expect(line).not.toContain(API_KEY);
  });

  it('an AuthError for a refused key shows neither key in message, JSON or inspection', async () => {
    const server = await scripted(() => errorBody(401, 'Unauthorized'));
    const { client } = connect(server.baseUrl, {}, WRONG_KEY);
    const error = await failure(client.get('/events', LIMIT), AuthError);
    expect(server.requests[0]?.headers['api-key']).toBe(WRONG_KEY);
    expect(JSON.stringify(error)).toContain('E_AUTH');
    expect(error.message).not.toContain(WRONG_KEY);
  });
});
