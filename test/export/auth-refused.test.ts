import { afterEach, describe, expect, it } from 'vitest';
import { runJob } from '../../src/export/run/run-job.js';
import { AuthError } from '../../src/http/errors.js';
import { startSimulator } from '../../src/simulator/index.js';
import { createFakeClock } from '../support/fake-clock.js';
import { captureLogger } from '../support/log-capture.js';
import { inspectCrashState } from '../support/resume-harness.js';
import { proxiedJob } from '../support/proxied-job.js';

/**
 * A credential refused in the middle of a run (revoked, say) is one error for the whole run, not
 * one per partition: the partition that meets the 401 fails, and every other
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
    const job = await proxiedJob({
      sim,
      key: KEY,
      answer: (request, path) => {
        // The count (the run's first request): not what this test is about.
        if (request.method !== 'GET') return { body: { items: [{ count: 3000 }] } };
        const params = new URL(path, 'http://x').searchParams;
        if (!params.has('cursor')) return undefined;
        if (params.get('partition') === '2/3') return { status: 401, body: { error: { code: 401, message: 'Unauthorized' } } };
        // The other partitions' later pages never come: only the refusal can stop those partitions.
        return { hold: true };
      },
      streams: [{ resource: 'events', partitions: 3, limit: 100 }],
      output: { formats: ['ndjson'], shard: { maxRows: 100 } },
    });
    cleanup.push(() => sim.close(), () => job.close());
    const { config, out, proxy } = job;
    const logs = captureLogger('info');
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
