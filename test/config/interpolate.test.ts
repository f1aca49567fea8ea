import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { interpolate } from '../../src/config/interpolate.js';
import { Secret } from '../../src/util/secret.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';

afterEach(removeTempDirs);

type Row = [name: string, input: unknown, problems: { path: PropertyKey[]; covers?: PropertyKey[]; message: string }[]];

describe('interpolate: every problem of the file, not only the first', () => {
  const rows: Row[] = [
    ['nothing to do', { a: [1, 'x'], b: null }, []],
    [
      'two unset variables in one string, one in a list',
      { source: { baseUrl: 'https://${CLUSTER}.x/${PROJECT}' }, scopes: ['${SCOPE}'] },
      [
        { path: ['source', 'baseUrl'], covers: ['source', 'baseUrl'], message: 'environment variable CLUSTER is not set' },
        { path: ['source', 'baseUrl'], covers: ['source', 'baseUrl'], message: 'environment variable PROJECT is not set' },
        { path: ['scopes', 0], covers: ['scopes', 0], message: 'environment variable SCOPE is not set' },
      ],
    ],
    [
      'an unset and an empty credential variable',
      { a: { clientSecret: '${CLIENT_SECRET}' }, b: { token: '${EMPTY}' } },
      [
        { path: ['a', 'clientSecret'], message: 'environment variable CLIENT_SECRET is not set or empty' },
        { path: ['b', 'token'], message: 'environment variable EMPTY is not set or empty' },
      ],
    ],
    [
      'a literal credential, and the same credential twice',
      { auth: { apiKey: 'literal-0001', apiKeyFile: 'elsewhere' } },
      [
        {
          path: ['auth', 'apiKey'],
          message:
            'credentials are not written in the config file. Use an environment variable (apiKey: ${MY_VARIABLE}) or a file (apiKeyFile: /run/secrets/name)',
        },
        { path: ['auth', 'apiKeyFile'], covers: ['auth', 'apiKey'], message: 'give apiKey or apiKeyFile, not both' },
      ],
    ],
    [
      '*File: not a path, an unset variable in the path (the file is then not tried)',
      { a: { tokenFile: 5 }, b: { cookieFile: '${SECRETS}/cookie' } },
      [
        { path: ['a', 'tokenFile'], covers: ['a', 'token'], message: 'expected a file path' },
        { path: ['b', 'cookieFile'], covers: ['b', 'cookie'], message: 'environment variable SECRETS is not set' },
      ],
    ],
  ];

  it.each(rows)('%s', (_, input, problems) => {
    const result = interpolate(input, { env: { EMPTY: '' }, baseDir: tempDir('bulk-extract-interpolate-') });
    expect(result.problems).toEqual(problems.map((problem) => expect.objectContaining(problem)));
  });

  it('an unset variable stays as written; what resolves is substituted', () => {
    const { value } = interpolate({ a: '${SET}-${UNSET}', b: '$${SET}' }, { env: { SET: 'v' }, baseDir: '/' });
    expect(value).toEqual({ a: 'v-${UNSET}', b: '${SET}' });
  });

  it('*File: an unreadable and an empty file are both reported, with the read error as cause', () => {
    const dir = tempDir('bulk-extract-interpolate-');
    writeFileSync(join(dir, 'empty'), ' \n');
    const { value, problems } = interpolate(
      { a: { apiKeyFile: 'missing' }, b: { tokenFile: 'empty' }, c: { cookieFile: 'empty' } },
      { env: {}, baseDir: dir },
    );
    expect(problems.map((p) => [p.path.join('.'), p.message])).toEqual([
      ['a.apiKeyFile', `cannot read ${join(dir, 'missing')} (ENOENT)`],
      ['b.tokenFile', `${join(dir, 'empty')} is empty`],
      ['c.cookieFile', `${join(dir, 'empty')} is empty`],
    ]);
    expect(problems[0]?.cause).toMatchObject({ code: 'ENOENT' });
    expect(value).toEqual({ a: {}, b: {}, c: {} });
  });

  it('the credentials that resolve are Secrets even when others fail', () => {
    const { value, problems } = interpolate(
      { a: { apiKey: '${KEY}' }, b: { token: '${UNSET}' } },
      { env: { KEY: 'key-0001' }, baseDir: '/' },
    );
    expect(problems).toHaveLength(1);
    const a = (value as { a: { apiKey: unknown } }).a.apiKey;
    expect(a).toBeInstanceOf(Secret);
    expect((a as Secret).reveal()).toBe('key-0001');
  });
});

