import { afterEach, describe, expect, it } from 'vitest';
import { Secret } from '../../src/util/secret.js';
import { sourceSchema } from '../../src/config/source-schema.js';
import { StaticAuth } from '../../src/http/auth/static-auth.js';
import { createPlatformClient } from '../../src/connect/index.js';
import { NetworkError, type RequestContext } from '../../src/http/errors.js';
import { decideFirstContact, FIRST_CONTACT_BUDGET_MS, UNREACHABLE } from '../../src/http/first-contact.js';
import { PlatformClient } from '../../src/http/platform-client.js';
import { decideRetry, DEFAULT_RETRY } from '../../src/http/retry-policy.js';
import { classifyTransportError } from '../../src/http/transport.js';
import { startSimulator } from '../../src/simulator/index.js';
import { closedPort } from '../support/closed-port.js';
import { createFakeClock } from '../support/fake-clock.js';
import { captureLogger } from '../support/log-capture.js';
import { startScriptedServer } from '../support/scripted-server.js';

const T0 = Date.UTC(2026, 0, 1);
const NEVER = { answered: false, firstAttemptAtMs: T0 };
const ANSWERED = { answered: true, firstAttemptAtMs: T0 };
const CTX: RequestContext = { method: 'POST', path: '/oauth2/token', attempts: 1 };
const coded = (code: string) => Object.assign(new Error(`getaddrinfo ${code} idp.example`), { code });

describe('decideFirstContact', () => {
  const cases: [string, string | undefined, typeof NEVER, number, ReturnType<typeof decideFirstContact>][] = [
    ['refused at the first attempt: the whole budget left', 'ECONNREFUSED', NEVER, 0, { firstContact: true, retryWithinMs: 2500 }],
    ['refused 1.2 s in: the rest', 'ECONNREFUSED', NEVER, 1200, { firstContact: true, retryWithinMs: 1300 }],
    ['refused at the end of the budget: none left', 'ECONNREFUSED', NEVER, 2500, { firstContact: true, retryWithinMs: 0 }],
    ['refused long after: none left', 'ECONNREFUSED', NEVER, 60_000, { firstContact: true, retryWithinMs: 0 }],
    ['host not found', 'ENOTFOUND', NEVER, 10, { firstContact: true, retryWithinMs: 2490 }],
    ['DNS did not answer', 'EAI_AGAIN', NEVER, 0, { firstContact: true, retryWithinMs: 2500 }],
    ['no route to the host', 'EHOSTUNREACH', NEVER, 0, { firstContact: true, retryWithinMs: 2500 }],
    ['no route to the network', 'ENETUNREACH', NEVER, 0, { firstContact: true, retryWithinMs: 2500 }],
    ['refused after the origin answered once: the usual policy', 'ECONNREFUSED', ANSWERED, 0, { firstContact: false }],
    ['host not found after an answer: the usual policy', 'ENOTFOUND', ANSWERED, 0, { firstContact: false }],
    ['a reset before any answer: the usual policy', 'ECONNRESET', NEVER, 0, { firstContact: false }],
    ['a connect timeout: the usual policy', 'UND_ERR_CONNECT_TIMEOUT', NEVER, 0, { firstContact: false }],
    ['no code: the usual policy', undefined, NEVER, 0, { firstContact: false }],
    ['a code named like a property of objects: the usual policy', 'toString', NEVER, 0, { firstContact: false }],
  ];
  it.each(cases)('%s', (_what, code, state, elapsedMs, decision) => {
    expect(decideFirstContact(code, state, T0 + elapsedMs)).toEqual(decision);
  });

  it('the budget leaves room, with the last attempt, to fail under 5 s', () => {
    expect(FIRST_CONTACT_BUDGET_MS).toBe(2500);
    const codes = ['EAI_AGAIN', 'ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND'];
    expect(Object.keys(UNREACHABLE).sort()).toEqual(codes);
  });
});

