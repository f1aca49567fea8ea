import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { verifyOutput } from '../../src/export/inspect/verify.js';
import { runJob } from '../../src/export/run/run-job.js';
import { MIN_POINT_TIME } from '../../src/resources/index.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { expectedRaw, expectPoints, writePointsJob } from '../support/datapoints-export.js';
import { openDuck } from '../support/export-duckdb.js';
import { createFakeClock } from '../support/fake-clock.js';
import { captureLogger } from '../support/log-capture.js';
import { describeExit, readManifest, recordsIn, runCliWith, tempDir } from '../support/resume-harness.js';

/**
 * Series the platform does not know (an explicit id or externalId that does not exist, as a
 * series deleted between listing and reading): the export asks with `ignoreUnknownIds`, skips
 * them, says so in the log, the summary, the manifest and the run record, and completes with
 * every point of the series that exist.
 */
const KEY = 'datapoints-unknown-key-1';
const SERIES = 40;
const T0 = Date.UTC(2026, 0, 1);

let sim: Simulator;

beforeAll(async () => {
  // The simulator starts at the runs' time: its live series' points reach it.
  const clock = createFakeClock(T0);
  sim = await startSimulator({ seed: 28, timeseries: SERIES, datapoints: 40_000, apiKeys: [KEY], clock });
});

afterAll(async () => {
  await sim.close();
});

/** Series with points, by index. */
const known = [3, 8, 16, 21, 29];

describe('series the platform does not know', () => {
  it('explicit ids, two of them unknown: skipped, logged with their ids, in the manifest; the run completes, the rest exact', async () => {
    // Ids of the collection's form past its end, and one far from it: neither exists.
    const missing = [sim.dataset.timeseries.idOf(SERIES + 7), 424_242];
    const ids = [...known.slice(0, 2), missing[0]!, ...known.slice(2), missing[1]!].map((entry) =>
      entry > SERIES ? entry : sim.dataset.timeseries.idOf(entry),
    );
    const dir = tempDir('dp-unknown');
    const out = join(dir, 'out');
    const file = writePointsJob(join(dir, 'job.yaml'), {
      baseUrl: sim.baseUrl,
      out,
      streams: [{ resource: 'datapoints', name: 'points', partitions: 2, timeseries: { ids } }],
    });
    const log = captureLogger('info');
    const config = loadConfig(file, { SIM_KEY: KEY });
    const result = await runJob({ config, logger: log.logger, clock: createFakeClock(T0) });
    expect(result.errors).toEqual([]);
    expect(result.state).toBe('complete');

    const warnings = log.records().filter((record) => record.level === 40 && /does not know/.test(String(record.msg)));
    const logged = warnings.flatMap((record) => record.series as unknown[]);
    expect(logged).toEqual(expect.arrayContaining(missing.map((id) => ({ id }))));
    expect(logged).toHaveLength(missing.length);
    const unknownSeries = result.manifest.streams.points?.unknownSeries ?? [];
    expect([...unknownSeries].sort((a, b) => ('id' in a && 'id' in b ? a.id - b.id : 0))).toEqual(
      [...missing].sort((a, b) => a - b).map((id) => ({ id })),
    );
    expect(result.manifest.streams.points?.done).toBe(true);

    const duck = await openDuck();
    try {
      await expectPoints(duck, join(out, 'points'), expectedRaw(sim, known, { start: MIN_POINT_TIME, end: T0 }));
    } finally {
      duck.close();
    }
    expect((await verifyOutput(out)).problems).toEqual([]);
  });

  it('an unknown externalId through the CLI: exit 0, logged, named in the summary, the manifest and the run record',
    async () => {
      const externalIds = [...known.map((index) => sim.dataset.timeseries.item(index).externalId), 'TS-NOT-THERE'];
      expect(externalIds.every((externalId) => externalId !== undefined)).toBe(true);
      const dir = tempDir('dp-unknown-cli');
      const out = join(dir, 'out');
      const file = writePointsJob(join(dir, 'job.yaml'), {
        baseUrl: sim.baseUrl,
        out,
        streams: [{ resource: 'datapoints', name: 'points', partitions: 3, timeseries: { externalIds }, end: T0 }],
      });
      const exit = await runCliWith(['run', '--config', file], { cwd: dir, env: { SIM_KEY: KEY } });
      expect(exit.code, describeExit(exit)).toBe(0);
      const warning = /"level":40[^\n]*"series":\[\{"externalId":"TS-NOT-THERE"\}\][^\n]*does not know 1 series/;
      expect(exit.stderr).toMatch(warning);
      expect(exit.stderr).toMatch(/^ {2}points .* done; 1 series unknown to the platform, skipped/m);
      expect(readManifest(out).streams.points?.unknownSeries).toEqual([{ externalId: 'TS-NOT-THERE' }]);
      const records = recordsIn(out);
      expect(records).toHaveLength(1);
      expect(records[0]?.record.streams.find((stream) => stream.name === 'points')?.unknownSeries).toEqual([
        { externalId: 'TS-NOT-THERE' },
      ]);
      const duck = await openDuck();
      try {
        await expectPoints(duck, join(out, 'points'), expectedRaw(sim, known, { start: MIN_POINT_TIME, end: T0 }));
      } finally {
        duck.close();
      }
    },
  );
});
