import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { type Finished, runCli } from '../support/cli.js';
import { closedPort } from '../support/closed-port.js';
import { issueToken as issueTokenFrom, loginCookie } from '../support/simulator-auth.js';
import { expectGaveUpWithin } from '../support/retry-waits.js';

const API_KEY = 'cli-auth-api-key-0001';
const CLIENT = { id: 'cli-auth-client', secret: 'cli-auth-client-secret-0001' };
const USER = { user: 'bob@example.com', password: 'cli-auth-password-0001' };
const WRONG_API_KEY = 'cli-auth-wrong-api-key-0002';
const WRONG_CLIENT_SECRET = 'cli-auth-wrong-client-secret-0002';
const LITERAL_SECRET = 'cli-auth-literal-api-key-0003';

/** Every credential any test of this file handed to the CLI; none may appear in its output. */
const secrets = new Set<string>([
  API_KEY,
  CLIENT.secret,
  USER.password,
  WRONG_API_KEY,
  WRONG_CLIENT_SECRET,
  LITERAL_SECRET,
]);
/** Every output the CLI produced in this file. */
const outputs: string[] = [];

let sim: Simulator;
let dir: string;

beforeAll(async () => {
  sim = await startSimulator({ assets: 20, events: 50, apiKeys: [API_KEY], clients: [CLIENT], users: [USER] });
  dir = mkdtempSync(join(tmpdir(), 'bulk-extract-cli-auth-'));
});

