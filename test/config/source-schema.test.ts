import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { Secret } from '../../src/util/secret.js';
import { sourceSchema } from '../../src/config/source-schema.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';

afterEach(removeTempDirs);

const AUTH = { type: 'api-key', apiKey: new Secret('key-0001') };
const EXPECTED = "expected https://{cluster}.{host}/api/v1/projects/{project}, the project's API root";

function baseUrlIssues(baseUrl: unknown): string[] {
  const result = sourceSchema.safeParse({ baseUrl, auth: AUTH });
  return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

describe('source.baseUrl is the project\'s API root', () => {
  it.each([
    'https://westeurope-1.example.com/api/v1/projects/acme',
    'https://westeurope-1.example.com/api/v1/projects/acme/',
    'http://127.0.0.1:40123/api/v1/projects/demo',
    'https://[::1]:8443/api/v1/projects/my-project_2',
  ])('%s is accepted', (url) => {
    expect(baseUrlIssues(url)).toEqual([]);
  });

  it.each([
    ['a host alone', 'https://api.example.com'],
    ['a host and a slash', 'https://api.example.com/'],
    ['the API without a project', 'https://api.example.com/api/v1/projects/'],
    ['a path that is not the API', 'https://api.example.com/x'],
    ['a resource below the project', 'https://api.example.com/api/v1/projects/acme/events'],
    ['another API version', 'https://api.example.com/api/v2/projects/acme'],
    ['a prefix before the API', 'https://api.example.com/proxy/api/v1/projects/acme'],
    ['two trailing slashes', 'https://api.example.com/api/v1/projects/acme//'],
    ['a query', 'https://api.example.com/api/v1/projects/acme?x=1'],
    ['a fragment', 'https://api.example.com/api/v1/projects/acme#top'],
    ['a user and password', 'https://u:p@api.example.com/api/v1/projects/acme'],
  ])('%s is refused, saying what is expected', (_, url) => {
    expect(baseUrlIssues(url)).toEqual([`baseUrl: ${EXPECTED}`]);
  });

  it.each([
    ['not a URL', 'api.example.com/api/v1/projects/acme'],
    ['an ftp:// URL', 'ftp://api.example.com/api/v1/projects/acme'],
  ])('%s is refused as not an http(s) URL', (_, url) => {
    expect(baseUrlIssues(url)).toEqual(['baseUrl: expected an http(s):// URL']);
  });
});

describe('loadConfig: a baseUrl without the project path', () => {
  function messageFor(baseUrl: string): string {
    const file = join(tempDir('bulk-extract-source-'), 'job.yaml');
    writeFileSync(file, `source:\n  baseUrl: ${baseUrl}\n  auth:\n    type: api-key\n    apiKey: \${K}\n`);
    try {
      loadConfig(file, { K: 'env-api-key-0001' });
    } catch (error) {
      return `${(error as Error).message.slice(file.length + 2)}`;
    }
    throw new Error('expected a ConfigError');
  }

  it('names the key, what is expected and what was got', () => {
    expect(messageFor('https://api.example.com/')).toBe(`source.baseUrl: ${EXPECTED} (got "https://api.example.com/")`);
  });

  it('shows what was got without a user and password in it', () => {
    const message = messageFor('https://someone:pass@word-0001@api.example.com/x');
    expect(message).toBe(`source.baseUrl: ${EXPECTED} (got "https://[redacted]@api.example.com/x")`);
    expect(message).not.toMatch(/someone|pass|word-0001/);
  });
});

describe('source.maxBufferedBytes takes bytes or a size with a unit', () => {
  const BASE = 'https://api.example.com/api/v1/projects/acme';
  const parse = (maxBufferedBytes: unknown) => sourceSchema.safeParse({ baseUrl: BASE, auth: AUTH, maxBufferedBytes });

  it.each([
    [67_108_864, 67_108_864],
    ['64MiB', 64 * 2 ** 20],
    ['64 MiB', 64 * 2 ** 20],
    ['1.5GiB', 1.5 * 2 ** 30],
    ['200MB', 200e6],
    ['2gb', 2e9],
    ['1048576', 1_048_576],
  ])('%j is %d bytes', (given, bytes) => {
    const result = parse(given);
    expect(result.success && result.data.maxBufferedBytes).toBe(bytes);
  });

  it.each([['64 MiBs'], ['lots'], ['-5MiB'], [1000], ['512KiB'], [1.5e6 + 0.5], [true]])('%j is refused, naming the units and the least', (given) => {
    const result = parse(given);
    expect(result.success).toBe(false);
    const messages = result.success ? '' : result.error.issues.map((issue) => issue.message).join('; ');
    expect(messages).toMatch(/a size such as "64MiB".*at least 1 MiB/);
  });

  it('defaults to 8 MiB per request of concurrency, at least 32 MiB', () => {
    expect(parse(undefined).data?.maxBufferedBytes).toBe(64 * 2 ** 20);
    const at = (concurrency: number) =>
      sourceSchema.parse({ baseUrl: BASE, auth: AUTH, concurrency }).maxBufferedBytes;
    expect([1, 4, 5, 64].map(at)).toEqual([32, 32, 40, 512].map((mib) => mib * 2 ** 20));
  });
});

describe('source.appName is sent as the x-cdp-app header', () => {
  const BASE = 'https://api.example.com/api/v1/projects/acme';
  const parse = (appName: unknown) => sourceSchema.safeParse({ baseUrl: BASE, auth: AUTH, appName });

  it('defaults to bulk-extract', () => {
    expect(parse(undefined).data?.appName).toBe('bulk-extract');
  });

  it.each(['plant-historian-sync', 'Nightly export (team A) v2.1', 'x'.repeat(100)])('%j is accepted', (name) => {
    expect(parse(name).data?.appName).toBe(name);
  });

  it.each([
    ['an empty name', '', /non-empty/],
    ['101 characters', 'x'.repeat(101), /at most 100 characters/],
    ['a line break', 'two\nlines', /printable ASCII.*U\+000A/],
    ['a letter outside ASCII', 'Ærlig', /printable ASCII.*U\+00C6/],
    ['a trailing space', 'app ', /space at the start or end/],
    ['a number', 42, /expected string/],
  ])('%s is refused', (_, name, message) => {
    const result = parse(name);
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => [issue.path.join('.'), issue.message])).toEqual([
      ['appName', expect.stringMatching(message)],
    ]);
  });

  it('loadConfig names source.appName, what is expected and what was got', () => {
    const file = join(tempDir('bulk-extract-source-'), 'job.yaml');
    const auth = '  auth:\n    type: api-key\n    apiKey: ${K}\n';
    writeFileSync(file, `source:\n  baseUrl: ${BASE}\n  appName: "tab\\there"\n${auth}`);
    expect(() => loadConfig(file, { K: 'env-api-key-0001' })).toThrow(
      `${file}: source.appName: expected printable ASCII without control characters or spaces at either end ` +
      '(it is sent as the x-cdp-app header), found U+0009 (got "tab\\there")',
    );
  });
});

