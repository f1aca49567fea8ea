import { describe, expect, it } from 'vitest';
import { describeExit, newJob, newSimulator, readCheckpoint, runCliWith, type StreamSpec } from '../support/resume-harness.js';
import { expectEveryPoint, type PointsStreamSpec } from '../support/torture-points.js';
import { createFakeClock } from '../support/fake-clock.js';

const KEY = 'points-resume-key-01';

/**
 * Found by the crash torture's datapoints scenario: a partition resumed with 100 series or more in
 * flight and its series listing not ended sent points requests before any listing page. The next
 * listing page, asked for while answers were held, waited for the whole memory budget (a path not
 * seen yet holds all of it), which it never got: the run hung, and Node ended it with exit code 13
 * (unsettled top-level await) and no message, at every resume. The listing now takes no share of
 * the budget.
 */
describe('a datapoints partition resumed in the middle of its series listing', () => {
  it('completes, every point once', async () => {
    // A frozen clock: the simulator's live series gain no point while the test runs.
    const clock = createFakeClock();
    const sim = await newSimulator({ seed: 9, timeseries: 600, datapoints: 30_000, apiKeys: [KEY], clock });
    const stream: PointsStreamSpec = { resource: 'datapoints', name: 'points', partitions: 1, limit: 200 };
    const job = newJob(sim, [stream] as unknown as StreamSpec[], { formats: ['ndjson'], maxRows: 1000 }, 'points-resume');
    const run = (env: Record<string, string> = {}) =>
      runCliWith(['run', '--config', job.file, '--log-level', 'warn'], { cwd: job.dir, env: { SIM_KEY: KEY, ...env } });

    const killed = await run({ BULK_EXTRACT_CRASH_AT: 'after-checkpoint-write:2' });
    expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
    const saved = readCheckpoint(job.out).streams.points?.parts['1']?.points;
    expect(saved?.listed).toBe(false);
    expect(saved?.series.length).toBeGreaterThanOrEqual(100);

    const resumed = await run();
    expect(resumed.code, describeExit(resumed)).toBe(0);
    await expectEveryPoint(sim, job.out, stream, ['ndjson']);
  });
});
