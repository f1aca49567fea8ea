import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { runJob } from '../../src/export/run/run-job.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { expectedRaw, expectPoints, seriesIndexes, writePointsJob } from '../support/datapoints-export.js';
import { openDuck } from '../support/export-duckdb.js';
import { createFakeClock } from '../support/fake-clock.js';

/**
 * Broken answers of `POST /timeseries/data/list` (HTTP 200 with a body cut short, or not JSON, or
 * the connection reset mid-body) are retried like any failed request, and the export stays exact.
 * The simulator draws its faults from its seed: the same requests meet the same faults in every run.
 */
const KEY = 'datapoints-faults-key-01';
const T0 = Date.UTC(2026, 0, 1);
const WINDOW = { start: 0, end: T0 };
let sim: Simulator;
let dir: string;

beforeAll(async () => {
  sim = await startSimulator({
    seed: 28,
    timeseries: 30,
    datapoints: 30_000,
    apiKeys: [KEY],
    // Short pages (cut with a cursor) make many requests, so that each kind of fault meets some.
    faults: { truncateRate: 0.15, malformedRate: 0.15, resetRate: 0.05, shortPageRate: 0.5 },
  });
  dir = mkdtempSync(join(tmpdir(), 'bulk-extract-dp-faults-'));
});

afterAll(async () => {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

it('broken datapoints answers are retried, and every point is exported once', async () => {
  const indexes = seriesIndexes(sim);
  const ids = indexes.map((index) => sim.dataset.timeseries.item(index).id);
  const out = join(dir, 'out');
  const file = writePointsJob(join(dir, 'job.yaml'), {
    baseUrl: sim.baseUrl,
    out,
    streams: [{ resource: 'datapoints', name: 'points', partitions: 3, timeseries: { ids }, ...WINDOW }],
  });
  const config = loadConfig(file, { SIM_KEY: KEY });
  const result = await runJob({ config, logger: silentLogger, clock: createFakeClock(T0) });
  expect(result.errors).toEqual([]);
  expect(result.state).toBe('complete');
  const { faults, byRoute } = sim.stats();
  const broken = (faults.truncate ?? 0) + (faults.malformed ?? 0);
  // More broken bodies than requests on the only other list route: some were datapoints answers.
  expect(broken).toBeGreaterThan(byRoute['GET /timeseries'] ?? 0);
  expect(byRoute['POST /timeseries/data/list']).toBeGreaterThan(10);
  expect(result.manifest.retries).toBeGreaterThanOrEqual(broken);
  const duck = await openDuck();
  try {
    await expectPoints(duck, join(out, 'points'), expectedRaw(sim, indexes, WINDOW), ['parquet', 'ndjson']);
  } finally {
    duck.close();
  }
});
