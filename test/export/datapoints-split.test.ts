import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { verifyOutput } from '../../src/export/inspect/verify.js';
import { runJob } from '../../src/export/run/run-job.js';
import type { Checkpoint } from '../../src/export/state/checkpoint.js';
import { silentLogger } from '../../src/log.js';
import { MIN_POINT_TIME } from '../../src/resources/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { type Expected, expectedRaw, expectPoints, ndjsonRows, writePointsJob } from '../support/datapoints-export.js';
import { openDuck } from '../support/export-duckdb.js';
import { createFakeClock } from '../support/fake-clock.js';
import { describeExit, inspectCrashState, newSimulator, readCheckpoint, runCliWith, tempDir } from '../support/resume-harness.js';

/**
 * One long series is not read one request after another: once few series are left, a raw series
 * that still holds more than three requests' worth of points (300,000) is split into windows of
 * time read in parallel (SeriesTasks.split), each window kept in the checkpoint as a piece. Here
 * the simulator has a single series of 450,000 points (seed 28: a string series, 4% of its points
 * bad, every one read with its status): its first answer holds 100,000 points, the 350,000 left
 * are read in two windows.
 *
 * - In one Parquet shard the windows' points, which arrive interleaved, are sorted by time; both
 *   formats hold every point once.
 * - Killed while the pieces are in flight and resumed: the checkpoint's pieces agree with the
 *   committed shards, and the output is exact.
 *
 * Past the 20,000 to 200,000 points of the other tests, as a split needs more than 400,000 points
 * in one series; the run takes about 4 s.
 */
const KEY = 'datapoints-split-key-01';
const POINTS = 450_000;
const FLAGS = { includeStatus: true, ignoreBadDataPoints: false };
const T0 = Date.UTC(2026, 0, 1);
const STREAM = { resource: 'datapoints', name: 'points', partitions: 1, end: T0, ...FLAGS };

let sim: Simulator;
let expected: Expected;

beforeAll(async () => {
  // The simulator starts at the runs' time: its live series' points reach it.
  sim = await newSimulator({ seed: 28, timeseries: 1, datapoints: POINTS, apiKeys: [KEY], clock: createFakeClock(T0) });
  expected = expectedRaw(sim, [0], { start: MIN_POINT_TIME, end: T0 }, FLAGS);
  expect(expected.parquet.size).toBe(POINTS);
});

const outputs: string[] = [];

afterAll(() => {
  expect(outputs.join('\n')).not.toContain(KEY);
});

function newJob(maxRows: number, prefix: string): { dir: string; out: string; file: string } {
  const dir = tempDir(prefix);
  const out = join(dir, 'out');
  return { dir, out, file: writePointsJob(join(dir, 'job.yaml'), { baseUrl: sim.baseUrl, out, streams: [STREAM], maxRows }) };
}

/**
 * The checkpoint's pieces of the series agree with the committed Parquet shards: each piece
 * [start, end) has exactly the points up to its `after` committed (none when null). Returns the
 * pieces.
 */
async function expectPiecesAgree(out: string, checkpoint: Checkpoint | undefined): Promise<number> {
  const part = checkpoint?.streams.points?.parts['1'];
  const pieces = (part?.points?.series ?? []).filter((series) => series.start !== undefined);
  if (part === undefined || pieces.length === 0) return 0;
  const shards = Array.from({ length: part.nextSeq }, (_, seq) => `'${join(out, `points/part=1-of-1/${String(seq).padStart(6, '0')}.parquet`)}'`);
  const times = [...expected.parquet.values()].map((row) => row.timestamp as number);
  const duck = await openDuck();
  try {
    for (const piece of pieces) {
      const { start = 0, end = 0, after } = piece;
      const got = shards.length === 0
        ? { n: 0n, last: null }
        : await duck.one(`SELECT count(*) AS n, epoch_ms(max("timestamp")) AS last FROM read_parquet([${shards.join(', ')}])
            WHERE epoch_ms("timestamp") >= ${start} AND epoch_ms("timestamp") < ${end}`);
      const wanted = after === null ? 0 : times.filter((time) => time >= start && time < end && time <= after).length;
      expect(Number(got.n), `piece [${start}, ${end}) after ${after}: rows committed`).toBe(wanted);
      if (after !== null) expect(Number(got.last), `piece [${start}, ${end}): its last committed point`).toBe(after);
    }
  } finally {
    duck.close();
  }
  return pieces.length;
}

describe('a long series read in windows of time', () => {
  it('in one Parquet shard: the windows\' points, interleaved as they came (NDJSON), sorted by time; both formats exact', { timeout: 120_000 }, async () => {
    const job = newJob(1_000_000, 'dp-split');
    const config = loadConfig(job.file, { SIM_KEY: KEY });
    const result = await runJob({ config, logger: silentLogger, clock: createFakeClock(T0) });
    expect(result.errors).toEqual([]);
    expect(result.state).toBe('complete');
    const folder = join(job.out, 'points');
    const times = ndjsonRows(folder).map((row) => row.timestamp as number);
    const backwards = times.filter((time, k) => k > 0 && time < times[k - 1]!).length;
    expect(backwards, 'the windows were read in parallel into one shard').toBeGreaterThan(0);
    expect(result.manifest.files.map((file) => `${file.format} ${file.rows}`).sort()).toEqual([`ndjson ${POINTS}`, `parquet ${POINTS}`]);
    const duck = await openDuck();
    try {
      await expectPoints(duck, folder, expected);
    } finally {
      duck.close();
    }
    expect((await verifyOutput(job.out)).problems).toEqual([]);
  });

  it('killed with its pieces in flight, then resumed: the pieces agree with the shards; exact', { timeout: 180_000 }, async () => {
    const job = newJob(20_000, 'dp-split-kill');
    const run = async (env: Record<string, string>) => {
      const exit = await runCliWith(['run', '--config', job.file, '--log-level', 'warn'], { cwd: job.dir, env: { SIM_KEY: KEY, ...env } });
      outputs.push(exit.stdout, exit.stderr);
      return exit;
    };
    // Its 3rd checkpoint write records the 2nd commit: the first answer's 100,000 points, then the
    // first window's (or the second's) next 100,000, both windows in flight.
    const killed = await run({ BULK_EXTRACT_CRASH_AT: 'after-checkpoint-write:3' });
    expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
    const state = await inspectCrashState(job.out);
    expect(await expectPiecesAgree(job.out, state.checkpoint), 'the checkpoint holds pieces of the series').toBe(2);
    const exit = await run({});
    expect(exit.code, describeExit(exit)).toBe(0);
    expect(readCheckpoint(job.out).streams.points?.parts['1']?.done).toBe(true);
    const duck = await openDuck();
    try {
      await expectPoints(duck, join(job.out, 'points'), expected);
    } finally {
      duck.close();
    }
    expect((await verifyOutput(job.out)).problems).toEqual([]);
  });
});