describe('source.maxResponseBytes caps one response once decoded', () => {
  const BASE = 'https://api.example.com/api/v1/projects/acme';
  const parse = (maxResponseBytes: unknown) => sourceSchema.safeParse({ baseUrl: BASE, auth: AUTH, maxResponseBytes });

  it('defaults to 256 MiB', () => {
    expect(parse(undefined).data?.maxResponseBytes).toBe(256 * 2 ** 20);
  });

  it.each([
    [536_870_912, 536_870_912],
    ['512MiB', 512 * 2 ** 20],
    ['1 GiB', 2 ** 30],
    ['300MB', 300e6],
    ['1MiB', 2 ** 20],
    ['1048576', 1_048_576],
  ])('%j is %d bytes', (given, bytes) => {
    expect(parse(given).data?.maxResponseBytes).toBe(bytes);
  });

  it.each([['lots'], ['512KiB'], [1_048_575], ['-1MiB'], [1.5e6 + 0.5], [true]])('%j is refused, naming the units and the least', (given) => {
    const result = parse(given);
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['maxResponseBytes']);
    expect(result.error?.issues.map((issue) => issue.message).join('; ')).toMatch(/a size such as "64MiB".*at least 1 MiB/);
  });

  it('loadConfig names source.maxResponseBytes and what was got', () => {
    const file = join(tempDir('bulk-extract-source-'), 'job.yaml');
    const auth = '  auth:\n    type: api-key\n    apiKey: ${K}\n';
    writeFileSync(file, `source:\n  baseUrl: ${BASE}\n  maxResponseBytes: 64KiB\n${auth}`);
    expect(() => loadConfig(file, { K: 'env-api-key-0001' })).toThrow(
      `${file}: source.maxResponseBytes: expected a number of bytes or a size such as "64MiB" or "1GB" ` +
      '(units B, KB, MB, GB, KiB, MiB, GiB), at least 1 MiB (got "64KiB")',
    );
  });
});

describe('source.timeouts.requestMs bounds one request, sending to the last byte of its body', () => {
  const BASE = 'https://api.example.com/api/v1/projects/acme';
  const parse = (timeouts: unknown) => sourceSchema.safeParse({ baseUrl: BASE, auth: AUTH, timeouts });

  it('defaults to 300000 ms (5 minutes), beside the other timeouts', () => {
    const defaults = { connectMs: 10_000, headersMs: 60_000, bodyMs: 60_000, requestMs: 300_000 };
    expect(parse(undefined).data?.timeouts).toEqual(defaults);
  });

  it('takes a whole number of ms', () => {
    expect(parse({ requestMs: 900_000 }).data?.timeouts.requestMs).toBe(900_000);
  });

  it.each([[0], [-1], [1.5], ['5m']])('%j is refused, naming the key', (given) => {
    const result = parse({ requestMs: given });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['timeouts.requestMs']);
  });

  it('loadConfig names source.timeouts.requestMs', () => {
    const file = join(tempDir('bulk-extract-source-'), 'job.yaml');
    const auth = '  auth:\n    type: api-key\n    apiKey: ${K}\n';
    writeFileSync(file, `source:\n  baseUrl: ${BASE}\n  timeouts:\n    requestMs: 0\n${auth}`);
    expect(() => loadConfig(file, { K: 'env-api-key-0001' })).toThrow(`${file}: source.timeouts.requestMs: `);
  });
});
