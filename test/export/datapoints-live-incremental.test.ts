import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { runJob } from '../../src/export/run/run-job.js';
import { runId } from '../../src/export/state/checkpoint.js';
import type { WindowManifest } from '../../src/export/state/manifest.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { expectedRaw, expectPoints, seriesIndexes, writePointsJob } from '../support/datapoints-export.js';
import { type Duck, openDuck } from '../support/export-duckdb.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';
import { tempDir } from '../support/resume-harness.js';

/**
 * A scheduled incremental datapoints job rehearsed on a simulator whose series keep growing and
 * whose points `--churn` changes: three runs a minute apart each write the points that arrived in
 * their window, every one once, in a run folder of their own, as the simulator holds them when
 * the run reads (the run and the simulator share one fake clock, so a run sees one state); a
 * fourth a millisecond later has no point in its window and seals its folder all the same.
 */
const KEY = 'datapoints-live-inc-key-1';
const T0 = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;
const LAG_MS = 5000;

let clock: FakeClock;
let sim: Simulator;
let duck: Duck;

beforeAll(async () => {
  clock = createFakeClock(T0);
  sim = await startSimulator({ seed: 33, timeseries: 40, datapoints: 200_000, churn: 5, apiKeys: [KEY], clock });
  duck = await openDuck();
});

afterAll(async () => {
  duck.close();
  await sim.close();
});

describe('an incremental datapoints job on live series', () => {
  it('three runs a minute apart each write the new points of their window, exact', { timeout: 120_000 }, async () => {
    const dir = tempDir('dp-live-inc');
    const out = join(dir, 'out');
    const file = writePointsJob(join(dir, 'job.yaml'), {
      baseUrl: sim.baseUrl,
      out,
      streams: [{ resource: 'datapoints', name: 'points', mode: 'incremental', safetyLag: '5s', start: '1h-ago', partitions: 2 }],
    });
    const config = loadConfig(file, { SIM_KEY: KEY });
    let from = T0 - 60 * MINUTE;
    for (const at of [T0, T0 + MINUTE, T0 + 2 * MINUTE]) {
      clock.advance(at - clock.now());
      const result = await runJob({ config, logger: silentLogger, clock });
      expect(result.errors).toEqual([]);
      expect(result.state).toBe('complete');
      const window = { start: from, end: at - LAG_MS };
      expect(result.manifest.streams.points?.pointWindow, `the run at ${new Date(at).toISOString()}`).toEqual(window);
      const expected = expectedRaw(sim, seriesIndexes(sim), window);
      // A minute of the live series: hundreds of points (the first run's hour more).
      expect(expected.parquet.size).toBeGreaterThan(100);
      expect(result.manifest.streams.points?.rows).toBe(expected.parquet.size);
      await expectPoints(duck, join(out, 'points', `run=${runId(at)}`), expected);
      from = window.end;
    }
    // A run a millisecond after the last: its window holds no point, and its folder is sealed all the same.
    const at = clock.now() + 1;
    clock.advance(1);
    const empty = await runJob({ config, logger: silentLogger, clock });
    expect(empty).toMatchObject({ state: 'complete', errors: [], rows: 0 });
    expect(expectedRaw(sim, seriesIndexes(sim), { start: from, end: at - LAG_MS }).parquet.size).toBe(0);
    const folder = join(out, 'points', `run=${runId(at)}`);
    expect(existsSync(join(folder, '_SUCCESS'))).toBe(true);
    const sealed = JSON.parse(readFileSync(join(folder, '_manifest.json'), 'utf8')) as WindowManifest;
    expect(sealed).toMatchObject({ rows: 0, files: [], pointWindow: { start: from, end: at - LAG_MS } });
    // The churn changed points meanwhile (late points, corrections, deletes), as the window's reads saw them.
    expect(sim.dataset.datapoints.changes().length).toBeGreaterThan(300);
  });
});
