import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream';
import { inspect } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { Secret } from '../../src/util/secret.js';
import { sourceSchema, type SourceConfig } from '../../src/config/source-schema.js';
import { type ClientDeps, createPlatformClient } from '../../src/connect/index.js';
import { drainCursorChain } from '../../src/http/cursor-chain.js';
import type { PlatformClient } from '../../src/http/platform-client.js';
import { type Simulator, type SimulatorOptions, startSimulator } from '../../src/simulator/index.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';
import { captureLogger } from '../support/log-capture.js';
import { startScriptedServer } from '../support/scripted-server.js';
import { issueToken as issueTokenFrom, loginCookie } from '../support/simulator-auth.js';

const API_KEY = 'secrets-api-key-0001';
const FILE_API_KEY = 'secrets-file-api-key-0002';
const CLIENT = { id: 'secrets-client', secret: 'secrets-client-secret-0001' };
const USER = { user: 'carol@example.com', password: 'secrets-password-0001' };
const WRONG = {
  apiKey: 'secrets-wrong-api-key-0003',
  token: 'secrets-wrong-token-0003',
  clientSecret: 'secrets-wrong-client-secret-0003',
  cookie: 'session=secrets-wrong-cookie-0003',
};
const LITERAL = {
  apiKey: 'secrets-literal-api-key-0004',
  token: 'secrets-literal-token-0004',
  clientSecret: 'secrets-literal-client-secret-0004',
  cookie: 'session=secrets-literal-cookie-0004',
};
const ENV_SECRET = 'secrets-env-value-0005';
const FILE_SECRET = 'secrets-file-value-0006';

/** Every credential used; grows as tokens and sessions are issued. */
const secrets = new Set<string>([
  API_KEY,
  FILE_API_KEY,
  CLIENT.secret,
  USER.password,
  ...Object.values(WRONG),
  ...Object.values(LITERAL),
  'secrets-wrong-cookie-0003',
  'secrets-literal-cookie-0004',
  ENV_SECRET,
  FILE_SECRET,
]);
/** Tokens and sessions issued during the run (a subset of `secrets`), to prove they were captured. */
const issued = new Set<string>();
const logs = captureLogger('debug');
const errors: unknown[] = [];
/** What each scenario ended in: 'ok' or the error's code. */
const outcomes: Record<string, string> = {};
const cleanup: (() => Promise<void>)[] = [];
let dir: string;

function addIssued(value: string): void {
  if (value === '') return;
  issued.add(value);
  secrets.add(value);
}

/** Records the credentials a request carried: every value of api-key, Authorization and Cookie. */
function recordCredentials(headers: IncomingHttpHeaders): void {
  for (const name of ['api-key', 'authorization', 'cookie']) {
    const value = headers[name];
    if (typeof value !== 'string') continue;
    secrets.add(value);
    const bearer = /^Bearer (.+)$/i.exec(value)?.[1];
    if (bearer !== undefined) addIssued(bearer);
    const session = /(?:^|;\s*)session=([^;]+)/.exec(value)?.[1];
    if (session !== undefined) addIssued(session);
  }
}

interface Proxy {
  baseUrl: string;
  tokenUrl: string;
}

/**
 * A loopback proxy in front of a simulator that sees what the client sends and what the token
 * endpoint answers: every credential and every issued access token joins `secrets`. List bodies
 * are piped through, so a connection the simulator resets is reset for the client too.
 */
async function recordingProxy(sim: Simulator): Promise<Proxy> {
  const upstream = new URL(sim.origin);
  const server = createServer((req, res) => {
    recordCredentials(req.headers);
    const isToken = (req.url ?? '').startsWith('/oauth2/token');
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        if (!isToken) {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          pipeline(answer, res, (error) => {
            if (error) res.destroy();
          });
          return;
        }
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const bytes = Buffer.concat(chunks);
          const text = (answer.headers['content-encoding'] === 'gzip' ? gunzipSync(bytes) : bytes).toString();
          try {
            const token = (JSON.parse(text) as { access_token?: unknown }).access_token;
            if (typeof token === 'string') addIssued(token);
          } catch {
            // not JSON: nothing issued
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(bytes);
        });
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { baseUrl: `${origin}${new URL(sim.baseUrl).pathname}`, tokenUrl: `${origin}/oauth2/token` };
}

async function simulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const sim = await startSimulator({
    assets: 20,
    events: 200,
    apiKeys: [API_KEY, FILE_API_KEY],
    clients: [CLIENT],
    users: [USER],
    logger: logs.logger,
    ...options,
  });
  cleanup.push(() => sim.close());
  return sim;
}

