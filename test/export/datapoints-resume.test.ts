import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Checkpoint } from '../../src/export/state/checkpoint.js';
import { verifyOutput } from '../../src/export/inspect/verify.js';
import { MIN_POINT_TIME } from '../../src/resources/index.js';
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
import {
  describeExit,
  type Exit,
  inspectCrashState,
  listFiles,
  newSimulator,
  readCheckpoint,
  readManifest,
  runCliWith,
  tempDir,
} from '../support/resume-harness.js';
import { createFakeClock } from '../support/fake-clock.js';

/**
 * Datapoints through SIGKILL and resume, with real processes: the CLI kills itself at a failpoint
 * (BULK_EXTRACT_CRASH_AT) the n-th time it reaches it, several times in a row, then a run without
 * failpoint completes the export. After every kill, the checkpoint agrees with the shards it
 * counts: each series it holds in flight has exactly its points up to its `after` committed, every
 * other series all of its points or none. At the end both formats hold every (series, timestamp)
 * exactly once, equal to the simulator's points, and the window pinned by the first run is kept.
 *
 * Data: seed 28, 600 series, 60,000 points, every point with its status; 3 partitions, the series
 * listed 50 a page, shards of 1000 rows: a full run commits about 14 shards of 3000 to 7000 rows.
 */
const KEY = 'datapoints-resume-key-1';
const SERIES = 600;
const POINTS = 60_000;
const FLAGS = { includeStatus: true, ignoreBadDataPoints: false };
const RAW = { resource: 'datapoints', name: 'points', partitions: 3, limit: 50, ...FLAGS };
const AGGREGATES = { resource: 'datapoints', name: 'points', partitions: 3, aggregates: [...FIVE], granularity: '1s' };

let sim: Simulator;
/** Every point the raw stream reads: the points of its window, which ends when the first run starts (after 2025). */
let raw: Expected;
let aggregated: Expected;
const outputs: string[] = [];

