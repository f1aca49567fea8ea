import { getEventListeners } from 'node:events';
import type { ServerResponse } from 'node:http';
import { deflateSync, gzipSync } from 'node:zlib';
import pLimit from 'p-limit';
import { afterEach, describe, expect, it } from 'vitest';
import { sourceSchema } from '../../src/config/source-schema.js';
import { StaticAuth } from '../../src/http/auth/static-auth.js';
import { createPlatformClient } from '../../src/connect/index.js';
import { RequestError } from '../../src/http/errors.js';
import { PlatformClient, type PlatformClientOptions } from '../../src/http/platform-client.js';
import { Secret } from '../../src/util/secret.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';
import { type ScriptedResponse, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

const MiB = 1024 * 1024;
const LIMIT = [['limit', '10']] as const;

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

async function serve(respond: (index: number) => ScriptedResponse): Promise<ScriptedServer> {
  const server = await startScriptedServer((_request, index) => respond(index));
  cleanup.push(() => server.close());
  return server;
}

interface Harness {
  client: PlatformClient;
  clock: FakeClock;
}

function connect(baseUrl: string, options: Partial<PlatformClientOptions> = {}): Harness {
  const clock = createFakeClock();
  const client = new PlatformClient({
    baseUrl,
    auth: StaticAuth.apiKey(new Secret('transport-test-key-0001')),
    clock,
    random: () => 0.5,
    ...options,
  });
  cleanup.push(() => client.close());
  return { client, clock };
}

async function rejection(promise: Promise<unknown>): Promise<RequestError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RequestError) return error;
    throw error;
  }
  throw new Error('expected a RequestError');
}

/** A 200 whose body is `bytes`, sent with its content-length and the given headers. */
function bytesAnswer(bytes: Buffer, headers: Record<string, string> = {}): ScriptedResponse {
  return {
    write: (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(bytes.length), ...headers });
      res.end(bytes);
    },
  };
}

/** `{"items":[]}` padded with spaces to exactly `size` bytes: valid JSON of any size. */
function pageOfSize(size: number): Buffer {
  const page = Buffer.alloc(size, 0x20);
  page.write('{"items":[]}');
  return page;
}

/**
 * Writes a chunked 200 body until the client hangs up. As a guard for a client without a cap, it
 * resets the connection after 64 MiB, so that such a client fails the test instead of eating memory.
 */