function source(baseUrl: string, auth: Record<string, unknown>, extra: Record<string, unknown> = {}): SourceConfig {
  return sourceSchema.parse({ baseUrl, auth, ...extra });
}

function oauth(tokenUrl: string, secret = CLIENT.secret): Record<string, unknown> {
  return { type: 'oauth-client-credentials', tokenUrl, clientId: CLIENT.id, clientSecret: new Secret(secret) };
}

function client(config: SourceConfig, deps: ClientDeps = {}): PlatformClient {
  const created = createPlatformClient(config, { logger: logs.logger, clock: createFakeClock(), ...deps });
  cleanup.push(() => created.close());
  return created;
}

/** Runs a scenario, records how it ended, and keeps whatever it threw. */
async function scenario(name: string, run: () => Promise<unknown>): Promise<void> {
  try {
    await run();
    outcomes[name] = 'ok';
  } catch (error) {
    errors.push(error);
    const code = (error as { code?: unknown }).code;
    outcomes[name] = typeof code === 'string' ? code : error instanceof Error ? error.name : 'thrown';
  }
}

function configScenario(name: string, text: string, env: Record<string, string> = {}): Promise<void> {
  return scenario(name, () => {
    const file = join(dir, `${name.replace(/\W+/g, '-')}.yaml`);
    writeFileSync(file, text);
    const config = loadConfig(file, env);
    const c = client(config.source, { configFile: config.file });
    return c.get('/events', [['limit', '1']]);
  });
}

async function list(c: PlatformClient, limit = 5): Promise<void> {
  await c.get('/events', [['limit', String(limit)]]);
}

async function drainAll(c: PlatformClient, limit: number): Promise<number> {
  let count = 0;
  for await (const page of drainCursorChain(c, { path: '/events', params: [['limit', String(limit)]] })) {
    count += page.items.length;
  }
  return count;
}

async function issueToken(sim: Simulator): Promise<string> {
  const token = await issueTokenFrom(sim, CLIENT);
  addIssued(token);
  return token;
}

async function login(sim: Simulator): Promise<string> {
  const pair = await loginCookie(sim, USER);
  addIssued(pair);
  addIssued(pair.slice('session='.length));
  return pair;
}

