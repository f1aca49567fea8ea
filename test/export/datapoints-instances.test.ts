import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { verifyOutput } from '../../src/export/inspect/verify.js';
import { runJob } from '../../src/export/run/run-job.js';
import { MIN_POINT_TIME } from '../../src/resources/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { expectedRaw, expectPoints, writePointsJob } from '../support/datapoints-export.js';
import { openDuck } from '../support/export-duckdb.js';
import { createFakeClock } from '../support/fake-clock.js';
import { captureLogger } from '../support/log-capture.js';
import { describeExit, newSimulator, readCheckpoint, runCliWith, tempDir } from '../support/resume-harness.js';

/**
 * Time series that live in the data model, named by `timeseries: {instanceIds: [...]}`: their
 * points read by instanceId through the real simulator (whose CogniteTimeSeries node CTS-i is
 * series i), read back with DuckDB and compared point by point with the simulator's generator;
 * an instanceId the platform does not know is skipped and named, as an unknown id is; a run
 * killed after a shard commit resumes each series from its last committed point, exactly.
 */
const KEY = 'datapoints-instances-key-1';
const SERIES = 60;
const NODES = 40;
const T0 = Date.UTC(2026, 0, 1);

let sim: Simulator;

beforeAll(async () => {
  sim = await newSimulator({
    seed: 28,
    timeseries: SERIES,
    datapoints: 40_000,
    instances: { assets: 10, activities: 0, timeseries: NODES, edges: 0 },
    apiKeys: [KEY],
    // Frozen at T0, when the runs start: the live series' points end there.
    clock: createFakeClock(T0),
  });
});

/** The instanceId of series `index`: the key of its CogniteTimeSeries node. */
function instanceIdOf(index: number): { space: string; externalId: string } {
  const instanceId = sim.dataset.timeseries.item(index).instanceId;
  if (instanceId === undefined) throw new Error(`series ${index} is no data-model node`);
  return instanceId;
}

describe('datapoints of series named by instanceId', () => {
  it('an explicit list, one key unknown: the others\' points exact in both formats; the unknown one skipped, named', async () => {
    const known = [3, 8, 16, 21, 29, 33];
    const unknown = { space: 'sp_nowhere', externalId: instanceIdOf(3).externalId };
    const instanceIds = [...known.slice(0, 3).map(instanceIdOf), unknown, ...known.slice(3).map(instanceIdOf)];
    const dir = tempDir('dp-instances');
    const out = join(dir, 'out');
    const file = writePointsJob(join(dir, 'job.yaml'), {
      baseUrl: sim.baseUrl,
      out,
      streams: [{ resource: 'datapoints', name: 'points', partitions: 2, timeseries: { instanceIds } }],
    });
    const log = captureLogger('info');
    const config = loadConfig(file, { SIM_KEY: KEY });
    const result = await runJob({ config, logger: log.logger, clock: createFakeClock(T0) });
    expect(result.errors).toEqual([]);
    expect(result.state).toBe('complete');

    const warnings = log.records().filter((record) => record.level === 40 && /does not know/.test(String(record.msg)));
    expect(warnings.flatMap((record) => record.series as unknown[])).toEqual([{ instanceId: unknown }]);
    expect(result.manifest.streams.points?.unknownSeries).toEqual([{ instanceId: unknown }]);
    const duck = await openDuck();
    try {
      await expectPoints(duck, join(out, 'points'), expectedRaw(sim, known, { start: MIN_POINT_TIME, end: T0 }));
    } finally {
      duck.close();
    }
    expect((await verifyOutput(out)).problems).toEqual([]);
  });

  it('the nodes of a view that match a filter: each partition its share, every point of exactly those series', async () => {
    const view = { space: 'cdf_cdm', externalId: 'CogniteTimeSeries', version: 'v1' };
    const space = instanceIdOf(0).space;
    const indexes = Array.from({ length: NODES }, (_, index) => index);
    const selected = indexes.filter((index) => instanceIdOf(index).space === space);
    expect(selected.length).toBeGreaterThan(3);
    expect(selected.length).toBeLessThan(NODES);
    const dir = tempDir('dp-instances-view');
    const out = join(dir, 'out');
    const filter = { equals: { property: ['node', 'space'], value: space } };
    const file = writePointsJob(join(dir, 'job.yaml'), {
      baseUrl: sim.baseUrl,
      out,
      streams: [{ resource: 'datapoints', name: 'points', partitions: 3, timeseries: { view, filter } }],
    });
    const config = loadConfig(file, { SIM_KEY: KEY });
    const result = await runJob({ config, logger: captureLogger('info').logger, clock: createFakeClock(T0) });
    expect(result.errors).toEqual([]);
    expect(result.state).toBe('complete');
    expect(result.manifest.streams.points?.unknownSeries).toBeUndefined();
    const duck = await openDuck();
    try {
      await expectPoints(duck, join(out, 'points'), expectedRaw(sim, selected, { start: MIN_POINT_TIME, end: T0 }));
    } finally {
      duck.close();
    }
    expect((await verifyOutput(out)).problems).toEqual([]);
  });

  it('killed after its second shard commit: the checkpoint holds series by instanceId, and the resumed run is exact', async () => {
    const indexes = Array.from({ length: NODES }, (_, index) => index);
    const dir = tempDir('dp-instances-kill');
    const out = join(dir, 'out');
    const file = writePointsJob(join(dir, 'job.yaml'), {
      baseUrl: sim.baseUrl,
      out,
      streams: [{ resource: 'datapoints', name: 'points', partitions: 2, timeseries: { instanceIds: indexes.map(instanceIdOf) } }],
      maxRows: 500,
    });
    const env = { SIM_KEY: KEY };
    // The window ends when the first run starts, after every point of the simulator's (its clock stands at T0).
    const end = Date.now();
    const killed = await runCliWith(['run', '--config', file, '--log-level', 'warn'], {
      cwd: dir,
      env: { ...env, BULK_EXTRACT_CRASH_AT: 'after-checkpoint-write:2' },
    });
    expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
    const parts = Object.values(readCheckpoint(out)?.streams.points?.parts ?? {});
    const inFlight = parts.flatMap((part) => part.points?.series ?? []);
    expect(inFlight.length).toBeGreaterThan(0);
    expect(inFlight.every((series) => series.instanceId !== undefined && series.id === undefined)).toBe(true);

    const resumed = await runCliWith(['run', '--config', file, '--log-level', 'warn'], { cwd: dir, env });
    expect(resumed.code, describeExit(resumed)).toBe(0);
    const duck = await openDuck();
    try {
      await expectPoints(duck, join(out, 'points'), expectedRaw(sim, indexes, { start: MIN_POINT_TIME, end }));
    } finally {
      duck.close();
    }
    expect((await verifyOutput(out)).problems).toEqual([]);
  });
});
