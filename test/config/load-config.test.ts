import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { Secret } from '../../src/util/secret.js';
import { DEFAULT_RETRY } from '../../src/http/retry-policy.js';
import { DEFAULT_TRANSPORT } from '../../src/http/transport.js';
import { configErrorOf } from '../support/config-error.js';

const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'bulk-extract-config-'));
  dirs.push(dir);
  return dir;
}

/** Writes `text` as `name` into a fresh temp dir and returns its path. */
function configFile(text: string, name = 'job.yaml', dir = tempDir()): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

const configError = configErrorOf;

const BASE = 'https://acme.platform.example/api/v1/projects/acme';

function yamlWith(auth: string, extra = ''): string {
  return `source:\n  baseUrl: ${BASE}\n  auth:\n${auth}${extra}`;
}

const API_KEY_AUTH = "    type: api-key\n    apiKey: '${API_KEY}'\n";
const ENV = { API_KEY: 'env-api-key-value-0001' };

describe('loadConfig: a valid file', () => {
  it('a full oauth config loads with every default filled in', () => {
    const file = configFile(
      [
        'source:',
        '  baseUrl: https://acme.platform.example/api/v1/projects/acme',
        '  auth:',
        '    type: oauth-client-credentials',
        '    tokenUrl: https://login.example.com/tenant/oauth2/v2.0/token',
        '    clientId: worker',
        "    clientSecret: '${CLIENT_SECRET}'",
        '',
      ].join('\n'),
    );
    const config = loadConfig(file, { CLIENT_SECRET: 'env-client-secret-0001' });
    expect(config.file).toBe(file);
    const { auth, ...rest } = config.source;
    expect(rest).toEqual({
      baseUrl: BASE,
      appName: 'bulk-extract',
      allowInsecureHttp: false,
      concurrency: 8,
      maxConnections: DEFAULT_TRANSPORT.connections,
      maxResponseBytes: 256 * 1024 * 1024,
      maxBufferedBytes: 64 * 1024 * 1024,
      maxReadFactor: 2,
      timeouts: {
        connectMs: DEFAULT_TRANSPORT.connectTimeoutMs,
        headersMs: DEFAULT_TRANSPORT.headersTimeoutMs,
        bodyMs: DEFAULT_TRANSPORT.bodyTimeoutMs,
        requestMs: 300_000,
      },
      retry: DEFAULT_RETRY,
    });
    expect(auth).toMatchObject({
      type: 'oauth-client-credentials',
      tokenUrl: 'https://login.example.com/tenant/oauth2/v2.0/token',
      clientId: 'worker',
      scopes: [],
    });
    expect(auth.type === 'oauth-client-credentials' && auth.audience).toBeUndefined();
    expect(auth.type === 'oauth-client-credentials' && auth.clientSecret.reveal()).toBe('env-client-secret-0001');
    expect(config.streams).toEqual([]);
    expect(config.output).toEqual({
      dir: './out',
      formats: ['parquet'],
      table: 'files',
      parquet: { compression: 'zstd', rowGroupRows: 100_000 },
      ndjson: { compression: 'none' },
      shard: { maxRows: 1_000_000, maxBytes: 256 * 1024 * 1024 },
    });
    expect(config.checkpoint).toBeUndefined();
  });

  it('a JSON file loads too', () => {
    const file = configFile(
      JSON.stringify({
        source: {
          baseUrl: BASE,
          auth: { type: 'api-key', apiKey: '${API_KEY}' },
          maxConnections: 8,
          maxRequestsPerSecond: 2.5,
          retry: { maxAttempts: 3 },
        },
      }),
      'job.json',
    );
    const config = loadConfig(file, ENV);
    expect(config.source.maxConnections).toBe(8);
    expect(config.source.maxRequestsPerSecond).toBe(2.5);
    expect(config.source.retry).toEqual({ ...DEFAULT_RETRY, maxAttempts: 3 });
    expect(config.source.auth.type === 'api-key' && config.source.auth.apiKey.reveal()).toBe(ENV.API_KEY);
  });
});

