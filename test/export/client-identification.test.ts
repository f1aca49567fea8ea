import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { VERSION } from '../../src/version.js';
import { describeExit, newSimulator, runCliWith, tempDir } from '../support/resume-harness.js';

const CLIENT = { id: 'ident-e2e-client', secret: 'ident-e2e-client-secret-0001' };
const APP_NAME = 'Plant historian sync (e2e)';

/**
 * A real export through the built CLI, with OAuth: the simulator's stats show that every request
 * to the platform named the job's `source.appName` and `bulk-extract:<version>`, and that the
 * token endpoint, the identity provider's, was sent neither header.
 */
describe('client identification, end to end', () => {
  it('every platform request carries x-cdp-app and x-cdp-sdk; the token endpoint sees none', async () => {
    // Half the list requests fail once or more, so retries are among the requests counted.
    const faults = { rate5xx: 0.5 };
    const sim = await newSimulator({ events: 3000, assets: 300, seed: 17, clients: [CLIENT], faults });
    const dir = tempDir('client-identification');
    const job = {
      source: {
        baseUrl: sim.baseUrl,
        appName: APP_NAME,
        auth: { type: 'oauth-client-credentials', tokenUrl: sim.tokenUrl, clientId: CLIENT.id, clientSecret: '${SECRET}' },
        retry: { maxAttempts: 30, baseDelayMs: 1, maxDelayMs: 5 },
      },
      streams: [
        { resource: 'events', partitions: 3, limit: 500 },
        { resource: 'assets', partitions: 2, limit: 100 },
      ],
      output: { dir: join(dir, 'out'), formats: ['ndjson'] },
    };
    const file = join(dir, 'job.yaml');
    writeFileSync(file, stringify(job));

    const exit = await runCliWith(['run', '--config', file], { cwd: dir, env: { SECRET: CLIENT.secret } });
    expect(exit.code, describeExit(exit)).toBe(0);

    const stats = sim.stats();
    const tokenRequests = stats.byRoute['POST /oauth2/token'] ?? 0;
    expect(stats.tokensIssued).toBeGreaterThanOrEqual(1);
    expect(stats.byRoute['GET /events']).toBeGreaterThanOrEqual(6);
    expect(stats.clients).toEqual({
      platform: [{ app: APP_NAME, sdk: `bulk-extract:${VERSION}`, requests: stats.requests - tokenRequests }],
      token: [{ app: null, sdk: null, requests: tokenRequests }],
    });
  });
});
