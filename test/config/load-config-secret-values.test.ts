import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadConfig } from '../../src/config/load-config.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';
import { configErrorOf } from '../support/config-error.js';

afterEach(removeTempDirs);

/**
 * Hostile inputs: a credential's variable used by mistake in another key is refused, naming the
 * key and the variable; the value of a variable whose name looks secret never shows in a config
 * error. Every row fails when the value is echoed.
 */
const CLIENT_SECRET = 'Cl1ent-Secret value/0001';
const MY_API_TOKEN = 'my api\ttoken+value/0002';

type Job = Record<string, unknown>;

/** An OAuth job with every key the rows below change; clientSecret comes from ${CLIENT_SECRET}. */
function baseJob(): Job {
  return {
    source: {
      baseUrl: 'https://a.example.com/api/v1/projects/p',
      appName: 'nightly-export',
      auth: {
        type: 'oauth-client-credentials',
        tokenUrl: 'https://login.example.com/tenant/oauth2/token',
        clientId: 'worker',
        clientSecret: '${CLIENT_SECRET}',
        scopes: ['https://a.example.com/.default'],
      },
    },
    streams: [{ resource: 'events', partitions: 2, filter: { type: 'alarm' } }],
    output: { dir: 's3://bucket/prefix', s3: { endpoint: 'http://127.0.0.1:9000' } },
    metrics: { pushgateway: 'http://pushgateway:9091' },
  };
}

/** Sets `value` at the dotted `key` of `job` (numbers index lists). */
function set(job: Job, key: string, value: unknown): Job {
  const parts = key.split('.');
  let at: Record<string, unknown> = job;
  for (const part of parts.slice(0, -1)) at = at[part] as Record<string, unknown>;
  at[parts.at(-1) ?? ''] = value;
  return job;
}

function write(job: Job): string {
  const file = join(tempDir('bulk-extract-secret-values-'), 'job.yaml');
  writeFileSync(file, stringify(job));
  return file;
}

const configError = (file: string, env: Record<string, string>) => configErrorOf(() => loadConfig(file, env));

/** The value as it may show: itself, percent-encoded, inside a JSON string. */
function forms(value: string): string[] {
  return [value, encodeURIComponent(value), encodeURI(value), JSON.stringify(value).slice(1, -1)];
}

const CREDENTIAL_RULE = 'a credential goes only in a credential key (apiKey, token, clientSecret, cookie)';

describe('a credential\'s variable in another key is refused', () => {
  const rows: [key: string, value: unknown][] = [
    ['source.baseUrl', 'https://a.example.com/api/v1/projects/${CLIENT_SECRET}'],
    ['source.appName', '${CLIENT_SECRET}'],
    ['source.caFile', '/etc/ssl/${CLIENT_SECRET}.pem'],
    ['source.auth.tokenUrl', 'https://login.example.com/${CLIENT_SECRET}/oauth2/token'],
    ['source.auth.audience', '${CLIENT_SECRET}'],
    ['source.auth.scopes.0', 'https://${CLIENT_SECRET}/.default'],
    ['streams.0.partitions', '${CLIENT_SECRET}'],
    ['streams.0.filter.type', '${CLIENT_SECRET}'],
    ['output.s3.endpoint', 'https://${CLIENT_SECRET}.s3.example.com'],
    ['metrics.pushgateway', 'http://pushgateway:9091/${CLIENT_SECRET}'],
  ];

  it.each(rows)('%s: one problem at the key, naming the variable, never the value', (key, value) => {
    const file = write(set(baseJob(), key, value));
    const error = configError(file, { CLIENT_SECRET });
    // One line: the schema's own issue about the key (e.g. partitions: expected number) is covered.
    expect(error.message).toBe(
      `${file}: ${key}: uses \${CLIENT_SECRET}, the variable of source.auth.clientSecret; ${CREDENTIAL_RULE}`,
    );
    for (const form of forms(CLIENT_SECRET)) expect(error.message).not.toContain(form);
  });

  it('another variable holding the credential\'s value is not refused, but hidden in a message about its key', () => {
    const file = write(set(baseJob(), 'streams.0.partitions', '${PARTS}'));
    const error = configError(file, { CLIENT_SECRET, PARTS: CLIENT_SECRET });
    expect(error.message).toContain('streams.0.partitions');
    for (const form of forms(CLIENT_SECRET)) expect(error.message).not.toContain(form);
  });
});

describe('the value of a secret-looking variable is [redacted] in config errors', () => {
  const rows: [key: string, value: unknown][] = [
    ['streams.0.partitions', '${MY_API_TOKEN}'],
    // The tab is a bad character for a header; the value would show JSON-escaped.
    ['source.appName', '${MY_API_TOKEN}'],
    ['source.baseUrl', 'https://a.example.com/api/v1/projects/${MY_API_TOKEN}/more'],
    ['streams.0.filter.minLastUpdatedTime', '${MY_API_TOKEN}'],
    ['metrics.pushgateway', 'http://${MY_API_TOKEN}'],
  ];

  it.each(rows)('%s', (key, value) => {
    const file = write(set(baseJob(), key, value));
    const error = configError(file, { CLIENT_SECRET, MY_API_TOKEN });
    expect(error.message).toContain(`${key}: `);
    expect(error.message).toContain('[redacted]');
    for (const form of forms(MY_API_TOKEN)) expect(error.message).not.toContain(form);
  });

  it('a credential file\'s path holding one: the message and the read error it carries', () => {
    const job = set(baseJob(), 'source.auth', { type: 'token', tokenFile: '/nonexistent/${MY_TOKEN_DIR}/token' });
    const error = configError(write(job), { MY_TOKEN_DIR: 'token-dir-0003' });
    expect(error.message).toContain('cannot read /nonexistent/[redacted]/token (ENOENT)');
    expect(inspect(error, { depth: 5 })).toContain('(ENOENT)');
    expect(inspect(error, { depth: 5 })).not.toContain('token-dir-0003');
  });

  it('the value of a credential file is redacted where it strays into another key\'s message', () => {
    const dir = tempDir('bulk-extract-secret-values-');
    writeFileSync(join(dir, 'secret'), 'file-secret-0004\n');
    const job = set(baseJob(), 'source.auth.clientSecret', undefined);
    set(job, 'source.auth.clientSecretFile', join(dir, 'secret'));
    set(job, 'streams.0.partitions', '${PARTS}');
    const error = configError(write(job), { PARTS: 'file-secret-0004' });
    expect(error.message).toContain('streams.0.partitions: ');
    expect(error.message).not.toContain('file-secret-0004');
  });

  it('values under 4 characters are not redacted, and names that do not look secret are shown', () => {
    const short = configError(write(set(baseJob(), 'streams.0.partitions', '${MY_KEY}')), { CLIENT_SECRET, MY_KEY: 'abc' });
    expect(short.message).toContain('(got "abc")');
    const plain = configError(write(set(baseJob(), 'streams.0.partitions', '${PARTS}')), { CLIENT_SECRET, PARTS: 'twelve' });
    expect(plain.message).toContain('(got "twelve")');
  });
});