describe('loadConfig: ${VAR} substitution', () => {
  it('substitutes environment variables inside plain strings', () => {
    const file = configFile(
      `source:\n  baseUrl: https://\${CLUSTER}.platform.example/api/v1/projects/\${PROJECT}\n  auth:\n${API_KEY_AUTH}`,
    );
    const config = loadConfig(file, { ...ENV, CLUSTER: 'westeurope-1', PROJECT: 'acme' });
    expect(config.source.baseUrl).toBe('https://westeurope-1.platform.example/api/v1/projects/acme');
  });

  it('$${ stays a literal ${ and is not substituted', () => {
    const file = configFile(
      yamlWith(
        "    type: oauth-client-credentials\n    tokenUrl: https://login.example.com/token\n    clientId: 'id-$${NOT_A_VAR}'\n    clientSecret: '${S}'\n",
      ),
    );
    const config = loadConfig(file, { S: 'env-secret-0001', NOT_A_VAR: 'substituted' });
    expect(config.source.auth.type === 'oauth-client-credentials' && config.source.auth.clientId).toBe(
      'id-${NOT_A_VAR}',
    );
  });

  it('an unset variable is a ConfigError naming the key path and the variable', () => {
    const file = configFile(
      `source:\n  baseUrl: https://\${CLUSTER}.platform.example/api/v1/projects/acme\n  auth:\n${API_KEY_AUTH}`,
    );
    const error = configError(() => loadConfig(file, ENV));
    expect(error.message).toContain('source.baseUrl');
    expect(error.message).toContain('CLUSTER');
    expect(error.message).toContain(file);
  });
});

type CredentialCase = { key: 'apiKey' | 'token' | 'clientSecret' | 'cookie'; auth: (line: string) => string };

const CREDENTIALS: CredentialCase[] = [
  { key: 'apiKey', auth: (line) => `    type: api-key\n    ${line}\n` },
  { key: 'token', auth: (line) => `    type: token\n    ${line}\n` },
  {
    key: 'clientSecret',
    auth: (line) =>
      `    type: oauth-client-credentials\n    tokenUrl: https://login.example.com/token\n    clientId: worker\n    ${line}\n`,
  },
  { key: 'cookie', auth: (line) => `    type: cookie\n    ${line}\n` },
];

function revealed(config: ReturnType<typeof loadConfig>, key: CredentialCase['key']): string {
  const value = (config.source.auth as Record<string, unknown>)[key];
  expect(value).toBeInstanceOf(Secret);
  return (value as Secret).reveal();
}

describe.each(CREDENTIALS)('loadConfig: credential $key', ({ key, auth }) => {
  const value = `secret-value-of-${key}-0001`;

  it(`${key}: \${VAR} becomes a Secret holding the environment value`, () => {
    const file = configFile(yamlWith(auth(`${key}: '\${MY_SECRET}'`)));
    expect(revealed(loadConfig(file, { MY_SECRET: value }), key)).toBe(value);
  });

  it(`${key}File: a path relative to the config file's folder gives the trimmed file content`, () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'secrets'));
    writeFileSync(join(dir, 'secrets', 'credential'), `\n  ${value}\n\n`);
    const file = configFile(yamlWith(auth(`${key}File: secrets/credential`)), 'job.yaml', dir);
    // The working directory is not the config's folder: the path must be resolved against the latter.
    expect(process.cwd()).not.toBe(dir);
    expect(revealed(loadConfig(file, {}), key)).toBe(value);
  });

  it(`${key} and ${key}File together are refused`, () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'credential'), value);
    const file = configFile(
      yamlWith(auth(`${key}: '\${MY_SECRET}'\n    ${key}File: credential`)),
      'job.yaml',
      dir,
    );
    const error = configError(() => loadConfig(file, { MY_SECRET: value }));
    expect(error.message).toContain(key);
    expect(error.message).toContain(`${key}File`);
    expect(error.message).not.toContain(value);
  });

  it(`${key} written literally is refused, pointing to an environment variable or a file, without echoing it`, () => {
    const file = configFile(yamlWith(auth(`${key}: ${value}`)));
    const error = configError(() => loadConfig(file, {}));
    expect(error.message).toContain(`source.auth.${key}`);
    expect(error.message).toMatch(/environment variable/i);
    expect(error.message).toMatch(/file/i);
    expect(error.message).not.toContain(value);
    expect(JSON.stringify(error)).not.toContain(value);
    expect(error.stack).not.toContain(value);
  });

  it(`${key}File naming a missing file is an error naming the path`, () => {
    const dir = tempDir();
    const file = configFile(yamlWith(auth(`${key}File: no-such-file`)), 'job.yaml', dir);
    const error = configError(() => loadConfig(file, {}));
    expect(error.message).toContain(join(dir, 'no-such-file'));
    expect(error.message).toContain(`${key}File`);
  });

  it(`${key}File naming an empty (whitespace only) file is an error`, () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'empty'), ' \n\n');
    const file = configFile(yamlWith(auth(`${key}File: empty`)), 'job.yaml', dir);
    const error = configError(() => loadConfig(file, {}));
    expect(error.message).toContain(join(dir, 'empty'));
    expect(error.message).toMatch(/empty/);
  });

  it(`${key} from an empty environment variable is an error naming the variable`, () => {
    const file = configFile(yamlWith(auth(`${key}: '\${MY_SECRET}'`)));
    const error = configError(() => loadConfig(file, { MY_SECRET: '' }));
    expect(error.message).toContain('MY_SECRET');
    expect(error.message).toContain(`source.auth.${key}`);
  });
});