function endlessBody(res: ServerResponse): void {
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  let sent = 0;
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"items":[');
  const pump = (): void => {
    while (!res.destroyed) {
      if (sent >= 64 * MiB) {
        res.destroy();
        return;
      }
      sent += chunk.length;
      if (!res.write(chunk)) {
        res.once('drain', pump);
        return;
      }
    }
  };
  pump();
}

describe('a response larger than transport.maxResponseBytes once decoded fails at once (E_RESPONSE_TOO_LARGE)', () => {
  const options = { transport: { maxResponseBytes: MiB }, retry: { maxAttempts: 3 } };

  async function tooLarge(server: ScriptedServer): Promise<RequestError> {
    const { client, clock } = connect(server.baseUrl, options);
    const started = performance.now();
    const error = await rejection(client.get('/events', LIMIT));
    expect(performance.now() - started).toBeLessThan(2000);
    expect(error).toMatchObject({ code: 'E_RESPONSE_TOO_LARGE', retryable: false, attempts: 1 });
    expect(error.message).toMatch(/^The response is larger than 1 MiB once decoded/);
    expect(error.message).toContain('raise source.maxResponseBytes');
    expect(error.message).toContain('(GET /api/v1/projects/scripted/events?limit=10');
    // Not retried: the same page would be as large again.
    expect(server.requests).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
    expect(client.stats).toMatchObject({ requests: 1, retries: 0 });
    return error;
  }

  it('a gzip bomb (20 MiB of zeros in about 20 KB) stops at the cap', async () => {
    const bomb = gzipSync(Buffer.alloc(20 * MiB));
    expect(bomb.length).toBeLessThan(MiB / 10);
    const headers = { 'content-encoding': 'gzip', 'x-request-id': 'bomb-1' };
    const error = await tooLarge(await serve(() => bytesAnswer(bomb, headers)));
    expect(error).toMatchObject({ requestId: 'bomb-1', limitBytes: MiB });
    expect(error.message).toContain('request id bomb-1');
  });

  it('a deflate bomb stops at the cap too', async () => {
    const bomb = deflateSync(Buffer.alloc(20 * MiB));
    await tooLarge(await serve(() => bytesAnswer(bomb, { 'content-encoding': 'deflate' })));
  });

  it('an endless 200 body is cut off once it passes the cap', async () => {
    await tooLarge(await serve(() => ({ write: endlessBody })));
  });

  it('a raw body one byte over the cap, announced by its content-length', async () => {
    await tooLarge(await serve(() => bytesAnswer(pageOfSize(MiB + 1))));
  });

  it('a gzip body one byte over the cap once decoded', async () => {
    await tooLarge(await serve(() => bytesAnswer(gzipSync(pageOfSize(MiB + 1)), { 'content-encoding': 'gzip' })));
  });

  it('bodies of exactly the cap pass, raw and gzip, and the page holds its decoded size', async () => {
    const server = await serve((index) =>
      index === 0 ? bytesAnswer(pageOfSize(MiB)) : bytesAnswer(gzipSync(pageOfSize(MiB)), { 'content-encoding': 'gzip' }),
    );
    const { client } = connect(server.baseUrl, options);
    for (let i = 0; i < 2; i++) {
      const response = await client.get('/events', LIMIT);
      expect(response.bytes.length).toBe(MiB);
      expect(response.body).toEqual({ items: [] });
    }
    expect(server.requests).toHaveLength(2);
  });
});

describe('answers of a few KB (token endpoint, /login/status) may be at most 1 MiB, whatever maxResponseBytes says', () => {
  const FIXED = /^The response is larger than 1 MiB once decoded, the fixed limit for this endpoint/;

  it('a token endpoint answering an endless body: E_RESPONSE_TOO_LARGE, one token request, no API request', async () => {
    const server = await serve((index) => (index === 0 ? { write: endlessBody } : { body: { items: [] } }));
    const source = sourceSchema.parse({
      baseUrl: server.baseUrl,
      auth: {
        type: 'oauth-client-credentials',
        tokenUrl: `${server.origin}/oauth2/token`,
        clientId: 'transport-client',
        clientSecret: new Secret('transport-client-secret-0001'),
      },
    });
    expect(source.maxResponseBytes).toBe(256 * MiB);
    const client = createPlatformClient(source, { clock: createFakeClock(), random: () => 0.5 });
    cleanup.push(() => client.close());
    const error = await rejection(client.get('/events'));
    expect(error).toMatchObject({ code: 'E_RESPONSE_TOO_LARGE', retryable: false, limitBytes: MiB, method: 'POST' });
    expect(error.message).toMatch(FIXED);
    expect(error.message).toContain('(POST /oauth2/token');
    expect(server.requests.map((request) => request.url)).toEqual(['/oauth2/token']);
  });

  it('/login/status answering 2 MiB: E_RESPONSE_TOO_LARGE after one request', async () => {
    const server = await serve(() => bytesAnswer(pageOfSize(2 * MiB)));
    const { client } = connect(server.baseUrl);
    const error = await rejection(client.loginStatus());
    expect(error).toMatchObject({ code: 'E_RESPONSE_TOO_LARGE', path: '/login/status', limitBytes: MiB });
    expect(error.message).toMatch(FIXED);
    expect(server.requests).toHaveLength(1);
  });
});

/** A 200 whose body never ends: one byte every 20 ms, each well within any body timeout. */
function trickle(res: ServerResponse, onFirstByte: () => void = () => {}): void {
  res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'trickle-1' });
  res.write('{', onFirstByte);
  const timer = setInterval(() => res.write(' '), 20);
  res.on('close', () => clearInterval(timer));
}

