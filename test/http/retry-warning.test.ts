import { afterEach, describe, expect, it } from 'vitest';
import { Secret } from '../../src/util/secret.js';
import { sourceSchema } from '../../src/config/source-schema.js';
import { StaticAuth } from '../../src/http/auth/static-auth.js';
import { createPlatformClient } from '../../src/connect/index.js';
import {
  AuthError,
  HttpStatusError,
  InvalidJsonError,
  NetworkError,
  type RequestContext,
  type RequestError,
  TimeoutError,
} from '../../src/http/errors.js';
import { PlatformClient } from '../../src/http/platform-client.js';
import { failureSummary, retryMessage, shownPath } from '../../src/http/retry-warning.js';
import { startSimulator } from '../../src/simulator/index.js';
import { createFakeClock } from '../support/fake-clock.js';
import { captureLogger } from '../support/log-capture.js';
import { startScriptedServer } from '../support/scripted-server.js';

const BASE = '/api/v1/projects/acme';
const CTX: RequestContext = {
  method: 'GET',
  path: `${BASE}/events?limit=1000&type=alarm&partition=3/10&cursor=abc`,
  requestId: 'abc-1',
  attempts: 2,
};
const coded = (code: string) => Object.assign(new Error(`socket said ${code}`), { code });

describe('shownPath', () => {
  it.each([
    [`${BASE}/events?limit=1000&partition=3/10&cursor=xyz`, BASE, '/events partition 3/10'],
    [`${BASE}/events?limit=1000&cursor=xyz`, BASE, '/events'],
    [`${BASE}/events/aggregate`, BASE, '/events/aggregate'],
    ['/login/status', BASE, '/login/status'],
    ['/gateway/api/v1/projects/acme/assets?partition=1/2', '/gateway/api/v1/projects/acme', '/assets partition 1/2'],
    ['/oauth2/token', '', '/oauth2/token'],
    [`${BASE}-other/events?limit=1`, BASE, `${BASE}-other/events`],
  ])('%s under %j shows as %j', (path, base, shown) => {
    expect(shownPath(path, base)).toBe(shown);
  });
});

describe('failureSummary', () => {
  const cases: [string, RequestError, string][] = [
    ['a status with the platform message', new HttpStatusError(503, 'Service unavailable', undefined, CTX), 'HTTP 503 Service unavailable'],
    ['a status without a message', new HttpStatusError(502, undefined, undefined, CTX), 'HTTP 502'],
    [
      'a long message: its first sentence',
      new HttpStatusError(429, "Project exceeded maximum number='50' of concurrent requests. Please try again later.", undefined, CTX),
      "HTTP 429 Project exceeded maximum number='50' of concurrent requests",
    ],
    ['a very long sentence: cut', new HttpStatusError(500, 'x'.repeat(300), undefined, CTX), `HTTP 500 ${'x'.repeat(97)}...`],
    ['a reset', new NetworkError('Connection failed', CTX, { cause: coded('ECONNRESET') }), 'connection failed (ECONNRESET)'],
    ['a network error without a code', new NetworkError('Connection failed', CTX), 'connection failed (E_NETWORK)'],
    ['a timeout', new TimeoutError('Timed out', CTX, { cause: coded('UND_ERR_HEADERS_TIMEOUT') }), 'timed out (UND_ERR_HEADERS_TIMEOUT)'],
    ['a body cut short', new InvalidJsonError('HTTP 200 with a body that is not JSON', CTX), 'body not JSON (E_INVALID_JSON)'],
    ['anything else: its code', new AuthError('refused', CTX), 'E_AUTH'],
  ];
  it.each(cases)('%s', (_what, error, summary) => {
    expect(failureSummary(error)).toBe(summary);
  });
});

