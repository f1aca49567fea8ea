import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../../src/util/secret.js';
import type { SourceConfig } from '../../src/config/source-schema.js';
import { createPlatformClient } from '../../src/connect/index.js';
import { DEFAULT_APP_NAME } from '../../src/http/identification-headers.js';
import { TlsError } from '../../src/http/errors.js';
import { DEFAULT_RETRY } from '../../src/http/retry-policy.js';
import { DEFAULT_TRANSPORT } from '../../src/http/transport.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { createFakeClock } from '../support/fake-clock.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
const API_KEY = 'tls-test-key-0001';

function source(baseUrl: string, caFile?: string): SourceConfig {
  return {
    baseUrl,
    auth: { type: 'api-key', apiKey: new Secret(API_KEY) },
    appName: DEFAULT_APP_NAME,
    allowInsecureHttp: false,
    concurrency: 8,
    maxConnections: 4,
    maxBufferedBytes: 64 * 1024 * 1024,
    maxResponseBytes: DEFAULT_TRANSPORT.maxResponseBytes,
    maxReadFactor: 2,
    timeouts: {
      connectMs: DEFAULT_TRANSPORT.connectTimeoutMs,
      headersMs: DEFAULT_TRANSPORT.headersTimeoutMs,
      bodyMs: DEFAULT_TRANSPORT.bodyTimeoutMs,
      requestMs: DEFAULT_TRANSPORT.requestTimeoutMs,
    },
    retry: DEFAULT_RETRY,
    ...(caFile === undefined ? {} : { caFile }),
  };
}

describe('TLS: verification stays on; a private CA is trusted only when configured', () => {
  let sim: Simulator;

  beforeAll(async () => {
    sim = await startSimulator({
      events: 20,
      apiKeys: [API_KEY],
      tls: {
        cert: readFileSync(fixture('tls/server.pem'), 'utf8'),
        key: readFileSync(fixture('tls/server.key'), 'utf8'),
      },
    });
  });

  afterAll(() => sim.close());

  it('serves HTTPS on loopback', () => {
    expect(sim.baseUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+\//);
  });

  it('refuses a certificate from an unknown CA with E_TLS at once (no retries), naming source.caFile', async () => {
    const clock = createFakeClock();
    const client = createPlatformClient(source(sim.baseUrl), { clock });
    try {
      const error = await client.get('/events', [['limit', '5']]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TlsError);
      expect(error).toMatchObject({ code: 'E_TLS', attempts: 1 });
      expect((error as TlsError).message).toContain('source.caFile');
      expect(clock.sleeps).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it('accepts the server once its CA file is configured (resolved against the config file folder)', async () => {
    const client = createPlatformClient(source(sim.baseUrl, 'tls/ca.pem'), { configFile: fixture('job.yaml') });
    try {
      const response = await client.get('/events', [['limit', '5']]);
      expect((response.body as { items: unknown[] }).items).toHaveLength(5);
    } finally {
      await client.close();
    }
  });
});
