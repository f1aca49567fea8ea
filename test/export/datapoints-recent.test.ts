import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { runJob } from '../../src/export/run/run-job.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { expectedRaw, expectPoints, seriesIndexes, writePointsJob } from '../support/datapoints-export.js';
import { openDuck } from '../support/export-duckdb.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';

/**
 * The window users ask of a simulator that has just started, `[30d-ago, now)`, exported raw
 * through the real export in this process: the live series' recent points, both formats exact.
 * The simulator and the run share one fake clock, so "now" is one time for both.
 */
const KEY = 'datapoints-recent-key-01';
const DAY = 86_400_000;

let clock: FakeClock;
let sim: Simulator;
let dir: string;

beforeAll(async () => {
  clock = createFakeClock();
  sim = await startSimulator({ seed: 31, timeseries: 40, datapoints: 200_000, apiKeys: [KEY], clock });
  dir = mkdtempSync(join(tmpdir(), 'bulk-extract-dp-recent-'));
});

afterAll(async () => {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a datapoints export of the last 30 days', () => {
  it('reads the live series\' recent points, every one once in both formats', async () => {
    const out = join(dir, 'out');
    const file = writePointsJob(join(dir, 'job.yaml'), {
      baseUrl: sim.baseUrl,
      out,
      streams: [{ resource: 'datapoints', name: 'points', partitions: 2, start: '30d-ago' }],
    });
    const result = await runJob({ config: loadConfig(file, { SIM_KEY: KEY }), logger: silentLogger, clock });
    expect(result.errors).toEqual([]);
    expect(result.state).toBe('complete');
    const window = { start: clock.now() - 30 * DAY, end: clock.now() };
    expect(result.manifest.streams.points?.pointWindow).toEqual(window);
    const expected = expectedRaw(sim, seriesIndexes(sim), window);
    expect(expected.parquet.size).toBeGreaterThan(1000);
    expect(result.manifest.streams.points?.rows).toBe(expected.parquet.size);
    const duck = await openDuck();
    try {
      await expectPoints(duck, join(out, 'points'), expected);
    } finally {
      duck.close();
    }
  });
});