const simStats: Record<string, { tokensIssued: number; status401: number; retries: number }> = {};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bulk-extract-secrets-'));
  const sim = await simulator();
  const proxy = await recordingProxy(sim);

  // Every mechanism succeeding.
  await scenario('api-key works', async () => {
    const c = client(source(proxy.baseUrl, { type: 'api-key', apiKey: new Secret(API_KEY) }));
    await list(c);
    if (!(await c.loginStatus()).loggedIn) throw new Error('api key not logged in');
  });
  await scenario('token works', async () => {
    const c = client(source(proxy.baseUrl, { type: 'token', token: new Secret(await issueToken(sim)) }));
    await list(c);
  });
  await scenario('oauth works', async () => {
    const c = client(source(proxy.baseUrl, oauth(proxy.tokenUrl)));
    for (let i = 0; i < 3; i++) await list(c);
  });
  await scenario('cookie works', async () => {
    const c = client(source(proxy.baseUrl, { type: 'cookie', cookie: new Secret(await login(sim)) }));
    await list(c);
    if (!(await c.loginStatus()).loggedIn) throw new Error('cookie not logged in');
    await c.logout();
  });
  await scenario('cookie after logout', async () => {
    const cookie = await login(sim);
    const c = client(source(proxy.baseUrl, { type: 'cookie', cookie: new Secret(cookie) }));
    await c.logout();
    await list(c);
  });

  // Wrong credentials, each mechanism.
  await scenario('wrong api-key', () =>
    list(client(source(proxy.baseUrl, { type: 'api-key', apiKey: new Secret(WRONG.apiKey) }))),
  );
  await scenario('wrong token', () =>
    list(client(source(proxy.baseUrl, { type: 'token', token: new Secret(WRONG.token) }))),
  );
  await scenario('wrong client secret', () => list(client(source(proxy.baseUrl, oauth(proxy.tokenUrl, WRONG.clientSecret)))));
  await scenario('wrong cookie', () =>
    list(client(source(proxy.baseUrl, { type: 'cookie', cookie: new Secret(WRONG.cookie) }))),
  );

  // Token renewal before expiry, then a 401 on a token the server expired early.
  const simClock = createFakeClock();
  const timed = await simulator({ clock: simClock, faults: { tokenTtlSeconds: 120 } });
  const timedProxy = await recordingProxy(timed);
  await scenario('renewal and 401 refresh', async () => {
    const clientClock = createFakeClock();
    const c = client(source(timedProxy.baseUrl, oauth(timedProxy.tokenUrl)), { clock: clientClock });
    await list(c);
    simClock.advance(100_000);
    clientClock.advance(100_000);
    await list(c);
    simClock.advance(120_000);
    await list(c);
    const stats = timed.stats();
    simStats.timed = { tokensIssued: stats.tokensIssued, status401: stats.byStatus['401'] ?? 0, retries: c.stats.retries };
  });

  // Retries under faults, with each mechanism that carries a credential on every request.
  const faulty = await simulator({ events: 400, faults: { rate429: 0.3, resetRate: 0.1, rate5xx: 0.1 } });
  const faultyProxy = await recordingProxy(faulty);
  let retries = 0;
  for (const [name, auth] of [
    ['faults api-key', { type: 'api-key', apiKey: new Secret(API_KEY) }],
    ['faults oauth', oauth(faultyProxy.tokenUrl)],
  ] as const) {
    await scenario(name, async () => {
      const clock: FakeClock = createFakeClock();
      const c = client(source(faultyProxy.baseUrl, auth), { clock });
      const count = await drainAll(c, 20);
      retries += c.stats.retries;
      if (count !== 400) throw new Error(`drained ${count} items`);
    });
  }
  simStats.faulty = { tokensIssued: faulty.stats().tokensIssued, status401: 0, retries };

  // Failed token requests: a token endpoint that stays down, one that refuses the request.
  let scriptedTokens = 0;
  const scripted = await startScriptedServer((request) => {
    recordCredentials(request.headers);
    if (request.url.startsWith('/down/token')) return { status: 503, body: { error: 'temporarily_unavailable' } };
    if (request.url.startsWith('/bad/token')) {
      return { status: 400, body: { error: 'invalid_request', error_description: 'something is off' } };
    }
    if (request.url.startsWith('/ok/token')) {
      const token = `secrets-scripted-token-${++scriptedTokens}-0007`;
      addIssued(token);
      return { body: { access_token: token, expires_in: 3600 } };
    }
    return { status: 401, body: { error: { code: 401, message: 'Unauthorized' } } };
  });
  cleanup.push(() => scripted.close());
  await scenario('token endpoint down', () =>
    list(client(source(scripted.baseUrl, oauth(`${scripted.origin}/down/token`), { retry: { maxAttempts: 3 } }))),
  );
  await scenario('token endpoint refuses', () => list(client(source(scripted.baseUrl, oauth(`${scripted.origin}/bad/token`)))));
  await scenario('401 after renewal', () => list(client(source(scripted.baseUrl, oauth(`${scripted.origin}/ok/token`)))));

  // Config errors with literal secrets and secret files.
  const base = `source:\n  baseUrl: ${sim.baseUrl}\n  auth:\n`;
  const oauthLines = `    type: oauth-client-credentials\n    tokenUrl: ${sim.tokenUrl}\n    clientId: ${CLIENT.id}\n`;
  for (const key of ['apiKey', 'token', 'cookie'] as const) {
    const type = key === 'apiKey' ? 'api-key' : key;
    await configScenario(`literal ${key}`, `${base}    type: ${type}\n    ${key}: ${LITERAL[key]}\n`);
    await configScenario(`literal quoted ${key}`, `${base}    type: ${type}\n    ${key}: '${LITERAL[key]}'\n`);
  }
  await configScenario('literal clientSecret', `${base}${oauthLines}    clientSecret: ${LITERAL.clientSecret}\n`);
  writeFileSync(join(dir, 'api-key'), `${FILE_API_KEY}\n`);
  writeFileSync(join(dir, 'secret'), `${FILE_SECRET}\n`);
  await configScenario('api key from a file works', `${base}    type: api-key\n    apiKeyFile: api-key\n`);
  await configScenario(
    'secret file, then a bad baseUrl',
    'source:\n  baseUrl: ftp://nowhere\n  auth:\n    type: api-key\n    apiKeyFile: secret\n',
  );
  await configScenario('secret file under the wrong type', `${base}    type: token\n    apiKeyFile: secret\n`);
  await configScenario(
    'secret file and env together',
    `${base}    type: api-key\n    apiKey: '\${ENV_SECRET}'\n    apiKeyFile: secret\n`,
    { ENV_SECRET },
  );
  await configScenario(
    'env secret, then a bad retry',
    `${base}${oauthLines}    clientSecret: '\${ENV_SECRET}'\n  retry:\n    maxAttempts: 0\n`,
    { ENV_SECRET },
  );
  await configScenario(
    'env secret, plain http to another host',
    'source:\n  baseUrl: http://platform.example.com/api/v1/projects/p\n  auth:\n    type: token\n    token: \'${ENV_SECRET}\'\n',
    { ENV_SECRET },
  );
  await configScenario(
    'env secret under the wrong type',
    `${base}    type: cookie\n    clientSecret: '\${ENV_SECRET}'\n`,
    { ENV_SECRET },
  );
});