describe('loadConfig: validation errors name the key, the expectation and the value found', () => {
  function errorFor(text: string, env: Record<string, string> = ENV): string {
    return configError(() => loadConfig(configFile(text), env)).message;
  }

  it('an unknown top-level key', () => {
    const message = errorFor(`${yamlWith(API_KEY_AUTH)}sink: {}\n`);
    expect(message).toMatch(/Unrecognized key/i);
    expect(message).toContain('"sink"');
  });

  it('an unknown key under source', () => {
    const message = errorFor(yamlWith(API_KEY_AUTH, '  pageSize: 1000\n'));
    expect(message).toContain('source');
    expect(message).toMatch(/Unrecognized key/i);
    expect(message).toContain('"pageSize"');
  });

  it('an unknown auth.type', () => {
    const message = errorFor(yamlWith("    type: oauth2\n    apiKey: '${API_KEY}'\n"));
    expect(message).toContain('source.auth.type');
    expect(message).toContain('oauth-client-credentials');
    expect(message).toContain('"oauth2"');
  });

  it.each([
    ['not a URL', 'not a url'],
    ['an ftp:// URL', 'ftp://acme.platform.example/api/v1/projects/acme'],
  ])('baseUrl that is %s', (_, value) => {
    const message = errorFor(`source:\n  baseUrl: ${value}\n  auth:\n${API_KEY_AUTH}`);
    expect(message).toContain('source.baseUrl');
    expect(message).toMatch(/http\(s\)/);
    expect(message).toContain(JSON.stringify(value));
  });

  it('retry.maxAttempts 0', () => {
    const message = errorFor(yamlWith(API_KEY_AUTH, '  retry:\n    maxAttempts: 0\n'));
    expect(message).toContain('source.retry.maxAttempts');
    expect(message).toMatch(/>=\s*1/);
    expect(message).toContain('(got 0)');
  });

  it('timeouts.connectMs -1', () => {
    const message = errorFor(yamlWith(API_KEY_AUTH, '  timeouts:\n    connectMs: -1\n'));
    expect(message).toContain('source.timeouts.connectMs');
    expect(message).toMatch(/>=\s*1/);
    expect(message).toContain('(got -1)');
  });

  it.each([0, -2, 'fast'])('maxRequestsPerSecond %s', (value) => {
    const message = errorFor(yamlWith(API_KEY_AUTH, `  maxRequestsPerSecond: ${value}\n`));
    expect(message).toContain('source.maxRequestsPerSecond');
    expect(message).toMatch(typeof value === 'string' ? /expected number/ : />\s*0/);
  });

  it("maxConnections 'many'", () => {
    const message = errorFor(yamlWith(API_KEY_AUTH, '  maxConnections: many\n'));
    expect(message).toContain('source.maxConnections');
    expect(message).toMatch(/expected number/);
    expect(message).toContain('"many"');
  });

  it('a missing file', () => {
    const file = join(tempDir(), 'absent.yaml');
    const error = configError(() => loadConfig(file, ENV));
    expect(error.message).toContain(file);
    expect(error.message).toContain('ENOENT');
  });

  it('invalid YAML', () => {
    const file = configFile('source:\n  baseUrl: [unclosed\n  auth: {\n');
    const error = configError(() => loadConfig(file, ENV));
    expect(error.message).toContain(file);
    expect(error.message).toMatch(/not valid YAML/);
  });

  it('invalid YAML: line and column, never the line itself (it may hold a credential)', () => {
    const file = configFile(`source:\n  baseUrl: ${BASE}\n  auth: {type: api-key, apiKey: sEcReT-9f3{x]}\n`);
    const error = configError(() => loadConfig(file, ENV));
    expect(error.message).toMatch(/not valid YAML or JSON: .*at line 3, column \d+$/);
    expect(error.message).not.toContain('sEcReT');
    expect(error.cause).toBeUndefined();
  });

  it('a ${VAR} unquoted inside a flow mapping gets the fix', () => {
    const file = configFile(`source:\n  baseUrl: ${BASE}\n  auth: { type: api-key, apiKey: \${API_KEY} }\n`);
    const error = configError(() => loadConfig(file, ENV));
    expect(error.message).toMatch(/at line 3, column \d+; a \$\{VAR\} inside \{\.\.\.\} or \[\.\.\.\] must be quoted/);
    // Outside {...} and [...], a ${VAR} is fine in YAML: another mistake on its line gets no such fix.
    const other = configFile('source:\n  baseUrl: ${BASE_URL} x: y\n');
    expect(configError(() => loadConfig(other, ENV)).message).not.toContain('must be quoted');
  });

  it('a top-level list', () => {
    const file = configFile(`- source:\n    baseUrl: ${BASE}\n`);
    const error = configError(() => loadConfig(file, ENV));
    expect(error.message).toContain(file);
    expect(error.message).toMatch(/mapping/);
    expect(error.message).toContain("'source'");
  });
});

