import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyOutput } from '../../src/export/inspect/verify.js';
import type { WindowManifest } from '../../src/export/state/manifest.js';
import type { Simulator } from '../../src/simulator/index.js';
import {
  type Expected,
  expectedAggregateRows,
  expectedRaw,
  expectPoints,
  FIVE,
  seriesIndexes,
  writePointsJob,
} from '../support/datapoints-export.js';
import { openDuck } from '../support/export-duckdb.js';
import { createFakeClock } from '../support/fake-clock.js';
import { describeExit, type Exit, newSimulator, readCheckpoint, runCliWith, tempDir } from '../support/resume-harness.js';

/**
 * mode: snapshot for datapoints: each run reads `start: <N>s-ago` up to its own start into a run
 * folder of its own, sealed with its manifest and `_SUCCESS`; `keep: 2` deletes the oldest only
 * once a newer one is sealed; a run killed at a failpoint resumes the same window (not a new one),
 * exactly. The relative start is chosen so that it cuts through the simulator's points, and every
 * sealed run is compared point by point with the simulator's points of the window its manifest
 * names. Real CLI, real simulator over HTTP, Parquet read back with DuckDB.
 */
const KEY = 'datapoints-snapshot-key-1';
const FLAGS = { includeStatus: true };

let sim: Simulator;
/** `start` of the streams: N seconds before a run's start, N such that about half of the points lie before it. */
let start: string;
const outputs: string[] = [];

beforeAll(async () => {
  // A frozen clock: the live series stop growing at the simulator's start, so that the points of
  // a run's last bucket (which reaches past its window's end) are those the test reads later.
  const clock = createFakeClock(Date.now());
  sim = await newSimulator({ seed: 31, timeseries: 120, datapoints: 12_000, apiKeys: [KEY], clock });
  const times: number[] = [];
  for (const index of seriesIndexes(sim)) {
    const series = sim.dataset.datapoints.series(index);
    for (let k = 0; k < series.count; k++) times.push(series.timestampOf(k));
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)] ?? 0;
  start = `${Math.floor((Date.now() - median) / 1000)}s-ago`;
});

afterAll(() => {
  expect(outputs.join('\n')).not.toContain(KEY);
});

interface Job {
  dir: string;
  out: string;
  file: string;
}

function newJob(stream: Record<string, unknown>, prefix: string): Job {
  const dir = tempDir(prefix);
  const out = join(dir, 'out');
  const file = writePointsJob(join(dir, 'job.yaml'), { baseUrl: sim.baseUrl, out, streams: [stream], maxRows: 1000 });
  return { dir, out, file };
}

async function run(job: Job, env: Record<string, string> = {}): Promise<Exit> {
  const exit = await runCliWith(['run', '--config', job.file, '--log-level', 'warn'], { cwd: job.dir, env: { SIM_KEY: KEY, ...env } });
  outputs.push(exit.stdout, exit.stderr);
  return exit;
}

const runsOf = (job: Job) => readdirSync(join(job.out, 'points')).filter((name) => name.startsWith('run=')).sort();
const latestOf = (job: Job) => readFileSync(join(job.out, 'points', '_LATEST'), 'utf8').trim();

/** A sealed run's manifest; its folder holds exactly `expected(window)`, point by point, in both formats. */
async function expectSealed(
  job: Job,
  run: string,
  expected: (window: { start: number; end: number }) => Expected,
): Promise<WindowManifest> {
  const folder = join(job.out, 'points', run);
  expect(existsSync(join(folder, '_SUCCESS')), `${run} sealed`).toBe(true);
  const manifest = JSON.parse(readFileSync(join(folder, '_manifest.json'), 'utf8')) as WindowManifest;
  const window = manifest.pointWindow;
  if (window === undefined) throw new Error(`${run}: its manifest names no point window`);
  const wanted = expected(window);
  expect(wanted.parquet.size, 'the window holds points (it cuts through them)').toBeGreaterThan(100);
  expect(manifest.rows, `${run}: rows its manifest counts`).toBe(wanted.parquet.size);
  const duck = await openDuck();
  try {
    await expectPoints(duck, folder, wanted);
  } finally {
    duck.close();
  }
  return manifest;
}