afterAll(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
  rmSync(dir, { recursive: true, force: true });
});

/** Every text an error shows: message, stack, JSON and inspect, of it and of its causes. */
function renderings(error: unknown, depth = 0): string[] {
  if (error === undefined || error === null || depth > 10) return [];
  const texts: string[] = [inspect(error, { depth: 10 })];
  try {
    texts.push(JSON.stringify(error) ?? '');
  } catch {
    // circular: inspect above covers it
  }
  if (error instanceof Error) {
    texts.push(error.message, error.stack ?? '');
    texts.push(...renderings(error.cause, depth + 1));
    if (error instanceof AggregateError) for (const inner of error.errors) texts.push(...renderings(inner, depth + 1));
  }
  return texts;
}

function leaks(texts: readonly string[]): { secret: string; text: string }[] {
  const found: { secret: string; text: string }[] = [];
  for (const text of texts) {
    for (const secret of secrets) if (text.includes(secret)) found.push({ secret, text: text.slice(0, 300) });
  }
  return found;
}

describe('no secret in logs or errors (invariant 7)', () => {
  it('the scenarios ran as intended', () => {
    expect(outcomes).toEqual({
      'api-key works': 'ok',
      'token works': 'ok',
      'oauth works': 'ok',
      'cookie works': 'ok',
      'cookie after logout': 'E_AUTH',
      'wrong api-key': 'E_AUTH',
      'wrong token': 'E_AUTH',
      'wrong client secret': 'E_AUTH',
      'wrong cookie': 'E_AUTH',
      'renewal and 401 refresh': 'ok',
      'faults api-key': 'ok',
      'faults oauth': 'ok',
      'token endpoint down': 'E_HTTP_STATUS',
      'token endpoint refuses': 'E_AUTH',
      '401 after renewal': 'E_AUTH',
      'literal apiKey': 'E_CONFIG',
      'literal quoted apiKey': 'E_CONFIG',
      'literal token': 'E_CONFIG',
      'literal quoted token': 'E_CONFIG',
      'literal cookie': 'E_CONFIG',
      'literal quoted cookie': 'E_CONFIG',
      'literal clientSecret': 'E_CONFIG',
      'api key from a file works': 'ok',
      'secret file, then a bad baseUrl': 'E_CONFIG',
      'secret file under the wrong type': 'E_CONFIG',
      'secret file and env together': 'E_CONFIG',
      'env secret, then a bad retry': 'E_CONFIG',
      'env secret, plain http to another host': 'E_INSECURE_TRANSPORT',
      'env secret under the wrong type': 'E_CONFIG',
    });
    expect(simStats.timed?.tokensIssued).toBe(3);
    expect(simStats.timed?.status401).toBe(1);
    expect(simStats.faulty?.retries).toBeGreaterThan(10);
  });

  it('the grep has material: log lines at every level, errors, and the issued tokens and sessions', () => {
    const records = logs.records();
    expect(records.length).toBeGreaterThan(50);
    expect(records.some((r) => r.msg === 'access token acquired')).toBe(true);
    // Retry warnings are one line: `GET /events: HTTP 503 ...; attempt 2/10 in 0.3 s (request id ...)`.
    const retries = records.map((r) => String(r.msg)).filter((msg) => /; attempt \d+\/\d+ in \d+\.\d+ s/.test(msg));
    expect(retries.some((msg) => msg.startsWith('GET /events: '))).toBe(true);
    expect(retries.some((msg) => /^POST http:\/\/\S+\/token: /.test(msg))).toBe(true);
    expect(records.some((r) => String(r.msg).includes('credential refused (401)'))).toBe(true);
    expect(records.some((r) => String(r.msg).includes('deprecated'))).toBe(true);
    expect(errors.length).toBe(Object.values(outcomes).filter((outcome) => outcome !== 'ok').length);
    // Tokens from the simulator (by hand, through the client, after renewals), scripted ones, sessions.
    expect(issued.size).toBeGreaterThanOrEqual(10);
  });

  it('no log line contains a secret', () => {
    expect(leaks(logs.lines())).toEqual([]);
  });

  it('no error message, stack, JSON or cause contains a secret', () => {
    expect(leaks(errors.flatMap((error) => renderings(error)))).toEqual([]);
  });
});
