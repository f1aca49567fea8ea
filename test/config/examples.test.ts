import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RESOURCES } from '../../src/resources/index.js';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { filterOf } from '../support/streams.js';

const dir = fileURLToPath(new URL('../../config/', import.meta.url));
const env = {
  CLUSTER: 'westeurope-1',
  PROJECT: 'acme',
  TENANT_ID: 'tenant',
  CLIENT_ID: 'bulk-extract',
  CLIENT_SECRET: 'example-client-secret',
  API_KEY: 'example-api-key',
  ACCESS_TOKEN: 'example-access-token',
  COOKIE: 'session=example',
  DEMO_BASE_URL: 'http://127.0.0.1:1234/api/v1/projects/demo',
  DEMO_TOKEN_URL: 'http://127.0.0.1:1234/oauth2/token',
  DEMO_CLIENT_SECRET: 'example-demo-secret',
  BUCKET: 'acme-lake',
  AWS_REGION: 'eu-west-1',
};

describe('the example configs in config/', () => {
  const files = readdirSync(dir).filter((name) => name.endsWith('.yaml'));
  /** One example per auth mechanism; the others show other features. */
  const mechanisms = files.filter((name) => !['demo.yaml', 'incremental-s3.yaml'].includes(name));

  it('cover every auth mechanism', () => {
    const types = mechanisms.map((name) => loadConfig(`${dir}${name}`, env).source.auth.type).sort();
    expect(types).toEqual(['api-key', 'cookie', 'oauth-client-credentials', 'token']);
  });

  it.each(mechanisms)('%s is a complete job that takes its secret from the environment', (name) => {
    const config = loadConfig(`${dir}${name}`, env);
    expect(config.source.baseUrl).toBe('https://westeurope-1.example.com/api/v1/projects/acme');
    expect(config.streams.map((s) => s.resource)).toEqual(['events', 'assets']);
    expect(filterOf(config.streams[0])).toEqual({ minLastUpdatedTime: Date.UTC(2024, 0, 1) });
    expect(JSON.stringify(config)).not.toMatch(/example-(client-secret|api-key|access-token)|session=example/);
  });

  it('incremental-s3.yaml is a scheduled incremental export into a bucket prefix', () => {
    const config = loadConfig(`${dir}incremental-s3.yaml`, env);
    expect(config.streams.map((s) => [s.resource, s.mode, 'safetyLag' in s ? s.safetyLag : undefined])).toEqual([
      ['events', 'incremental', 300_000],
      ['assets', 'incremental', 300_000],
    ]);
    expect(config.output.dir).toBe('s3://acme-lake/bulk-extract/acme');
    expect(config.output.s3).toEqual({ region: 'eu-west-1', partSizeMiB: 8 });
    expect(JSON.stringify(config)).not.toContain('example-client-secret');
  });

  it('demo.yaml exports every collection and the datapoints in both formats through OAuth client credentials', () => {
    const config = loadConfig(`${dir}demo.yaml`, env);
    expect(config.source.auth.type).toBe('oauth-client-credentials');
    expect(new Set(config.streams.map((s) => s.resource))).toEqual(new Set([...RESOURCES, 'datapoints']));
    expect(config.output.formats).toEqual(['parquet', 'ndjson']);
  });
});