describe('datapoints, mode: snapshot', () => {
  it('each run reads the window relative to its own start; keep 2; a killed run resumes its own window exactly', { timeout: 240_000 }, async () => {
    const job = newJob({ resource: 'datapoints', name: 'points', partitions: 2, limit: 50, mode: 'snapshot', keep: 2, start, ...FLAGS }, 'dp-snapshot');
    const raw = (window: { start: number; end: number }) => expectedRaw(sim, seriesIndexes(sim), window, FLAGS);

    const before1 = Date.now();
    const first = await run(job);
    expect(first.code, describeExit(first)).toBe(0);
    const [run1 = ''] = runsOf(job);
    expect(runsOf(job)).toHaveLength(1);
    const window1 = (await expectSealed(job, run1, raw)).pointWindow!;
    const agoMs = Number(/^(\d+)s-ago$/.exec(start)?.[1]) * 1000;
    expect(window1.end - window1.start, 'the window is start..the run\'s start').toBe(agoMs);
    expect(window1.end).toBeGreaterThanOrEqual(before1);

    const second = await run(job);
    expect(second.code, describeExit(second)).toBe(0);
    const [, run2 = ''] = runsOf(job);
    expect(latestOf(job)).toBe(run2);
    const window2 = (await expectSealed(job, run2, raw)).pointWindow!;
    expect(window2.start, 'the second run\'s window moved with its start').toBeGreaterThan(window1.start);
    expect(window2.end - window2.start).toBe(agoMs);

    // The third is killed three times at different points: each resume goes on in its own window, not a new one.
    let pinned: { from: number | null; until: number } | null | undefined;
    for (const failpoint of ['after-shard-rename:2', 'after-append:3', 'after-checkpoint-write:2']) {
      const killed = await run(job, { BULK_EXTRACT_CRASH_AT: failpoint });
      expect(killed.signal, `${failpoint}: ${describeExit(killed)}`).toBe('SIGKILL');
      const window = readCheckpoint(job.out).streams.points?.window;
      pinned ??= window;
      expect(window, `${failpoint}: the window of the first killed run`).toEqual(pinned);
      expect(runsOf(job), 'keep deletes nothing before the new snapshot is sealed').toHaveLength(3);
      expect(latestOf(job)).toBe(run2);
    }
    const [, , run3 = ''] = runsOf(job);
    expect(runsOf(job).slice(0, 2)).toEqual([run1, run2]);
    const resumed = await run(job);
    expect(resumed.code, describeExit(resumed)).toBe(0);
    expect(runsOf(job)).toEqual([run2, run3]);
    expect(latestOf(job)).toBe(run3);
    const window3 = (await expectSealed(job, run3, raw)).pointWindow!;
    expect({ start: window3.start, end: window3.end }, 'the window the killed run pinned').toEqual({ start: pinned?.from, end: pinned?.until });
    const report = await verifyOutput(job.out);
    expect(report.problems).toEqual([]);
    const status = await runCliWith(['status', '--out', job.out]);
    expect(status.stdout).toContain(`latest complete snapshot: ${run3} (2 kept)`);
  });

  it('aggregates: each run\'s buckets are those of its own window', { timeout: 120_000 }, async () => {
    const job = newJob({ resource: 'datapoints', name: 'points', partitions: 2, mode: 'snapshot', start, aggregates: [...FIVE], granularity: '1h' }, 'dp-snapshot-agg');
    const numeric = seriesIndexes(sim, (item) => !item.isString);
    const buckets = (window: { start: number; end: number }) => expectedAggregateRows(sim, numeric, { ...window, granularity: '1h' }, FIVE);
    for (const round of [1, 2]) {
      const exit = await run(job);
      expect(exit.code, `round ${round}: ${describeExit(exit)}`).toBe(0);
    }
    const runs = runsOf(job);
    expect(runs).toHaveLength(2);
    for (const run of runs) await expectSealed(job, run, buckets);
  });
});