describe('source.timeouts.requestMs bounds a request from sending it to the last byte of its body', () => {
  const options = (maxAttempts: number) => ({
    transport: { requestTimeoutMs: 300, bodyTimeoutMs: 60_000 },
    retry: { maxAttempts },
  });

  it('a body trickling one byte every 20 ms fails with E_TIMEOUT within about a second', async () => {
    const server = await serve(() => ({ write: (res) => trickle(res) }));
    const { client } = connect(server.baseUrl, options(1));
    const started = performance.now();
    const error = await rejection(client.get('/events', LIMIT));
    expect(performance.now() - started).toBeLessThan(1500);
    expect(error).toMatchObject({ code: 'E_TIMEOUT', retryable: true, attempts: 1 });
    expect(error.message).toMatch(/^No complete answer within 0\.3 s \(source\.timeouts\.requestMs\)/);
    expect(error.message).toContain('(GET /api/v1/projects/scripted/events?limit=10, request id trickle-1, after 1 attempt)');
  });

  it('is retried like other timeouts: maxAttempts 2 makes exactly 2 attempts', async () => {
    const server = await serve(() => ({ write: (res) => trickle(res) }));
    const { client, clock } = connect(server.baseUrl, options(2));
    const error = await rejection(client.get('/events', LIMIT));
    expect(error).toMatchObject({ code: 'E_TIMEOUT', attempts: 2 });
    expect(server.requests).toHaveLength(2);
    expect(clock.sleeps).toHaveLength(1);
    expect(client.stats).toMatchObject({ requests: 2, retries: 1 });
  });

  it("the caller's own abort stays an AbortedError (E_ABORTED), not a timeout", async () => {
    const stop = new AbortController();
    const server = await serve(() => ({ write: (res) => trickle(res, () => stop.abort()) }));
    const { client } = connect(server.baseUrl, options(3));
    const error = await rejection(client.get('/events', LIMIT, stop.signal));
    expect(error).toMatchObject({ code: 'E_ABORTED', retryable: false });
    expect(server.requests).toHaveLength(1);
  });

  it("a request that completes in time is not affected and leaves no listener on the caller's signal", async () => {
    const server = await serve(() => ({ body: { items: [] } }));
    const { client } = connect(server.baseUrl, options(1));
    const run = new AbortController();
    for (let i = 0; i < 3; i++) expect((await client.get('/events', LIMIT, run.signal)).body).toEqual({ items: [] });
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
  });
});

