import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CHECKPOINT_VERSION } from '../../src/export/state/checkpoint-schema.js';
import type { Simulator } from '../../src/simulator/index.js';
import {
  describeExit,
  type Exit,
  listFiles,
  newJob,
  newSimulator,
  readCheckpoint,
  runCliWith,
  snapshot,
  type StreamSpec,
} from '../support/resume-harness.js';
import { createFakeClock } from '../support/fake-clock.js';
import { expectEveryPoint, type PointsStreamSpec } from '../support/torture-points.js';
import { expectEveryInstance, type InstancesStreamSpec } from '../support/torture-instances.js';

/**
 * A checkpoint edited by hand (or damaged) after bulk-extract wrote it: each edit below lost data
 * without a word before the checkpoint carried a digest of its content (a series' `after` moved
 * forward, a series left out, the window's end lowered, an instances column renamed to `space`),
 * or blamed bulk-extract for it (`listed: false`). A resume now refuses each with exit 2 and a line
 * naming the file, and writes nothing; the checkpoint as written, or one of an earlier version
 * (no digest), resumes to an exact output.
 */
const KEY = 'checkpoint-edits-key-1';
/** Buckets of 1s: about 200 a series, 100 a series in each request, so a kill finds series partly committed. */
const POINTS: PointsStreamSpec = { resource: 'datapoints', name: 'points', partitions: 3, aggregates: ['count', 'average'], granularity: '1s' };
const INSTANCES: InstancesStreamSpec = {
  resource: 'instances',
  name: 'assets',
  view: { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' },
  limit: 100,
};

type Stream = PointsStreamSpec | InstancesStreamSpec;

let sim: Simulator;
/** Outputs killed in the middle of a run, for each case to copy. */
let pointsOut: string;
let instancesOut: string;
/** A split job of two workers whose worker 0 was killed after its first commit. */
let splitOut: string;

interface Job {
  dir: string;
  out: string;
  file: string;
}

function run(job: Job, env: Record<string, string> = {}): Promise<Exit> {
  return runCliWith(['run', '--config', job.file, '--log-level', 'warn'], { cwd: job.dir, env: { SIM_KEY: KEY, ...env } });
}

/** Shards of 1000 rows (points), 200 rows (instances: three shards of the view's 600). */
function jobOf(stream: Stream, prefix: string): Job {
  const maxRows = stream.resource === 'instances' ? 200 : 1000;
  return newJob(sim, [stream] as unknown as StreamSpec[], { formats: ['parquet', 'ndjson'], maxRows }, prefix);
}

/** A job whose output folder is a copy of `out`. */
function copyOf(out: string, stream: Stream, prefix: string): Job {
  const job = jobOf(stream, prefix);
  cpSync(out, job.out, { recursive: true });
  return job;
}

/** Runs `stream` until the process kills itself at its `count`-th checkpoint write; resolves to its output. */
async function killedAt(stream: Stream, count: number, prefix: string): Promise<string> {
  const job = jobOf(stream, prefix);
  const exit = await run(job, { BULK_EXTRACT_CRASH_AT: `after-checkpoint-write:${count}` });
  expect(exit.signal, describeExit(exit)).toBe('SIGKILL');
  return job.out;
}

/** Events in 2 partitions of 4 pages (a page a shard), shared by 2 workers: one partition each. */
const EVENTS: StreamSpec = { resource: 'events', partitions: 2, limit: 500 };

function splitJob(prefix: string): Job {
  return newJob(sim, [EVENTS], { formats: ['ndjson'], maxRows: 500 }, prefix);
}

function worker(job: Job, index: number, env: Record<string, string> = {}): Promise<Exit> {
  return runCliWith(['run', '--config', job.file, '--shard', `${index}/2`, '--log-level', 'warn'], { cwd: job.dir, env: { SIM_KEY: KEY, ...env } });
}

async function splitKilled(): Promise<string> {
  const job = splitJob('edits-split');
  const exit = await worker(job, 0, { BULK_EXTRACT_CRASH_AT: 'after-checkpoint-write:2' });
  expect(exit.signal, describeExit(exit)).toBe('SIGKILL');
  return job.out;
}

/** The split job's agreement file, and worker 0's checkpoint, in `out`. */
function splitFiles(out: string): { agreement: string; worker0: string } {
  const agreement = join(out, '_workers', 'agreement.json');
  const { id } = JSON.parse(readFileSync(agreement, 'utf8')) as { id: string };
  return { agreement, worker0: join(out, '_workers', id, 'worker-0-of-2.checkpoint.json') };
}

type Json = Record<string, unknown>;
interface SeriesJson {
  id?: number;
  after: number | null;
}
interface PointsPartJson {
  done: boolean;
  /** Absent until the partition's first commit. */
  points?: { listing: string | null; listed: boolean; series: SeriesJson[] };
}

/** Edits a state file's JSON by hand, as a user with an editor would: the rest of the file stays as it was. */
function editFile(path: string, change: (value: Json) => void): void {
  const value = JSON.parse(readFileSync(path, 'utf8')) as Json;
  change(value);
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

function edit(job: Job, change: (checkpoint: Json) => void): void {
  editFile(join(job.out, '_checkpoint.json'), change);
}

function pointsParts(checkpoint: Json): PointsPartJson[] {
  const streams = checkpoint.streams as Record<string, { parts: Record<string, PointsPartJson> }>;
  return Object.values(streams.points!.parts);
}

/** A partition whose listing ended, with series in flight, one of them with points committed. */
function partInFlight(checkpoint: Json): PointsPartJson & { series: SeriesJson } {
  for (const part of pointsParts(checkpoint)) {
    const series = part.points?.series.find((s) => s.after !== null);
    if (part.points?.listed === true && series !== undefined) return { ...part, series };
  }
  throw new Error('no partition with its listing ended and a series in flight with points committed');
}

/** The output's files and their sha256, but the locks the killed run left (a resume takes them over, then lets go). */
function filesOf(out: string): Record<string, string> {
  return Object.fromEntries(Object.entries(snapshot(out)).filter(([path]) => !path.endsWith('.lock')));
}

/**
 * A resume refused: exit 2, one line naming the checkpoint, nothing changed in the output but a run
 * record. Resolves to the line's message.
 */
async function expectRefused(job: Job, wrong: RegExp): Promise<string> {
  const before = filesOf(job.out);
  const exit = await run(job);
  expect(exit.code, describeExit(exit)).toBe(2);
  const line = exit.stderr.split('\n').find((text) => text.includes('_checkpoint.json')) ?? '';
  expect(line, exit.stderr).toContain(join(job.out, '_checkpoint.json'));
  expect(line).toMatch(wrong);
  expect(line).toMatch(/--fresh/);
  expect(exit.stderr).not.toMatch(/bug of bulk-extract|please report/);
  expect(filesOf(job.out), 'the refused resume changed the output').toEqual(before);
  expect(listFiles(job.out)).not.toContain('.lock');
  return line.replace(/^bulk-extract run: /, '');
}

beforeAll(async () => {
  sim = await newSimulator({
    seed: 42,
    timeseries: 300,
    datapoints: 60_000,
    instances: { assets: 600, activities: 0, timeseries: 0, edges: 0 },
    events: 4000,
    apiKeys: [KEY],
    // Frozen: a bucket at the end of a window changes as later points arrive (the time-weighted
    // average reaches the next point), so the truth is read at the time the runs read.
    clock: createFakeClock(Date.now()),
  });
  [pointsOut, instancesOut, splitOut] = await Promise.all([
    killedAt(POINTS, 3, 'edits-points'),
    killedAt(INSTANCES, 2, 'edits-instances'),
    splitKilled(),
  ]);
  const checkpoint = readCheckpoint(pointsOut);
  const parts = Object.values(checkpoint.streams.points?.parts ?? {});
  const inFlight = (part: (typeof parts)[number]) =>
    part.points?.listed === true && part.points.series.some((s) => s.after !== null);
  expect(parts.some(inFlight), 'a partition with its listing ended and series in flight').toBe(true);
}, 120_000);

describe.concurrent('a resume refuses a checkpoint edited by hand (exit 2, nothing written)', () => {
  it('a series\' `after` moved forward', async () => {
    const job = copyOf(pointsOut, POINTS, 'edit-after');
    edit(job, (checkpoint) => {
      const { series } = partInFlight(checkpoint);
      series.after = series.after! + 365 * 86_400_000;
    });
    await expectRefused(job, /does not match its digest/);
  });

  it('a series left out of its partition', async () => {
    const job = copyOf(pointsOut, POINTS, 'edit-series');
    edit(job, (checkpoint) => {
      const { points, series } = partInFlight(checkpoint);
      points!.series.splice(points!.series.findIndex((s) => s.id === series.id), 1);
    });
    await expectRefused(job, /does not match its digest/);
  });

  it('the window\'s end lowered', async () => {
    const job = copyOf(pointsOut, POINTS, 'edit-until');
    edit(job, (checkpoint) => {
      const window = (checkpoint.streams as Record<string, { window: { until: number } }>).points!.window;
      window.until = Date.UTC(2022, 0, 1);
    });
    await expectRefused(job, /does not match its digest/);
  });

  it('`listed: false` on a partition whose listing ended: the file is named, bulk-extract is not blamed', async () => {
    const job = copyOf(pointsOut, POINTS, 'edit-listed');
    edit(job, (checkpoint) => {
      partInFlight(checkpoint).points!.listed = false;
    });
    await expectRefused(job, /does not match its digest/);
  });

  it('an instances column renamed to `space`', async () => {
    const job = copyOf(instancesOut, INSTANCES, 'edit-column');
    edit(job, (checkpoint) => {
      const streams = checkpoint.streams as Record<string, { instances: { columns: { name: string; from: Json }[] } }>;
      const property = streams.assets!.instances.columns.find((column) => 'property' in column.from);
      property!.name = 'space';
    });
    await expectRefused(job, /does not match its digest/);
  });

  it('`status` and `repair` refuse it too (exit 2, the same line); `verify` reports it as damage (exit 1)', async () => {
    const job = copyOf(pointsOut, POINTS, 'edit-others');
    edit(job, (checkpoint) => {
      const { series } = partInFlight(checkpoint);
      series.after = series.after! + 1;
    });
    const line = await expectRefused(job, /does not match its digest/);
    const status = await runCliWith(['status', '--out', job.out], { cwd: job.dir });
    expect(status.code, describeExit(status)).toBe(2);
    expect(status.stderr).toContain(line);
    const before = filesOf(job.out);
    const repair = await runCliWith(['repair', '--config', job.file], { cwd: job.dir, env: { SIM_KEY: KEY } });
    expect(repair.code, describeExit(repair)).toBe(2);
    expect(repair.stderr).toContain(line);
    expect(filesOf(job.out), 'the refused repair changed the output').toEqual(before);
    const verify = await runCliWith(['verify', job.out, '--json'], { cwd: job.dir });
    expect(verify.code, describeExit(verify)).toBe(1);
    expect((JSON.parse(verify.stdout) as { problems: string[] }).problems).toContain(line);
  });

  it('the digest removed', async () => {
    const job = copyOf(pointsOut, POINTS, 'edit-digest');
    edit(job, (checkpoint) => {
      delete checkpoint.digest;
    });
    await expectRefused(job, /has no digest/);
  });
});

describe.concurrent('a checkpoint as bulk-extract wrote it resumes', () => {
  it('untouched: every point once', async () => {
    const job = copyOf(pointsOut, POINTS, 'untouched-points');
    const exit = await run(job);
    expect(exit.code, describeExit(exit)).toBe(0);
    await expectEveryPoint(sim, job.out, POINTS, ['parquet', 'ndjson']);
  });

  it('untouched instances: every instance once', async () => {
    const job = copyOf(instancesOut, INSTANCES, 'untouched-instances');
    const exit = await run(job);
    expect(exit.code, describeExit(exit)).toBe(0);
    await expectEveryInstance(sim, job.out, INSTANCES, ['parquet', 'ndjson']);
  });

  it('of an earlier version (5, no digest): every point once, and the next checkpoint carries a digest', async () => {
    const job = copyOf(pointsOut, POINTS, 'version-5');
    edit(job, (checkpoint) => {
      delete checkpoint.digest;
      checkpoint.version = 5;
    });
    const exit = await run(job);
    expect(exit.code, describeExit(exit)).toBe(0);
    await expectEveryPoint(sim, job.out, POINTS, ['parquet', 'ndjson']);
    const written = JSON.parse(readFileSync(join(job.out, '_checkpoint.json'), 'utf8')) as Json;
    expect(written.version).toBe(CHECKPOINT_VERSION);
    expect(written.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});

describe.concurrent('a split job: each worker\'s checkpoint and the checkpoint inside the agreement carry their digest', () => {
  const copySplit = (prefix: string) => {
    const job = splitJob(prefix);
    cpSync(splitOut, job.out, { recursive: true });
    return job;
  };

  it('worker 0\'s checkpoint edited: its resume, `status` and `finalize` refuse it (exit 2), naming it', async () => {
    const job = copySplit('split-worker');
    const { worker0 } = splitFiles(job.out);
    editFile(worker0, (value) => {
      const parts = (value.streams as Record<string, { parts: Record<string, { rows: number }> }>).events!.parts;
      parts['1']!.rows += 500;
    });
    const said = `${worker0} does not match its digest`;
    const before = filesOf(job.out);
    const resumed = await worker(job, 0);
    expect(resumed.code, describeExit(resumed)).toBe(2);
    expect(resumed.stderr).toContain(said);
    const status = await runCliWith(['status', '--out', job.out], { cwd: job.dir });
    expect(status.code, describeExit(status)).toBe(2);
    expect(status.stderr).toContain(said);
    const finalize = await runCliWith(['finalize', '--config', job.file], { cwd: job.dir, env: { SIM_KEY: KEY } });
    expect(finalize.code, describeExit(finalize)).toBe(2);
    expect(finalize.stderr).toContain(said);
    expect(filesOf(job.out), 'the refusals changed the output').toEqual(before);
  });

  it('the agreement\'s checkpoint edited (its window\'s end lowered): a worker refuses it, naming the agreement', async () => {
    const job = copySplit('split-agreement');
    const { agreement } = splitFiles(job.out);
    editFile(agreement, (value) => {
      const checkpoint = value.checkpoint as { streams: Record<string, { window: { until: number } }> };
      checkpoint.streams.events!.window.until -= 86_400_000;
    });
    const before = filesOf(job.out);
    const exit = await worker(job, 1);
    expect(exit.code, describeExit(exit)).toBe(2);
    expect(exit.stderr).toContain(`${agreement} does not match its digest`);
    expect(filesOf(job.out), 'the refusal changed the output').toEqual(before);
  });

  it('untouched: both workers complete, and the output verifies', async () => {
    const job = copySplit('split-untouched');
    for (const index of [0, 1]) {
      const exit = await worker(job, index);
      expect(exit.code, describeExit(exit)).toBe(0);
    }
    const verify = await runCliWith(['verify', job.out], { cwd: job.dir });
    expect(verify.code, describeExit(verify)).toBe(0);
    expect(readCheckpoint(job.out).streams.events?.parts['1']?.rows).toBe(2000);
  });
});
