import { cpSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { verifyOutput } from '../../src/export/inspect/verify.js';
import type { Checkpoint } from '../../src/export/state/checkpoint.js';
import type { Manifest } from '../../src/export/state/manifest.js';
import type { Simulator } from '../../src/simulator/index.js';
import { allPoints } from '../support/datapoints.js';
import { openDuck } from '../support/export-duckdb.js';
import {
  describeExit,
  type Exit,
  listFiles,
  newJob,
  newSimulator,
  readCheckpoint,
  readManifest,
  runCliWith,
  sha256,
  type StreamSpec,
  tempDir,
} from '../support/resume-harness.js';
import type { PointsStreamSpec } from '../support/torture-points.js';

/**
 * `verify` reads every row of a datapoints stream back and checks it against what the output
 * recorded: each row's time against the run's window (the manifest's pointWindow: raw points in
 * [start, end), aggregate buckets from the one that holds `start`), and each series the
 * checkpoint has in flight against its partition's shards (its latest time there must be its
 * `after`). Each case forges one Parquet shard with DuckDB and makes its manifest entry match
 * (size, sha256), so that nothing but these checks can tell.
 */
const KEY = 'verify-points-key-01';
const TEN_YEARS = 'INTERVAL 10 YEAR';

let sim: Simulator;
/**
 * A complete raw export; a complete export of 1m aggregates whose window starts inside a minute;
 * an export of 1s aggregates killed midway.
 */
let rawOut: string;
let aggregatesOut: string;
let killedOut: string;
/** The window's start of the aggregates stream: a millisecond after a point of series 0. */
let aggregatesFrom: number;

/** From 2019, when the simulator's points begin: ten years before any of them is outside the window. */
const RAW: PointsStreamSpec = { resource: 'datapoints', name: 'points', partitions: 2, start: Date.UTC(2019, 0, 1) };
const KILLED: PointsStreamSpec = { resource: 'datapoints', name: 'points', partitions: 3, aggregates: ['count', 'average'], granularity: '1s' };

async function exported(
  stream: PointsStreamSpec,
  prefix: string,
  env: Record<string, string> = {},
): Promise<{ out: string; exit: Exit }> {
  const job = newJob(sim, [stream] as unknown as StreamSpec[], { formats: ['parquet', 'ndjson'], maxRows: 5000 }, prefix);
  const exit = await runCliWith(['run', '--config', job.file, '--log-level', 'warn'], { cwd: job.dir, env: { SIM_KEY: KEY, ...env } });
  return { out: job.out, exit };
}

beforeAll(async () => {
  sim = await newSimulator({ seed: 43, timeseries: 300, datapoints: 60_000, apiKeys: [KEY] });
  const points = allPoints(sim.dataset.datapoints.series(0));
  aggregatesFrom = points[Math.floor(points.length / 2)]!.timestamp + 1;
  const aggregates: PointsStreamSpec = { ...KILLED, name: 'points', partitions: 1, granularity: '1m', start: aggregatesFrom };
  const [raw, agg, killed] = await Promise.all([
    exported(RAW, 'verify-raw'),
    exported(aggregates, 'verify-agg'),
    exported(KILLED, 'verify-killed', { BULK_EXTRACT_CRASH_AT: 'after-checkpoint-write:3' }),
  ]);
  expect(raw.exit.code, describeExit(raw.exit)).toBe(0);
  expect(agg.exit.code, describeExit(agg.exit)).toBe(0);
  expect(killed.exit.signal, describeExit(killed.exit)).toBe('SIGKILL');
  [rawOut, aggregatesOut, killedOut] = [raw.out, agg.out, killed.out];
  // The shards the killed run renamed into place but did not list yet: a resume removes them.
  const listed = new Set(readManifest(killedOut).files.map((file) => file.path));
  for (const path of listFiles(join(killedOut, 'points'))) {
    if (!listed.has(`points/${path}`)) rmSync(join(killedOut, 'points', path));
  }
}, 120_000);

/** A copy of `out` for one case. */
function copyOf(out: string, prefix: string): string {
  const copy = join(tempDir(prefix), 'out');
  cpSync(out, copy, { recursive: true });
  return copy;
}

/** A row of a Parquet shard: its series and time (epoch ms). */
interface PointRow {
  id: number;
  timestamp: number;
}

/** The `offset`-th row of the shard at `path` (in `out`). */
async function rowOf(out: string, path: string, offset: number): Promise<PointRow> {
  const duck = await openDuck();
  try {
    const row = await duck.one(`SELECT timeseriesId AS id, epoch_ms("timestamp") AS ts FROM read_parquet('${join(out, path)}') LIMIT 1 OFFSET ${offset}`);
    return { id: Number(row.id), timestamp: Number(row.ts) };
  } finally {
    duck.close();
  }
}

/**
 * Rewrites the Parquet shard at `path` with DuckDB, the time of `row` set to `time` (an SQL
 * expression of the row's "timestamp"), and makes its manifest entry match the new file.
 */
async function forge(out: string, path: string, row: PointRow, time: string): Promise<void> {
  const file = join(out, path);
  const duck = await openDuck();
  try {
    const when = `timeseriesId = ${row.id} AND epoch_ms("timestamp") = ${row.timestamp}`;
    const changed = await duck.one(`SELECT count(*) AS n FROM read_parquet('${file}') WHERE ${when}`);
    expect(Number(changed.n), 'the row to forge').toBe(1);
    await duck.rows(
      `COPY (SELECT * REPLACE (CASE WHEN ${when} THEN ${time} ELSE "timestamp" END AS "timestamp") FROM read_parquet('${file}')) TO '${file}.forged' (FORMAT parquet)`,
    );
  } finally {
    duck.close();
  }
  renameSync(`${file}.forged`, file);
  const manifestPath = join(out, '_manifest.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest;
  const entry = manifest.files.find((f) => f.path === path)!;
  entry.bytes = statSync(file).size;
  entry.sha256 = sha256(file);
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
}

async function verifyCli(out: string): Promise<{ exit: Exit; problems: string[] }> {
  const exit = await runCliWith(['verify', out, '--json'], { cwd: out });
  return { exit, problems: (JSON.parse(exit.stdout) as { problems: string[] }).problems };
}

const iso = (time: number) => `${new Date(time).toISOString()} (${time})`;

function firstParquet(out: string, m = 1): string {
  const file = readManifest(out).files.find((f) => f.format === 'parquet' && f.m === m && f.seq === 0);
  if (file === undefined) throw new Error(`no Parquet shard 0 of partition ${m}`);
  return file.path;
}

describe.concurrent('verify: the rows of a datapoints stream against its window', () => {
  it('untouched exports verify, a bucket before the window\'s start that holds it included', async () => {
    for (const out of [rawOut, aggregatesOut]) {
      const { exit, problems } = await verifyCli(out);
      expect(problems).toEqual([]);
      expect(exit.code, describeExit(exit)).toBe(0);
    }
    const duck = await openDuck();
    try {
      const early = await duck.one(`SELECT count(*) AS n FROM read_parquet('${aggregatesOut}/points/*/*.parquet') WHERE epoch_ms("timestamp") < ${aggregatesFrom}`);
      expect(Number(early.n), 'buckets that begin before the window\'s start and hold it').toBeGreaterThan(0);
    } finally {
      duck.close();
    }
    expect(readManifest(aggregatesOut).streams.points?.pointWindow?.start).toBe(aggregatesFrom);
  });

  it('a raw point ten years before the window: exit 1, the shard and its row named', async () => {
    const out = copyOf(rawOut, 'verify-raw-early');
    const path = firstParquet(out);
    const row = await rowOf(out, path, 5);
    await forge(out, path, row, `"timestamp" - ${TEN_YEARS}`);
    const { exit, problems } = await verifyCli(out);
    expect(exit.code, describeExit(exit)).toBe(1);
    const window = readManifest(out).streams.points!.pointWindow!;
    const date = new Date(row.timestamp);
    date.setUTCFullYear(date.getUTCFullYear() - 10);
    const moved = date.getTime();
    expect(problems).toEqual([
      `${path}: row 6 (series ${row.id}, ${iso(moved)}) lies before the window's start: points reads [${iso(window.start)}, ${iso(window.end)}) (the manifest's pointWindow)`,
    ]);
  });

  it('an aggregate bucket ten years before the window: exit 1, the shard and its row named', async () => {
    const out = copyOf(aggregatesOut, 'verify-agg-early');
    const path = firstParquet(out);
    const row = await rowOf(out, path, 0);
    await forge(out, path, row, `"timestamp" - ${TEN_YEARS}`);
    const { exit, problems } = await verifyCli(out);
    expect(exit.code, describeExit(exit)).toBe(1);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${path}: row 1 \\(series ${row.id}, .*\\) lies before the 1m bucket that holds the window's start: points reads \\[`));
  });
});

describe.concurrent('verify: each series in flight in the checkpoint against its partition\'s shards', () => {
  /** A series in flight with points committed, its partition, and the shard that holds its `after`. */
  async function inFlight(out: string): Promise<{ m: number; id: number; after: number; path: string }> {
    const checkpoint: Checkpoint = readCheckpoint(out);
    const manifest = readManifest(out);
    const duck = await openDuck();
    try {
      for (const [m, part] of Object.entries(checkpoint.streams.points?.parts ?? {})) {
        const series = part.points?.series.find((s) => s.after !== null && s.id !== undefined);
        if (series === undefined) continue;
        for (const file of manifest.files.filter((f) => f.format === 'parquet' && f.m === Number(m) && f.seq < part.nextSeq)) {
          const found = await duck.one(
            `SELECT count(*) AS n FROM read_parquet('${join(out, file.path)}') WHERE timeseriesId = ${series.id} AND epoch_ms("timestamp") = ${series.after}`,
          );
          if (Number(found.n) === 1) return { m: Number(m), id: series.id!, after: series.after!, path: file.path };
        }
      }
    } finally {
      duck.close();
    }
    throw new Error('no series in flight with its last committed point in a shard');
  }

  it('the output the killed run left verifies', async () => {
    const report = await verifyOutput(killedOut);
    expect(report.problems).toEqual([]);
    expect(report.checkpointChecked).toBe(true);
  });

  it('its last committed point moved half a second earlier in its shard: exit 1, the series and partition named', async () => {
    const out = copyOf(killedOut, 'verify-after');
    const { m, id, after, path } = await inFlight(out);
    await forge(out, path, { id, timestamp: after }, '"timestamp" - INTERVAL 500 MILLISECOND');
    const { exit, problems } = await verifyCli(out);
    expect(exit.code, describeExit(exit)).toBe(1);
    // Only the Parquet shard was forged: the NDJSON shards hold what the checkpoint says.
    expect(problems).toEqual([expect.stringMatching(new RegExp(
      `^points partition ${m}/3 \\(parquet\\): the checkpoint has series id ${id} in flight with its points committed up to ${iso(after).replace(/[()]/g, '\\$&')}, but the partition's shards hold points up to .*: a resume would lose or repeat points$`,
    ))]);
  });
});