beforeAll(async () => {
  // A frozen clock: the simulator's live series gain no point while the test runs.
  const clock = createFakeClock();
  sim = await newSimulator({ seed: 28, timeseries: SERIES, datapoints: POINTS, apiKeys: [KEY], clock });
  raw = expectedRaw(sim, seriesIndexes(sim), { start: MIN_POINT_TIME, end: Date.now() }, FLAGS);
  const numeric = seriesIndexes(sim, (item) => !item.isString);
  aggregated = expectedAggregateRows(sim, numeric, { start: MIN_POINT_TIME, end: Date.now(), granularity: '1s' }, FIVE);
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
  return { dir, out, file: writePointsJob(join(dir, 'job.yaml'), { baseUrl: sim.baseUrl, out, streams: [stream], maxRows: 1000 }) };
}

async function run(job: Job, env: Record<string, string> = {}): Promise<Exit> {
  const exit = await runCliWith(['run', '--config', job.file, '--log-level', 'warn'], { cwd: job.dir, env: { SIM_KEY: KEY, ...env } });
  outputs.push(exit.stdout, exit.stderr);
  return exit;
}

/** Timestamps of each series' expected rows, ascending, by series id. */
function timesBySeries(expected: Expected): Map<number, number[]> {
  const times = new Map<number, number[]>();
  for (const row of expected.parquet.values()) {
    const id = row.timeseriesId as number;
    times.set(id, [...(times.get(id) ?? []), row.timestamp as number]);
  }
  for (const list of times.values()) list.sort((a, b) => a - b);
  return times;
}

/**
 * The checkpoint counts exactly what its shards hold, series by series: a series in flight has its
 * points up to `after` committed (none when null), a series no longer in flight all of its points
 * or none (done, or not listed yet). This is what makes a resume from `after + 1` exact. Returns
 * how many series in flight have some of their points committed, not all.
 */
async function expectCheckpointAgrees(
  out: string,
  checkpoint: Checkpoint | undefined,
  expected: Expected,
): Promise<number> {
  const stream = checkpoint?.streams.points;
  if (stream === undefined) return 0;
  let midway = 0;
  const times = timesBySeries(expected);
  const duck = await openDuck();
  try {
    for (const [m, part] of Object.entries(stream.parts)) {
      const shards = Array.from({ length: part.nextSeq }, (_, seq) => join(out, `points/part=${m}-of-${stream.partitions}/${String(seq).padStart(6, '0')}.parquet`));
      const committed = new Map<number, { n: number; last: number }>();
      if (shards.length > 0) {
        const list = shards.map((path) => `'${path}'`).join(', ');
        const rows = await duck.rows(`SELECT timeseriesId AS id, count(*) AS n, epoch_ms(max("timestamp")) AS last FROM read_parquet([${list}]) GROUP BY ALL`);
        for (const row of rows) committed.set(Number(row.id), { n: Number(row.n), last: Number(row.last) });
      }
      const inFlight = new Map((part.points?.series ?? []).map((series) => [series.id, series]));
      for (const series of part.points?.series ?? []) {
        expect(series.start, 'no series is read in pieces at this size').toBeUndefined();
        const all = times.get(series.id ?? -1) ?? [];
        const upTo = series.after === null ? 0 : all.filter((time) => time <= series.after!).length;
        const got = committed.get(series.id ?? -1);
        expect(got?.n ?? 0, `part ${m}: series ${series.id} in flight after ${series.after}: rows committed`).toBe(upTo);
        if (series.after === null) continue;
        expect(got?.last, `part ${m}: series ${series.id}: its last committed point`).toBe(series.after);
        if (upTo < all.length) midway++;
      }
      for (const [id, got] of committed) {
        if (!inFlight.has(id)) expect(got.n, `part ${m}: series ${id}, not in flight, committed whole`).toBe(times.get(id)?.length);
      }
    }
  } finally {
    duck.close();
  }
  return midway;
}

interface Killed {
  checkpoint: Checkpoint | undefined;
  /** Series in flight with some of their points committed, not all. */
  midway: number;
  /** Rows the checkpoint counts. */
  rows: number;
}

/** Runs with the failpoint, expects the process to die by it, and checks what it left. */
async function crashAt(job: Job, point: string, count: number, expected: Expected): Promise<Killed> {
  const exit = await run(job, { BULK_EXTRACT_CRASH_AT: `${point}:${count}` });
  expect(exit.signal, `expected a SIGKILL at ${point}:${count}; ${describeExit(exit)}`).toBe('SIGKILL');
  const state = await inspectCrashState(job.out);
  const midway = await expectCheckpointAgrees(job.out, state.checkpoint, expected);
  const rows = Object.values(state.checkpoint?.streams.points?.parts ?? {}).reduce((sum, part) => sum + part.rows, 0);
  return { checkpoint: state.checkpoint, midway, rows };
}

/** Resumes without failpoint to the end; the output is exact, point by point, and verified. */
async function resumeToEnd(job: Job, expected: Expected, pinnedEnd: number | undefined): Promise<void> {
  const exit = await run(job);
  expect(exit.code, describeExit(exit)).toBe(0);
  expect(exit.stderr).toMatch(/^bulk-extract: complete/m);
  const files = listFiles(job.out);
  expect(files.filter((file) => file.endsWith('.inprogress')), 'temp files left').toEqual([]);
  expect(existsSync(join(job.out, '_SUCCESS'))).toBe(true);
  const checkpoint = readCheckpoint(job.out);
  const parts = Object.values(checkpoint.streams.points?.parts ?? {});
  expect(parts.every((part) => part.done && part.points?.series.length === 0)).toBe(true);
  if (pinnedEnd !== undefined) expect(readManifest(job.out).streams.points?.pointWindow?.end, 'the window of the first run').toBe(pinnedEnd);
  const duck = await openDuck();
  try {
    await expectPoints(duck, join(job.out, 'points'), expected);
  } finally {
    duck.close();
  }
  const report = await verifyOutput(job.out);
  expect(report.problems).toEqual([]);
  expect(report.keysChecked).toBeGreaterThan(0);
}

describe.concurrent('datapoints: SIGKILL at a failpoint, several times, then a resume', () => {
  // Counts per process, each run resuming what the previous left. A Parquet file is written in
  // several chunks (row groups of 1000 rows and a footer), so its failpoint is reached more often.
  const CASES: [string, number[]][] = [
    ['after-append', [1, 3, 5]],
    ['after-encode-chunk', [2, 9, 20]],
    ['after-shard-rename', [1, 3, 5]],
    ['after-manifest-write', [2, 3, 5]],
    ['after-checkpoint-write', [1, 3, 5]],
  ];

  it.each(CASES)('raw points, %s at counts %j: the checkpoint agrees with its shards after each kill; the resume is exact', { timeout: 240_000 }, async (point, counts) => {
    const job = newJob(RAW, `dp-kill-${point}`);
    let pinnedEnd: number | undefined;
    let rows = 0;
    for (const count of counts) {
      const killed = await crashAt(job, point, count, raw);
      pinnedEnd ??= killed.checkpoint?.streams.points?.window?.until;
      expect(killed.rows, 'checkpointed progress never goes back').toBeGreaterThanOrEqual(rows);
      rows = killed.rows;
    }
    expect(pinnedEnd, 'the first killed run pinned its window').toBeDefined();
    await resumeToEnd(job, raw, pinnedEnd);
  });

  // At 1s nearly every point is a bucket of its own, and a request holds at most 10,000 of them: many
  // series are read over several requests, so kills find some of them partly committed.
  it('aggregates (1s), killed at different points in a row, some series partly committed: exact after the resume', { timeout: 240_000 }, async () => {
    const job = newJob(AGGREGATES, 'dp-kill-aggregates');
    const kills = [['after-append', 2], ['after-shard-rename', 3], ['after-checkpoint-write', 4], ['after-encode-chunk', 5]] as const;
    let midway = 0;
    for (const [point, count] of kills) midway += (await crashAt(job, point, count, aggregated)).midway;
    expect(midway, 'series in flight with some of their buckets committed').toBeGreaterThan(0);
    await resumeToEnd(job, aggregated, undefined);
  });

  it('explicit ids with one the platform does not know: killed twice, resumed; it is named once, every other point exact', { timeout: 240_000 }, async () => {
    const indexes = seriesIndexes(sim, (_, index) => index % 4 === 1);
    const missing = sim.dataset.timeseries.idOf(SERIES + 11);
    const ids = indexes.map((index) => sim.dataset.timeseries.idOf(index));
    ids.splice(7, 0, missing);
    const job = newJob({ resource: 'datapoints', name: 'points', partitions: 3, timeseries: { ids }, ...FLAGS }, 'dp-kill-unknown');
    const expected = expectedRaw(sim, indexes, { start: MIN_POINT_TIME, end: Date.now() }, FLAGS);
    await crashAt(job, 'after-checkpoint-write', 2, expected);
    await crashAt(job, 'after-append', 2, expected);
    await resumeToEnd(job, expected, undefined);
    expect(readManifest(job.out).streams.points?.unknownSeries).toEqual([{ id: missing }]);
  });
});