afterAll(async () => {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

afterEach(() => {
  // A leak fails the test that caused it; this re-checks everything seen so far.
  expectNoSecrets(outputs.join('\n'));
});

function expectNoSecrets(text: string): void {
  for (const secret of secrets) expect(text, `output contains the secret ${secret.slice(0, 6)}...`).not.toContain(secret);
}

let configs = 0;

function writeConfig(auth: string, baseUrl = sim.baseUrl): string {
  const file = join(dir, `job-${++configs}.yaml`);
  writeFileSync(file, `source:\n  baseUrl: ${baseUrl}\n  auth:\n${auth}`);
  return file;
}

async function cli(args: string[], env: Record<string, string> = {}): Promise<Finished> {
  const done = await runCli(args, { ...process.env, ...env });
  outputs.push(done.stdout, done.stderr);
  expectNoSecrets(`${done.stdout}\n${done.stderr}`);
  return done;
}

async function issueToken(): Promise<string> {
  const token = await issueTokenFrom(sim, CLIENT);
  secrets.add(token);
  return token;
}

async function login(): Promise<string> {
  const pair = await loginCookie(sim, USER);
  secrets.add(pair);
  secrets.add(pair.slice('session='.length));
  return pair;
}

interface Setup {
  file: string;
  env: Record<string, string>;
  user: RegExp;
}

const MECHANISMS: Record<string, () => Promise<Setup>> = {
  'api-key': () =>
    Promise.resolve({
      file: writeConfig("    type: api-key\n    apiKey: '${BE_API_KEY}'\n"),
      env: { BE_API_KEY: API_KEY },
      user: /^user {7}service-account-1@demo$/m,
    }),
  'token': async () => ({
    file: writeConfig("    type: token\n    token: '${BE_TOKEN}'\n"),
    env: { BE_TOKEN: await issueToken() },
    user: /^user {7}\S.*$/m,
  }),
  'oauth-client-credentials': () =>
    Promise.resolve({
      file: writeConfig(
        `    type: oauth-client-credentials\n    tokenUrl: ${sim.tokenUrl}\n    clientId: ${CLIENT.id}\n    clientSecret: '\${BE_CLIENT_SECRET}'\n`,
      ),
      env: { BE_CLIENT_SECRET: CLIENT.secret },
      user: new RegExp(`^user {7}${CLIENT.id}$`, 'm'),
    }),
  'cookie': async () => {
    const cookie = await login();
    const secretFile = join(dir, `cookie-${++configs}`);
    writeFileSync(secretFile, `${cookie}\n`);
    return {
      file: writeConfig(`    type: cookie\n    cookieFile: ${secretFile}\n`),
      env: {},
      user: /^user {7}bob@example\.com$/m,
    };
  },
};

describe('bulk-extract auth status', () => {
  it.each(Object.keys(MECHANISMS))('%s: exit 0, names mechanism, user and project, works yes', async (mechanism) => {
    const setup = await MECHANISMS[mechanism]?.();
    if (setup === undefined) throw new Error(mechanism);
    const done = await cli(['auth', 'status', '--config', setup.file], setup.env);
    expect(done.stderr.split('\n').filter((line) => /"level":(50|60)/.test(line))).toEqual([]);
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(new RegExp(`^mechanism {2}${mechanism}$`, 'm'));
    expect(done.stdout).toMatch(setup.user);
    expect(done.stdout).toMatch(/^project {4}demo\b/m);
    expect(done.stdout).toMatch(/^works {6}yes/m);
  });

  it.each(Object.keys(MECHANISMS))('%s --json: one JSON object with works true', async (mechanism) => {
    const setup = await MECHANISMS[mechanism]?.();
    if (setup === undefined) throw new Error(mechanism);
    const done = await cli(['auth', 'status', '--config', setup.file, '--json'], setup.env);
    expect(done.code).toBe(0);
    const lines = done.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const status = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
    expect(status).toMatchObject({ mechanism, project: 'demo', works: true });
    expect(typeof status.user).toBe('string');
  });

  it('a wrong api key: exit 3 and works NO', async () => {
    const file = writeConfig("    type: api-key\n    apiKey: '${BE_API_KEY}'\n");
    const done = await cli(['auth', 'status', '--config', file], { BE_API_KEY: WRONG_API_KEY });
    expect(done.code).toBe(3);
    expect(done.stdout).toMatch(/^works {6}NO/m);
  });

  it('a wrong client secret: exit 3 and stderr names invalid_client', async () => {
    const file = writeConfig(
      `    type: oauth-client-credentials\n    tokenUrl: ${sim.tokenUrl}\n    clientId: ${CLIENT.id}\n    clientSecret: '\${BE_CLIENT_SECRET}'\n`,
    );
    const done = await cli(['auth', 'status', '--config', file], { BE_CLIENT_SECRET: WRONG_CLIENT_SECRET });
    expect(done.code).toBe(3);
    expect(done.stderr).toContain('invalid_client');
    expect(done.stderr).toContain(CLIENT.id);
  });

  it('a wrong client secret: the refusal says to check clientId and clientSecret, naming its variable, not its value', async () => {
    const file = writeConfig(
      `    type: oauth-client-credentials\n    tokenUrl: ${sim.tokenUrl}\n    clientId: ${CLIENT.id}\n    clientSecret: '\${BE_CLIENT_SECRET}'\n`,
    );
    const done = await cli(['auth', 'status', '--config', file], { BE_CLIENT_SECRET: WRONG_CLIENT_SECRET });
    expect(done.code).toBe(3);
    expect(done.stderr).toContain(`The identity provider refused the client credentials of '${CLIENT.id}': HTTP 401 invalid_client`);
    // One sentence's end, though the provider's own description ends with a full stop.
    expect(done.stderr).toContain(
      `Client authentication failed. Check source.auth.clientId ('${CLIENT.id}') and source.auth.clientSecret (the environment variable BE_CLIENT_SECRET)`,
    );
  });

  it('a wrong client secret read from a file: the refusal names the file', async () => {
    const secretFile = join(dir, 'client-secret');
    writeFileSync(secretFile, `${WRONG_CLIENT_SECRET}\n`);
    const file = writeConfig(
      `    type: oauth-client-credentials\n    tokenUrl: ${sim.tokenUrl}\n    clientId: ${CLIENT.id}\n    clientSecretFile: ${secretFile}\n`,
    );
    const done = await cli(['auth', 'status', '--config', file]);
    expect(done.code).toBe(3);
    expect(done.stderr).toContain(`source.auth.clientSecret (the file ${secretFile})`);
  });

  it('a wrong api key refused by a run: exit 3, and the refusal names source.auth.apiKey and its variable', async () => {
    const out = join(dir, `out-${++configs}`);
    const file = writeConfig(
      "    type: api-key\n    apiKey: '${BE_API_KEY}'\nstreams:\n  - resource: events\n    partitions: 1\n",
    );
    const done = await cli(['run', '--config', file, '--out', out], { BE_API_KEY: WRONG_API_KEY });
    expect(done.code).toBe(3);
    expect(done.stderr).toContain('The platform refused the api-key credential: HTTP 401');
    expect(done.stderr).toContain('Check source.auth.apiKey (the environment variable BE_API_KEY)');
  });

  it('a literal secret in the config: exit 2, pointing to an environment variable', async () => {
    const file = writeConfig(`    type: api-key\n    apiKey: ${LITERAL_SECRET}\n`);
    const done = await cli(['auth', 'status', '--config', file]);
    expect(done.code).toBe(2);
    expect(done.stderr).toContain('source.auth.apiKey');
    expect(done.stderr).toMatch(/environment variable/);
  });

  it('no --config: exit 2', async () => {
    const done = await cli(['auth', 'status']);
    expect(done.code).toBe(2);
    expect(done.stderr).toContain('--config');
  });

  it('plain http:// to a non-loopback host: exit 2 with the insecure-transport message, nothing sent', async () => {
    const file = writeConfig(
      "    type: api-key\n    apiKey: '${BE_API_KEY}'\n",
      'http://platform.example.com/api/v1/projects/demo',
    );
    const done = await cli(['auth', 'status', '--config', file], { BE_API_KEY: API_KEY });
    expect(done.code).toBe(2);
    expect(done.stderr).toContain('Refusing to send credentials over plain http://');
    expect(done.stderr).toContain('platform.example.com');
    expect(done.stderr).toContain('allowInsecureHttp');
  });

  it('nothing listening at source.baseUrl: exit 1 within 5 s, naming the URL and source.baseUrl', async () => {
    const port = await closedPort();
    const file = writeConfig("    type: api-key\n    apiKey: '${BE_API_KEY}'\n", `http://127.0.0.1:${port}/api/v1/projects/demo`);
    const started = performance.now();
    const done = await cli(['auth', 'status', '--config', file], { BE_API_KEY: API_KEY });
    expectGaveUpWithin(done.stderr, 5000, performance.now() - started);
    expect(done.code).toBe(1);
    expect(done.stderr).toContain(
      `bulk-extract auth: Cannot reach http://127.0.0.1:${port}/login/status: connection refused (ECONNREFUSED), nothing listens there. Check source.baseUrl (`,
    );
  });

  it('nothing listening at source.auth.tokenUrl: exit 1 within 5 s, naming the token URL and its key', async () => {
    const port = await closedPort();
    const file = writeConfig(
      `    type: oauth-client-credentials\n    tokenUrl: http://127.0.0.1:${port}/oauth2/token\n    clientId: ${CLIENT.id}\n    clientSecret: '\${BE_CLIENT_SECRET}'\n`,
    );
    const started = performance.now();
    const done = await cli(['auth', 'status', '--config', file], { BE_CLIENT_SECRET: CLIENT.secret });
    expectGaveUpWithin(done.stderr, 5000, performance.now() - started);
    expect(done.code).toBe(1);
    expect(done.stderr).toContain(
      `bulk-extract auth: Cannot reach http://127.0.0.1:${port}/oauth2/token: connection refused (ECONNREFUSED), nothing listens there. Check source.auth.tokenUrl (`,
    );
  });

  it('an unknown action: exit 2', async () => {
    const file = writeConfig("    type: api-key\n    apiKey: '${BE_API_KEY}'\n");
    const done = await cli(['auth', 'whoami', '--config', file], { BE_API_KEY: API_KEY });
    expect(done.code).toBe(2);
    expect(done.stderr).toContain("unknown action 'whoami'");
  });
});

describe('bulk-extract auth logout', () => {
  it('ends a cookie session: exit 0, and the session no longer works afterwards (status exit 3)', async () => {
    const setup = await MECHANISMS.cookie?.();
    if (setup === undefined) throw new Error('cookie');
    expect((await cli(['auth', 'status', '--config', setup.file])).code).toBe(0);
    const out = await cli(['auth', 'logout', '--config', setup.file]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('Logged out');
    expect(out.stdout).toContain(USER.user);
    const after = await cli(['auth', 'status', '--config', setup.file]);
    expect(after.code).toBe(3);
    expect(after.stdout).toMatch(/^works {6}NO/m);
  });

  it('with an api-key config: exit 2, there is no session to end', async () => {
    const file = writeConfig("    type: api-key\n    apiKey: '${BE_API_KEY}'\n");
    const done = await cli(['auth', 'logout', '--config', file], { BE_API_KEY: API_KEY });
    expect(done.code).toBe(2);
    expect(done.stderr).toContain('cookie');
    const status = await cli(['auth', 'status', '--config', file], { BE_API_KEY: API_KEY });
    expect(status.code).toBe(0);
  });
});