describe('retryMessage', () => {
  it('says method, path with its partition only, what failed, the next attempt of how many, the wait and the request id', () => {
    const error = new HttpStatusError(503, 'Service unavailable', undefined, CTX);
    expect(retryMessage(error, 1234, { maxAttempts: 10, basePath: BASE })).toBe(
      'GET /events partition 3/10: HTTP 503 Service unavailable; attempt 3/10 in 1.2 s (request id abc-1)',
    );
  });

  it('without a request id (no answer) it says nothing of one; waits under 0.1 s keep two decimals', () => {
    const error = new NetworkError('Connection failed', { method: 'POST', path: '/oauth2/token', attempts: 1 }, {
      cause: coded('ECONNRESET'),
    });
    expect(retryMessage(error, 40, { maxAttempts: 3, origin: 'https://login.example.com' })).toBe(
      'POST https://login.example.com/oauth2/token: connection failed (ECONNRESET); attempt 2/3 in 0.04 s',
    );
  });
});

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

describe('the warnings a client logs', () => {
  it('PlatformClient: one self-sufficient line per retry, the structured fields kept', async () => {
    const sim = await startSimulator({ events: 100, apiKeys: ['warn-test-key-0001'], faults: { rate503: 1 } });
    cleanup.push(() => sim.close());
    const logs = captureLogger();
    const client = new PlatformClient({
      baseUrl: sim.baseUrl,
      auth: StaticAuth.apiKey(new Secret('warn-test-key-0001')),
      clock: createFakeClock(),
      random: () => 0.5,
      retry: { maxAttempts: 3 },
      logger: logs.logger,
    });
    cleanup.push(() => client.close());
    await expect(client.get('/events', [['limit', '5'], ['type', 'alarm'], ['partition', '3/10']])).rejects.toThrow(
      HttpStatusError,
    );
    const warnings = logs.records().filter((record) => record.level === 40);
    expect(warnings.map((w) => w.msg)).toEqual([
      `GET /events partition 3/10: HTTP 503 Service unavailable; attempt 2/3 in 0.3 s (request id ${String(warnings[0]?.requestId)})`,
      `GET /events partition 3/10: HTTP 503 Service unavailable; attempt 3/3 in 0.5 s (request id ${String(warnings[1]?.requestId)})`,
    ]);
    expect(warnings[0]).toMatchObject({
      method: 'GET',
      path: '/api/v1/projects/demo/events?limit=5&type=alarm&partition=3%2F10',
      requestId: expect.any(String),
      attempt: 1,
      maxAttempts: 3,
      delayMs: 250,
      reason: 'HTTP 503',
    });
  });

  it('the token request: the token URL without query, the OAuth error, attempt, wait and request id', async () => {
    let calls = 0;
    const server = await startScriptedServer((request) => {
      if (!request.url.startsWith('/oauth2/token')) return { body: { items: [] } };
      return ++calls === 1
        ? { status: 503, body: { error: 'temporarily_unavailable' } }
        : { body: { access_token: 'warn-test-token-0002', expires_in: 3600 } };
    });
    cleanup.push(() => server.close());
    const logs = captureLogger();
    const source = sourceSchema.parse({
      baseUrl: server.baseUrl,
      auth: {
        type: 'oauth-client-credentials',
        tokenUrl: `${server.origin}/oauth2/token?tenant=t1`,
        clientId: 'warn-client',
        clientSecret: new Secret('warn-client-secret-0003'),
      },
    });
    const client = createPlatformClient(source, { clock: createFakeClock(), random: () => 0.5, logger: logs.logger });
    cleanup.push(() => client.close());
    await client.get('/events');
    const warnings = logs.records().filter((record) => record.level === 40);
    expect(warnings.map((w) => w.msg)).toEqual([
      `POST ${server.origin}/oauth2/token: HTTP 503 temporarily_unavailable; attempt 2/10 in 0.3 s (request id scripted-1)`,
    ]);
    expect(warnings[0]).toMatchObject({ method: 'POST', path: '/oauth2/token?tenant=t1', attempt: 1, delayMs: 250 });
  });
});