describe("a response's bytes are taken from the client's budget (source.maxBufferedBytes) as they arrive and are decoded", () => {
  const options = { maxBufferedBytes: MiB, transport: { maxResponseBytes: 64 * MiB }, retry: { maxAttempts: 3 } };

  it('a gzip body that inflates past the whole budget stops there: E_RESPONSE_TOO_LARGE naming the budget, not retried', async () => {
    const server = await serve(() => bytesAnswer(gzipSync(Buffer.alloc(20 * MiB)), { 'content-encoding': 'gzip' }));
    const { client } = connect(server.baseUrl, options);
    const error = await rejection(client.get('/events', LIMIT));
    expect(error).toMatchObject({ code: 'E_RESPONSE_TOO_LARGE', retryable: false, attempts: 1, limitBytes: MiB });
    expect(error.message).toContain('The response is larger than 1 MiB once decoded (source.maxBufferedBytes, the memory budget');
    expect(error.message).toContain('raise source.maxBufferedBytes');
    expect(server.requests).toHaveLength(1);
    // Counted chunk by chunk, the compressed bytes with them: never past the budget.
    expect(client.budget.peak).toBeLessThanOrEqual(MiB);
    expect(client.budget.held).toBe(0);
  });

  it('a body that fits is counted, compressed and decoded, while it is read; given back once it is interpreted', async () => {
    const page = pageOfSize(700 * 1024);
    const gzipped = gzipSync(page);
    const server = await serve(() => bytesAnswer(gzipped, { 'content-encoding': 'gzip' }));
    const { client } = connect(server.baseUrl, options);
    const response = await client.get('/events', LIMIT);
    expect(response.bytes.equals(page)).toBe(true);
    expect(client.budget.peak).toBe(page.length + gzipped.length);
    expect([client.budget.held, client.budget.pages]).toEqual([0, 0]);
  });

  it('a gzip body of several members, whose trailer speaks of the last only, is decoded again in chunks: the same bytes', async () => {
    const first = pageOfSize(900 * 1024);
    const second = Buffer.alloc(100 * 1024, 0x20);
    const server = await serve(() => bytesAnswer(Buffer.concat([gzipSync(first), gzipSync(second)]), { 'content-encoding': 'gzip' }));
    const { client } = connect(server.baseUrl, { maxBufferedBytes: 64 * MiB });
    const taught = await client.budget.hold('/events');
    taught.resize(MiB);
    taught.release();
    const hold = await client.budget.hold('/events');
    const response = await client.getPage('/events', LIMIT, undefined, hold);
    expect(response.bytes.equals(Buffer.concat([first, second]))).toBe(true);
    hold.release();
  });

  it('a gzip page about as large as its estimate decodes in one pass into one buffer; a larger one in chunks, the same bytes', async () => {
    const small = pageOfSize(700 * 1024);
    const large = pageOfSize(3 * MiB);
    const tiny = Buffer.from('{"items":[]}');
    const server = await serve((index) => bytesAnswer(gzipSync([small, large, tiny][index]!), { 'content-encoding': 'gzip' }));
    const { client } = connect(server.baseUrl, { maxBufferedBytes: 64 * MiB });
    const taught = await client.budget.hold('/events');
    taught.resize(800 * 1024);
    taught.release();
    for (const [page, oneBuffer] of [[small, true], [large, false]] as const) {
      const hold = await client.budget.hold('/events');
      expect(hold.bytes).toBe(800 * 1024);
      const response = await client.getPage('/events', LIMIT, undefined, hold);
      expect(response.bytes.equals(page)).toBe(true);
      // One pass: zlib's one output chunk, one byte more than the body, is the body itself.
      expect(response.bytes.buffer.byteLength).toBe(oneBuffer ? page.length + 1 : page.length);
      expect(hold.bytes, 'the page or the estimate, its compressed bytes given back').toBe(Math.max(page.length, 800 * 1024));
      hold.release();
    }
    // Smaller than zlib's smallest chunk: one chunk of 64 bytes.
    const response = await client.getPage('/events', LIMIT, undefined, await client.budget.hold('/events'));
    expect(response.bytes.equals(tiny)).toBe(true);
  });

  it('a page whose estimate waits for the request slot an arriving answer holds gives its estimate back: both go, none refused', async () => {
    // One request slot. A count (no estimate) holds it while its answer arrives; a page of a path not
    // seen yet holds the whole budget as its estimate, and waits for the slot.
    let answer: () => void = () => {};
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const late = (res: ServerResponse) => void answered.then(() => bytesAnswer(pageOfSize(300 * 1024)).write!(res));
    const server = await serve((index) => (index === 0 ? { write: late } : bytesAnswer(pageOfSize(200 * 1024))));
    const { client } = connect(server.baseUrl, { ...options, retry: { maxAttempts: 1 }, limiter: pLimit(1) });
    const count = client.get('/events/aggregate', LIMIT);
    while (server.requests.length === 0) await new Promise((turn) => setImmediate(turn));
    const estimate = await client.budget.hold('/events');
    expect(estimate.bytes, 'a path not seen yet holds the whole budget').toBe(MiB);
    const page = client.getPage('/events', LIMIT, undefined, estimate);
    for (let turn = 0; turn < 5; turn++) await new Promise((next) => setImmediate(next));
    answer();
    await expect(count).resolves.toBeDefined();
    const response = await page;
    expect(response.bytes.length).toBe(200 * 1024);
    estimate.release();
    expect(client.budget.held).toBe(0);
    expect(client.budget.peak).toBeLessThanOrEqual(MiB);
  });

  it('a response that must wait for room no other response can give back is refused (E_MEMORY_BUDGET), retryable', async () => {
    const server = await serve(() => bytesAnswer(pageOfSize(512 * 1024)));
    const { client } = connect(server.baseUrl, { ...options, retry: { maxAttempts: 1 } });
    const other = client.budget.open();
    expect(other.take(700 * 1024)).toBeUndefined();
    const asked = rejection(client.get('/events', LIMIT));
    // The answer takes what room there is (324 KiB at most) and waits for the rest...
    while (client.budget.held < 956 * 1024) await new Promise((turn) => setImmediate(turn));
    // ...and the other response then waits too: nothing could give room back, so the younger gives its bytes back.
    const waiting = other.take(300 * 1024);
    const error = await asked;
    expect(error).toMatchObject({ code: 'E_MEMORY_BUDGET', retryable: true, attempts: 1 });
    expect(error.message).toContain('The responses in flight need more than source.maxBufferedBytes (1 MiB) at once');
    await waiting;
    expect(client.budget.held).toBe(1000 * 1024);
    other.release();
    expect(client.budget.held).toBe(0);
  });

  it('a response waiting for room that a held page never gives back waits until its deadline: E_MEMORY_BUDGET', async () => {
    const server = await serve(() => bytesAnswer(pageOfSize(512 * 1024)));
    const timeouts = { transport: { requestTimeoutMs: 300 }, retry: { maxAttempts: 1 } };
    const { client } = connect(server.baseUrl, { ...options, ...timeouts });
    const written = client.budget.open();
    expect(written.take(900 * 1024)).toBeUndefined();
    written.resize(900 * 1024);
    const error = await rejection(client.get('/events', LIMIT));
    expect(error).toMatchObject({ code: 'E_MEMORY_BUDGET', retryable: true });
    expect(error.message).toMatch(/^Waited for room in the memory budget \(source\.maxBufferedBytes\) until/);
    expect(error.message).toContain('0.3 s (source.timeouts.requestMs)');
    written.release();
    expect(client.budget.held).toBe(0);
  });
});
