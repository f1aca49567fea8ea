import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { formatProgress, progressMeter } from '../../src/cli/progress.js';
import { runJob } from '../../src/export/run/run-job.js';
import type { RunHandle } from '../../src/export/run/run-progress.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { loadJob, removeTempDirs, SIM_KEY, tempDir } from '../support/export-harness.js';
import { createFakeClock } from '../support/fake-clock.js';
import { captureLogger } from '../support/log-capture.js';
import { createGatedClock } from '../support/resume-harness.js';

/**
 * The progress of a datapoints stream during a run, against the simulator: series done of the
 * series selected (the platform's count of the listing), held mid-run by a gate on the
 * simulator's answers, then all of them at the end; its progress line names them.
 */
const SERIES = 300;
const open: Simulator[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((sim) => sim.close()));
  removeTempDirs();
});

describe('the progress of a datapoints stream', () => {
  it('counts series done against the series selected, mid-run and at the end', { timeout: 120_000 }, async () => {
    // Every answer of the simulator waits at the gate, which lets them through one by one until a
    // request of points has been answered (its series done), the rest of the series not yet.
    const gate = createGatedClock(0);
    const faults = { latencyMs: 1 };
    const sim = await startSimulator({
      seed: 9,
      apiKeys: [SIM_KEY],
      timeseries: SERIES,
      datapoints: 6000,
      faults,
      clock: gate,
    });
    open.push(sim);
    const dir = tempDir('datapoints-progress-');
    const config = loadJob(dir, {
      baseUrl: sim.baseUrl,
      out: join(dir, 'out'),
      streams: [{ resource: 'datapoints', name: 'points', partitions: 1, limit: 50 }],
      output: { formats: ['ndjson'] },
    });
    let handle: RunHandle | undefined;
    const clock = createFakeClock(Date.UTC(2026, 5, 1));
    const running = runJob({ config, logger: captureLogger('info').logger, clock, onStart: (run) => (handle = run) });
    for (let step = 0; (handle?.streams()[0]?.series ?? 0) === 0; step++) {
      expect(step, 'answers let through before a series was done').toBeLessThan(100);
      await gate.whenHeld(1);
      gate.allow(1);
    }
    const mid = handle?.streams()[0];
    expect(mid).toMatchObject({ name: 'points', seriesTotal: SERIES });
    expect(mid?.series, 'the first page of series is read').toBeGreaterThan(0);
    expect(mid?.series).toBeLessThan(SERIES);
    const now = createFakeClock();
    const line = formatProgress(progressMeter(handle!, () => now.now())());
    expect(line).toMatch(new RegExp(`^points [\\d,]+ points, series ${mid?.series}/${SERIES} \\d+%`));
    gate.open();
    const result = await running;
    expect(result.state).toBe('complete');
    expect(handle?.streams()[0]).toMatchObject({ series: SERIES, seriesTotal: SERIES, done: 1 });
    const end = formatProgress(progressMeter(handle!, () => now.now())());
    expect(end).toMatch(/^points [\d,]+ points, 300 series, all done/);
  });
});