describe('classifyTransportError names the URL and the setting', () => {
  const target = (retryWithinMs: number | undefined) => ({
    url: 'https://idp.example/oauth2/token',
    setting: 'source.auth.tokenUrl',
    decision:
      retryWithinMs === undefined ? { firstContact: false as const } : { firstContact: true as const, retryWithinMs },
  });

  it.each([
    ['ECONNREFUSED', 'connection refused (ECONNREFUSED), nothing listens there'],
    ['ENOTFOUND', 'host not found (ENOTFOUND), the name does not resolve'],
    ['EAI_AGAIN', 'host name lookup failed (EAI_AGAIN), DNS did not answer in time'],
    ['EHOSTUNREACH', 'host unreachable (EHOSTUNREACH), no route to it'],
    ['ENETUNREACH', 'network unreachable (ENETUNREACH), no route to it'],
  ])('first contact, %s: "Cannot reach URL: ... Check setting", retryable while budget is left', (code, what) => {
    const within = classifyTransportError(coded(code), CTX, target(1500));
    expect(within).toBeInstanceOf(NetworkError);
    expect(within).toMatchObject({ retryable: true, retryWithinMs: 1500 });
    expect((within as Error).message).toBe(
      `Cannot reach https://idp.example/oauth2/token: ${what}. Check source.auth.tokenUrl (POST /oauth2/token, after 1 attempt)`,
    );
    expect(classifyTransportError(coded(code), CTX, target(0))).toMatchObject({ retryable: false, retryWithinMs: 0 });
  });

  it('a host not found after first contact: not retried, as before, and names the setting it came from', () => {
    const error = classifyTransportError(coded('ENOTFOUND'), CTX, target(undefined));
    expect(error).toMatchObject({ code: 'E_NETWORK', retryable: false, retryWithinMs: undefined });
    expect((error as Error).message).toMatch(/^Host not found: .*\[ENOTFOUND\]\. Check source\.auth\.tokenUrl \(/);
  });

  it('refused after first contact: the usual retryable "Connection failed"', () => {
    const error = classifyTransportError(coded('ECONNREFUSED'), CTX, target(undefined));
    expect(error).toMatchObject({ retryable: true, retryWithinMs: undefined });
    expect((error as Error).message).toMatch(/^Connection failed: /);
  });

  it('decideRetry cuts the backoff to what is left of the budget; without a budget it is the usual backoff', () => {
    const env = { random: () => 0.5, nowMs: T0 };
    const first = classifyTransportError(coded('ECONNREFUSED'), CTX, target(700)) as NetworkError;
    expect(decideRetry(first, 4, DEFAULT_RETRY, env)).toEqual({ retry: true, delayMs: 700, reason: 'E_NETWORK' });
    expect(decideRetry(first, 1, DEFAULT_RETRY, env)).toEqual({ retry: true, delayMs: 250, reason: 'E_NETWORK' });
    const spent = classifyTransportError(coded('ECONNREFUSED'), CTX, target(0)) as NetworkError;
    expect(decideRetry(spent, 1, DEFAULT_RETRY, env)).toEqual({ retry: false });
    const usual = classifyTransportError(coded('ECONNREFUSED'), CTX, target(undefined)) as NetworkError;
    expect(decideRetry(usual, 4, DEFAULT_RETRY, env)).toEqual({ retry: true, delayMs: 2000, reason: 'E_NETWORK' });
  });
});

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

async function rejection(promise: Promise<unknown>): Promise<NetworkError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof NetworkError) return error;
    throw error;
  }
  throw new Error('expected a NetworkError');
}

