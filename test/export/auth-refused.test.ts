import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadConfig } from '../../src/config/load-config.js';
import { runJob } from '../../src/export/run-job.js';
import { AuthError } from '../../src/http/errors.js';
import { startSimulator } from '../../src/simulator/index.js';
import { createFakeClock } from '../support/fake-clock.js';
import { send } from '../support/http.js';
import { captureLogger } from '../support/log-capture.js';
import { inspectCrashState } from '../support/resume-harness.js';
import { startScriptedServer } from '../support/scripted-server.js';

/**
 * A credential refused in the middle of a run (revoked, say) is one error for the whole run, not
 * one per partition (issue 13, point 8): the partition that meets the 401 fails, and every other
 * partition stops too, committing what it holds, instead of each meeting the same refusal.
 */
const KEY = 'auth-refused-key-0001';
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

describe('a credential refused mid-run', () => {
  it('stops every partition: one AuthError, one log line, the others interrupted with their pages committed', async () => {
    const sim = await startSimulator({ events: 3000, seed: 9, apiKeys: [KEY] });
    const proxy = await startScriptedServer(async (request) => {
      const path = request.url.replace('/api/v1/projects/scripted', '');
      if (request.method !== 'GET') return { status: 404, body: { error: { code: 404, message: 'not here' } } };
      const partition = new URL(path, 'http://x').searchParams.get('partition');
      const later = new URL(path, 'http://x').searchParams.has('cursor');
      if (later && partition === '2/3') return { status: 401, body: { error: { code: 401, message: 'Unauthorized' } } };
      // The other partitions' later pages never come: only the refusal can stop those partitions.
      if (later) return { hold: true };
      const reply = await send(`${sim.baseUrl}${path}`, { headers: { 'api-key': KEY } });
      return { status: reply.status, body: reply.text };
    });
    const dir = mkdtempSync(join(tmpdir(), 'bulk-extract-auth-refused-'));
    cleanup.push(() => sim.close(), () => proxy.close(), () => rmSync(dir, { recursive: true, force: true }));
    const out = join(dir, 'out');
    writeFileSync(
      join(dir, 'job.yaml'),
      stringify({
        source: { baseUrl: proxy.baseUrl, auth: { type: 'api-key', apiKey: '${K}' } },
        streams: [{ resource: 'events', partitions: 3, limit: 100 }],
        output: { dir: out, formats: ['ndjson'], shard: { maxRows: 100 } },
      }),
    );
    const logs = captureLogger('info');
    const config = loadConfig(join(dir, 'job.yaml'), { K: KEY });
    const result = await runJob({ config, logger: logs.logger, clock: createFakeClock() });

    expect(result.state).toBe('failed');
    expect(result.errors.map((e) => [e.m, e.error instanceof AuthError])).toEqual([[2, true]]);
    const said = logs.records().filter((r) => /credential/.test(String(r.msg)) && Number(r.level) >= 50);
    const once = /^the credential was refused; every partition stopped: The platform refused/;
    expect(said.map((r) => r.msg)).toEqual([expect.stringMatching(once)]);
    // Every partition got its first page committed; none read past the refusal.
    const state = await inspectCrashState(out);
    expect(state.inprogress).toEqual([]);
    const parts = state.checkpoint?.streams.events?.parts ?? {};
    expect(Object.values(parts).map((p) => [p.nextSeq, p.done])).toEqual([[1, false], [1, false], [1, false]]);
    const listed = proxy.requests.filter((r) => r.method === 'GET');
    expect(listed.length, 'first pages, the refused one, and at most the held ones').toBeLessThanOrEqual(6);
  });
});