describe('interpolate: the sensitive values, and credentials\' variables kept in credential keys', () => {
  it('collects every credential, from a variable or a file, and the values of secret-looking names only', () => {
    const dir = tempDir('bulk-extract-interpolate-');
    writeFileSync(join(dir, 'token'), 'file-token-0001\n');
    const env = {
      API_KEY: 'api-key-0001',
      PARTITION_KEY: 'partition-key-0002',
      DB_PASSWORD: 'password-0003',
      MY_CREDENTIALS: 'credentials-0004',
      PROJECT: 'acme-project',
      SHORT_TOKEN: 'on',
    };
    const { sensitive, problems } = interpolate(
      {
        a: { apiKey: '${API_KEY}' },
        b: { tokenFile: 'token' },
        c: ['${PARTITION_KEY}', 'x-${DB_PASSWORD}-y', { deep: '${MY_CREDENTIALS}' }],
        d: 'https://${PROJECT}.example.com/${SHORT_TOKEN}',
      },
      { env, baseDir: dir },
    );
    expect(problems).toEqual([]);
    // Values under 4 characters are collected too; the Redactor ignores them.
    expect(new Set(sensitive)).toEqual(
      new Set(['api-key-0001', 'file-token-0001', 'partition-key-0002', 'password-0003', 'credentials-0004', 'on']),
    );
  });

  it('a credential key\'s variable elsewhere is a problem at that key, covering it, and stays unsubstituted', () => {
    const { value, problems, sensitive } = interpolate(
      { source: { baseUrl: 'https://x/${SECRET}/${SECRET}', auth: { clientSecret: '${SECRET}', scopes: ['${SECRET}'] } } },
      { env: { SECRET: 'secret-0001' }, baseDir: '/' },
    );
    const message = 'uses ${SECRET}, the variable of source.auth.clientSecret; a credential goes only in a credential key (apiKey, token, clientSecret, cookie)';
    expect(problems).toEqual([
      { path: ['source', 'baseUrl'], covers: ['source', 'baseUrl'], message },
      { path: ['source', 'auth', 'scopes', 0], covers: ['source', 'auth', 'scopes', 0], message },
    ]);
    expect((value as { source: { baseUrl: string } }).source.baseUrl).toBe('https://x/${SECRET}/${SECRET}');
    expect(sensitive).toEqual(['secret-0001']);
  });

  it('another variable that holds a credential\'s value is not refused (placeholders give many variables one value)', () => {
    const env = { TOKEN: 'token-0001', COPY: 'token-0001' };
    const { problems, sensitive } = interpolate({ auth: { token: '${TOKEN}' }, appName: '${COPY}' }, { env, baseDir: '/' });
    expect(problems).toEqual([]);
    // The value is a credential's all the same: hidden in every message.
    expect([...sensitive]).toContain('token-0001');
  });
});

describe("interpolate with credentials: 'unused' (status, verify)", () => {
  it('an unset credential variable or an unreadable credential file is an empty Secret, not a problem', () => {
    const ctx = { env: {}, baseDir: tempDir(), credentials: 'unused' as const };
    const { value, problems } = interpolate({ auth: { apiKey: '${UNSET}' }, other: { clientSecretFile: 'absent' } }, ctx);
    expect(problems).toEqual([]);
    const { auth, other } = value as { auth: { apiKey: Secret }; other: { clientSecret: Secret } };
    expect(auth.apiKey).toBeInstanceOf(Secret);
    expect(auth.apiKey.reveal()).toBe('');
    expect(other.clientSecret.reveal()).toBe('');
  });

  it('a credential written in the file is refused all the same, and so is an unset variable outside credentials', () => {
    const ctx = { env: {}, baseDir: tempDir(), credentials: 'unused' as const };
    const { problems } = interpolate({ auth: { apiKey: 'literal-key-0001' }, output: { dir: '${OUT}' } }, ctx);
    expect(problems.map((p) => p.message)).toEqual([
      expect.stringMatching(/credentials are not written in the config file/),
      'environment variable OUT is not set',
    ]);
  });
});