describe('an origin never reached fails within the first-contact budget (real closed port, fake clock)', () => {
  it('source.baseUrl: a NetworkError naming the URL and the key, not retryable, after under 5 s of waiting', async () => {
    const port = await closedPort();
    const clock = createFakeClock();
    const logs = captureLogger();
    const client = new PlatformClient({
      baseUrl: `http://127.0.0.1:${port}/api/v1/projects/demo`,
      auth: StaticAuth.apiKey(new Secret('first-contact-key-0001')),
      clock,
      random: () => 0.5,
      logger: logs.logger,
    });
    cleanup.push(() => client.close());
    const error = await rejection(client.get('/assets', [['limit', '1']]));
    expect(error).toMatchObject({ code: 'E_NETWORK', retryable: false, attempts: 5, method: 'GET' });
    expect(error.message).toBe(
      `Cannot reach http://127.0.0.1:${port}/api/v1/projects/demo/assets?limit=1: connection refused (ECONNREFUSED), ` +
      'nothing listens there. Check source.baseUrl (GET /api/v1/projects/demo/assets?limit=1, after 5 attempts)',
    );
    // Backoff of 250, 500, 1000 ms, then cut to the 750 ms left of the 2.5 s budget.
    expect(clock.sleeps).toEqual([250, 500, 1000, 750]);
    expect(sum(clock.sleeps)).toBeLessThan(5000);
    expect(logs.records().filter((r) => r.level === 40).map((r) => r.msg)).toEqual([
      'GET /assets: connection refused (ECONNREFUSED); attempt 2/10 in 0.3 s',
      'GET /assets: connection refused (ECONNREFUSED); attempt 3/10 in 0.5 s',
      'GET /assets: connection refused (ECONNREFUSED); attempt 4/10 in 1.0 s',
      'GET /assets: connection refused (ECONNREFUSED); attempt 5/10 in 0.8 s',
    ]);
  });

  it('source.auth.tokenUrl: the token request fails fast naming the token URL; the platform gets no request', async () => {
    const sim = await startSimulator({ events: 10, clients: [{ id: 'fc', secret: 'first-contact-secret' }] });
    cleanup.push(() => sim.close());
    // After the simulator: a port just closed may be the next one handed out.
    const port = await closedPort();
    const clock = createFakeClock();
    const source = sourceSchema.parse({
      baseUrl: sim.baseUrl,
      auth: {
        type: 'oauth-client-credentials',
        tokenUrl: `http://127.0.0.1:${port}/oauth2/token`,
        clientId: 'fc',
        clientSecret: new Secret('first-contact-secret'),
      },
    });
    const client = createPlatformClient(source, { clock, random: () => 0.5 });
    cleanup.push(() => client.close());
    const started = clock.now();
    const error = await rejection(client.get('/events'));
    expect(error).toMatchObject({ retryable: false, method: 'POST', path: '/oauth2/token', attempts: 5 });
    expect(error.message).toBe(
      `Cannot reach http://127.0.0.1:${port}/oauth2/token: connection refused (ECONNREFUSED), nothing listens there. ` +
      'Check source.auth.tokenUrl (POST /oauth2/token, after 5 attempts)',
    );
    expect(clock.now() - started).toBeLessThan(5000);
    // The token request's retries are the request's: one retry budget, the token included.
    expect(client.stats.retries).toBe(4);
    expect(sim.stats().requests).toBe(0);
  });

  it('all requests to the origin share its budget: 20 at once all fail by the end of it', async () => {
    const port = await closedPort();
    const clock = createFakeClock();
    const client = new PlatformClient({
      baseUrl: `http://127.0.0.1:${port}/api/v1/projects/demo`,
      auth: StaticAuth.apiKey(new Secret('first-contact-key-0001')),
      clock,
      random: () => 0.5,
    });
    cleanup.push(() => client.close());
    const errors = await Promise.all(Array.from({ length: 20 }, () => rejection(client.get('/events'))));
    expect(errors.every((error) => !error.retryable && error.message.startsWith('Cannot reach'))).toBe(true);
    // The fake clock moves by every request's sleep, so the shared budget runs out even sooner.
    for (const error of errors) expect(error.attempts).toBeLessThanOrEqual(5);
  });
});

describe('once an origin has answered, the usual retry policy applies to the same failures', () => {
  it('a server that answered once and then went away: refused connections retried up to maxAttempts', async () => {
    const server = await startScriptedServer(() => ({ body: { items: [] } }));
    const clock = createFakeClock();
    const client = new PlatformClient({
      baseUrl: server.baseUrl,
      auth: StaticAuth.apiKey(new Secret('first-contact-key-0001')),
      clock,
      random: () => 0.5,
      retry: { maxAttempts: 7 },
    });
    cleanup.push(() => client.close());
    await client.get('/events');
    await server.close();
    const error = await rejection(client.get('/events'));
    expect(error).toMatchObject({ retryable: true, attempts: 7 });
    expect(error.message).toMatch(/^Connection failed: .*ECONNREFUSED/);
    expect(clock.sleeps).toEqual([250, 500, 1000, 2000, 4000, 8000]);
  });
});
