import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';

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
};

describe('the example configs in config/', () => {
  const files = readdirSync(dir).filter((name) => name.endsWith('.yaml'));

  it('cover every auth mechanism', () => {
    const types = files.map((name) => loadConfig(`${dir}${name}`, env).source.auth.type).sort();
    expect(types).toEqual(['api-key', 'cookie', 'oauth-client-credentials', 'token']);
  });

  it.each(files)('%s loads and takes its secret from the environment', (name) => {
    const config = loadConfig(`${dir}${name}`, env);
    expect(config.source.baseUrl).toBe('https://westeurope-1.example.com/api/v1/projects/acme');
    expect(JSON.stringify(config)).not.toMatch(/example-(client-secret|api-key|access-token)|session=example/);
  });
});
