import type { IncomingHttpHeaders } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { sourceSchema } from '../../src/config/source-schema.js';
import { ConfigError } from '../../src/errors.js';
import { StaticAuth } from '../../src/http/auth/static-auth.js';
import { createPlatformClient } from '../../src/connect/index.js';
import { appNameProblem, identificationHeaders, SDK_ID } from '../../src/http/identification-headers.js';
import { PlatformClient } from '../../src/http/platform-client.js';
import { Secret } from '../../src/util/secret.js';
import { VERSION } from '../../src/version.js';
import { createFakeClock } from '../support/fake-clock.js';
import { type ScriptedResponse, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

const API_KEY = 'ident-test-api-key-0001';
const CLIENT = { id: 'ident-client', secret: 'ident-client-secret-0001' };
const OK_PAGE: ScriptedResponse = { body: { items: [] } };
const LOGIN_STATUS: ScriptedResponse = { body: { data: { user: 'u', loggedIn: true, project: 'p', projectId: 1 } } };
const UNAUTHORIZED: ScriptedResponse = { status: 401, body: { error: { code: 401, message: 'Unauthorized' } } };
const TOKEN: ScriptedResponse = { body: { access_token: 'ident-access-token-0001', expires_in: 3600 } };

const cleanup: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

async function scripted(respond: (index: number) => ScriptedResponse): Promise<ScriptedServer> {
  const server = await startScriptedServer((_request, index) => respond(index));
  cleanup.push(() => server.close());
  return server;
}

function track(client: PlatformClient): PlatformClient {
  cleanup.push(() => client.close());
  return client;
}

/** The `x-cdp-*` headers of a request, by name. */
function cdpHeaders(headers: IncomingHttpHeaders): Record<string, unknown> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith('x-cdp-')));
}

describe('appNameProblem: what x-cdp-app may hold', () => {
  it.each([
    'bulk-extract',
    'plant-historian-sync',
    'Nightly export (team A) v2.1',
    'a',
    'x'.repeat(100),
    '!#$%&\'*+-.^_`|~"(),/:;<=>?@[\\]{}',
  ])('%j is fine', (name) => {
    expect(appNameProblem(name)).toBeUndefined();
  });

  it.each([
    ['', 'expected a non-empty name (it is sent as the x-cdp-app header)'],
    ['x'.repeat(101), 'expected at most 100 characters (it is sent as the x-cdp-app header), found 101'],
    ['line\nbreak', 'found U+000A'],
    ['tab\there', 'found U+0009'],
    ['nul\u0000', 'found U+0000'],
    ['del\u007f', 'found U+007F'],
    ['Ærlig app', "found U+00C6 'Æ'"],
    ['emoji 🚀', "found U+1F680 '🚀'"],
    [' leading', 'found a space at the start or end'],
    ['trailing ', 'found a space at the start or end'],
    [' ', 'found a space at the start or end'],
  ])('%j is refused: %s', (name, expected) => {
    expect(appNameProblem(name)).toContain(expected);
  });
});

