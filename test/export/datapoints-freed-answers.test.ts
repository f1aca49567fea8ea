import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { verifyOutput } from '../../src/export/inspect/verify.js';
import { runJob } from '../../src/export/run/run-job.js';
import { silentLogger } from '../../src/log.js';
import { MIN_POINT_TIME } from '../../src/resources/index.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { canFreeNow, freedSoFar } from '../../src/util/owned-memory.js';
import { expectedRaw, expectPoints, seriesIndexes, writePointsJob } from '../support/datapoints-export.js';
import { openDuck } from '../support/export-duckdb.js';
import { createFakeClock } from '../support/fake-clock.js';

/**
 * An answer's body and the arrays of where its points lie are freed the moment its points are
 * written (util/owned-memory.ts): answers of up to 100,000 points (megabytes each: a request's
 * limits add up to 100,000), read by three partitions with four requests in flight each, into
 * shards of a few answers each. A buffer freed while anything still read it would read as empty:
 * both formats must hold every point exactly once, value for value, and the run must have freed
 * answers.
 */
const KEY = 'datapoints-freed-answers-key';
const T0 = Date.UTC(2026, 0, 1);
const EVERY_POINT = { includeStatus: true, ignoreBadDataPoints: false };

let sim: Simulator;
const dirs: string[] = [];

beforeAll(async () => {
  const clock = createFakeClock(T0);
  sim = await startSimulator({ seed: 46, timeseries: 40, datapoints: 300_000, apiKeys: [KEY], clock });
});

afterAll(async () => {
  await sim.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('answers freed as soon as their points are written', () => {
  it('every point exact in both formats, with answers of megabytes freed along the way', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bulk-extract-dp-freed-'));
    dirs.push(dir);
    const out = join(dir, 'out');
    const file = writePointsJob(join(dir, 'job.yaml'), {
      baseUrl: sim.baseUrl,
      out,
      streams: [{ resource: 'datapoints', name: 'points', partitions: 3, ...EVERY_POINT }],
      maxRows: 150_000,
    });
    const before = freedSoFar();
    const config = loadConfig(file, { SIM_KEY: KEY });
    const result = await runJob({ config, logger: silentLogger, clock: createFakeClock(T0) });
    expect(result.errors).toEqual([]);
    expect(result.state).toBe('complete');
    const freed = freedSoFar();
    if (canFreeNow) {
      expect(freed.buffers - before.buffers, 'answers freed').toBeGreaterThan(10);
      expect(freed.bytes - before.bytes, 'bytes freed').toBeGreaterThan(10 * 1024 * 1024);
    }

    const expected = expectedRaw(sim, seriesIndexes(sim), { start: MIN_POINT_TIME, end: T0 }, EVERY_POINT);
    expect(expected.parquet.size).toBeGreaterThan(250_000);
    const duck = await openDuck();
    try {
      await expectPoints(duck, join(out, 'points'), expected);
    } finally {
      duck.close();
    }
    const report = await verifyOutput(out);
    expect(report.problems).toEqual([]);
  }, 120_000);
});