describe('loadConfig: credentials under a misspelled key stay out of the error', () => {
  it.each([
    ['apikey (lower case) with a literal value', "    type: api-key\n    apiKey: '${API_KEY}'\n    apikey: literal-misspelled-0001\n", 'literal-misspelled-0001'],
    ['client_secret with a literal value', "    type: oauth-client-credentials\n    tokenUrl: https://login.example.com/token\n    clientId: worker\n    clientSecret: '${API_KEY}'\n    client_secret: literal-misspelled-0002\n", 'literal-misspelled-0002'],
    ['clientsecret from ${VAR}', "    type: oauth-client-credentials\n    tokenUrl: https://login.example.com/token\n    clientId: worker\n    clientsecret: '${OTHER_SECRET}'\n", 'env-secret-misspelled-0003'],
  ])('%s', (_, auth, secret) => {
    const file = configFile(yamlWith(auth));
    const error = configError(() => loadConfig(file, { ...ENV, OTHER_SECRET: 'env-secret-misspelled-0003' }));
    expect(error.message).toMatch(/Unrecognized key/i);
    expect(error.message).not.toContain(secret);
  });
});

describe('Secret', () => {
  it('String(), JSON.stringify, util.inspect and template literals never show the value', () => {
    const value = 'very-secret-value-0001';
    const secret = new Secret(value);
    expect(secret.reveal()).toBe(value);
    const renderings = [
      String(secret),
      JSON.stringify({ s: secret }),
      inspect(secret),
      inspect({ nested: { secret } }, { depth: 5, showHidden: true }),
      // eslint-disable-next-line @typescript-eslint/restrict-template-expressions -- this conversion is under test
      `${secret}`,
      JSON.stringify([secret]),
    ];
    for (const text of renderings) {
      expect(text).not.toContain(value);
      expect(text).toContain('[redacted]');
    }
    expect(Object.keys(secret)).toEqual([]);
  });
});