describe('identification headers go to the platform', () => {
  it(`x-cdp-sdk is bulk-extract:${VERSION}`, () => {
    expect(SDK_ID).toBe(`bulk-extract:${VERSION}`);
    expect(identificationHeaders('my-app')).toEqual({ 'x-cdp-app': 'my-app', 'x-cdp-sdk': SDK_ID });
  });

  it('by default: every request (GET, POST, retries, /login/status at the root) carries x-cdp-app bulk-extract', async () => {
    const server = await scripted((i) => (i === 0 ? { status: 503, body: {} } : i === 3 ? LOGIN_STATUS : OK_PAGE));
    const auth = StaticAuth.apiKey(new Secret(API_KEY));
    const client = track(new PlatformClient({ baseUrl: server.baseUrl, auth, clock: createFakeClock() }));
    await client.get('/events', [['limit', '10']]);
    await client.post('/events/list', { limit: 10 });
    await client.loginStatus();
    expect(server.requests.map((request) => `${request.method} ${request.url}`)).toEqual([
      'GET /api/v1/projects/scripted/events?limit=10',
      'GET /api/v1/projects/scripted/events?limit=10',
      'POST /api/v1/projects/scripted/events/list',
      'GET /login/status',
    ]);
    for (const request of server.requests) {
      expect(cdpHeaders(request.headers)).toEqual({ 'x-cdp-app': 'bulk-extract', 'x-cdp-sdk': `bulk-extract:${VERSION}` });
    }
  });

  it('source.appName is sent as x-cdp-app, next to the credential and the user agent', async () => {
    const server = await scripted(() => OK_PAGE);
    const source = sourceSchema.parse({
      baseUrl: server.baseUrl,
      appName: 'Plant historian sync (prod)',
      auth: { type: 'api-key', apiKey: new Secret(API_KEY) },
    });
    const client = track(createPlatformClient(source, { clock: createFakeClock() }));
    await client.get('/events');
    const [request] = server.requests;
    expect(cdpHeaders(request?.headers ?? {})).toEqual({
      'x-cdp-app': 'Plant historian sync (prod)',
      'x-cdp-sdk': `bulk-extract:${VERSION}`,
    });
    expect(request?.headers['api-key']).toBe(API_KEY);
    expect(request?.headers['user-agent']).toMatch(/^bulk-extract\//);
  });

  it('a PlatformClient given an appName no header can hold is refused at construction (E_CONFIG)', () => {
    const construct = () =>
      new PlatformClient({
        baseUrl: 'http://127.0.0.1:1/api/v1/projects/p',
        auth: StaticAuth.apiKey(new Secret(API_KEY)),
        appName: 'two\nlines',
      });
    expect(construct).toThrow(ConfigError);
    expect(construct).toThrow('appName: expected printable ASCII');
  });
});

describe('identification headers never go to the identity provider', () => {
  it('oauth-client-credentials: the token requests (first and after a 401) carry no x-cdp-* header', async () => {
    const idp = await scripted(() => TOKEN);
    const platform = await scripted((i) => (i === 0 ? UNAUTHORIZED : OK_PAGE));
    const source = sourceSchema.parse({
      baseUrl: platform.baseUrl,
      appName: 'idp-check',
      auth: {
        type: 'oauth-client-credentials',
        tokenUrl: `${idp.origin}/oauth2/token`,
        clientId: CLIENT.id,
        clientSecret: new Secret(CLIENT.secret),
      },
    });
    const client = track(createPlatformClient(source, { clock: createFakeClock() }));
    await client.get('/events');
    expect(idp.requests.map((request) => `${request.method} ${request.url}`)).toEqual([
      'POST /oauth2/token',
      'POST /oauth2/token',
    ]);
    for (const request of idp.requests) {
      expect(cdpHeaders(request.headers)).toEqual({});
      expect(request.body).toContain(`client_id=${CLIENT.id}`);
    }
    expect(platform.requests).toHaveLength(2);
    for (const request of platform.requests) {
      expect(cdpHeaders(request.headers)).toEqual({ 'x-cdp-app': 'idp-check', 'x-cdp-sdk': `bulk-extract:${VERSION}` });
      expect(request.headers.authorization).toBe('Bearer ident-access-token-0001');
    }
  });

  it('an identity provider on the platform\'s own host still gets none: the rule is who sends, not where', async () => {
    const server = await startScriptedServer((request) => (request.url === '/oauth2/token' ? TOKEN : OK_PAGE));
    cleanup.push(() => server.close());
    const source = sourceSchema.parse({
      baseUrl: server.baseUrl,
      auth: {
        type: 'oauth-client-credentials',
        tokenUrl: `${server.origin}/oauth2/token`,
        clientId: CLIENT.id,
        clientSecret: new Secret(CLIENT.secret),
      },
    });
    const client = track(createPlatformClient(source, { clock: createFakeClock() }));
    await client.get('/events');
    expect(server.requests.map((request) => [request.url, cdpHeaders(request.headers)])).toEqual([
      ['/oauth2/token', {}],
      ['/api/v1/projects/scripted/events', { 'x-cdp-app': 'bulk-extract', 'x-cdp-sdk': `bulk-extract:${VERSION}` }],
    ]);
  });
});
