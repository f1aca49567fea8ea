import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { verifyOutput } from '../../src/export/inspect/verify.js';
import { runJob } from '../../src/export/run/run-job.js';
import { silentLogger } from '../../src/log.js';
import { MIN_POINT_TIME, pointColumns } from '../../src/resources/index.js';
import { runRowsFor } from '../../src/sink/datapoints/point-table.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { expectedRaw, expectPoints, seriesIndexes, shardsUnder, writePointsJob } from '../support/datapoints-export.js';
import { openDuck } from '../support/export-duckdb.js';
import { createFakeClock } from '../support/fake-clock.js';

/**
 * Datapoints shards larger than the rows a Parquet writer holds in memory (a sorted run): their
 * rows go through runs on disk and a merge, with the default run size (the job file has no key
 * for it). One partition, shards of up to 1,000,000 rows: the whole stream is one shard of about
 * three runs, every point with its status, string series and bad points included. Both formats
 * must hold every point exactly once, the Parquet shard sorted by series, then time.
 */
const KEY = 'datapoints-large-shard-key';
const SERIES = 60;
const POINTS = 200_000;
const T0 = Date.UTC(2026, 0, 1);
const EVERY_POINT = { includeStatus: true, ignoreBadDataPoints: false };

let sim: Simulator;
const dirs: string[] = [];

beforeAll(async () => {
  // The simulator starts at the runs' time: its live series' points reach it.
  const clock = createFakeClock(T0);
  sim = await startSimulator({ seed: 28, timeseries: SERIES, datapoints: POINTS, apiKeys: [KEY], clock });
});

afterAll(async () => {
  await sim.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('a Parquet shard past one sorted run', () => {
  it('one shard of every point, through several runs: both formats exact, the shard sorted, no runs file left', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bulk-extract-dp-large-'));
    dirs.push(dir);
    const out = join(dir, 'out');
    const file = writePointsJob(join(dir, 'job.yaml'), {
      baseUrl: sim.baseUrl,
      out,
      streams: [{ resource: 'datapoints', name: 'points', partitions: 1, ...EVERY_POINT }],
      maxRows: 1_000_000,
    });
    const config = loadConfig(file, { SIM_KEY: KEY });
    const result = await runJob({ config, logger: silentLogger, clock: createFakeClock(T0) });
    expect(result.errors).toEqual([]);
    expect(result.state).toBe('complete');

    const expected = expectedRaw(sim, seriesIndexes(sim), { start: MIN_POINT_TIME, end: T0 }, EVERY_POINT);
    const runRows = runRowsFor(pointColumns(EVERY_POINT));
    expect(expected.parquet.size, 'the shard holds more than two runs').toBeGreaterThan(2 * runRows);
    const folder = join(out, 'points');
    expect(shardsUnder(folder, '.parquet')).toEqual(['part=1-of-1/000000.parquet']);
    expect(shardsUnder(out, '.inprogress'), 'no runs file or other temporary file left').toEqual([]);
    const duck = await openDuck();
    try {
      await expectPoints(duck, folder, expected);
    } finally {
      duck.close();
    }
    const report = await verifyOutput(out);
    expect(report.problems).toEqual([]);
    expect(report.formats.parquet?.rows).toBe(expected.parquet.size);
  });
});
