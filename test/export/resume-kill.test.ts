import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import {
  closedForm,
  type CrashState,
  describeExit,
  type Exit,
  expectExactOutput,
  type ExpectedStream,
  inspectCrashState,
  newSimulator,
  runCliWith,
  seededRandom,
  spawnCli,
  tempDir,
  writeJob,
} from '../support/resume-harness.js';

/**
 * Invariant 4 with real processes: the CLI kills itself (SIGKILL) at a failpoint between two steps
 * of a commit, or is killed from outside at a random moment; a later run resumes and the output
 * equals the source exactly.
 *
 * Work per full run: events 10,000 in 4 partitions of 5 pages (limit 500), shards of 1000 rows,
 * so 3 shards per partition; assets 500 in 2 partitions of one page. That is 22
 * appends, 14 shard commits, and 16 checkpoint writes (one at the start, one per commit, one at the
 * end). The counts of steps are what the kills need; the rows are kept small, as each of the ~40 runs
 * of this file reads and writes them all (twice as many rows cost ~1 s of CPU a full run).
 */
const KEY = 'resume-kill-key-0001';
const EVENTS = 10_000;
const ASSETS = 500;
const COMMITS = 14;
const PERSISTS = COMMITS + 2;

const outputs: string[] = [];

afterAll(() => {
  expect(outputs.join('\n')).not.toContain(KEY);
});

const STREAMS: ExpectedStream[] = [
  { name: 'events', resource: 'events', partitions: 4, formats: ['parquet', 'ndjson'], ids: closedForm('events', EVENTS) },
  { name: 'assets', resource: 'assets', partitions: 2, formats: ['parquet', 'ndjson'], ids: closedForm('assets', ASSETS) },
];

interface Job {
  sim: Simulator;
  dir: string;
  out: string;
  file: string;
}

/** A job with its own simulator and folder: the tests of this file run concurrently. */
async function newJob(): Promise<Job> {
  const sim = await newSimulator({ events: EVENTS, assets: ASSETS, seed: 11, apiKeys: [KEY] });
  const dir = tempDir('resume-kill');
  const out = join(dir, 'out');
  const file = writeJob(join(dir, 'job.yaml'), {
    baseUrl: sim.baseUrl,
    outDir: out,
    streams: [
      { resource: 'events', partitions: 4, limit: 500 },
      { resource: 'assets', partitions: 2, limit: 500 },
    ],
    formats: ['parquet', 'ndjson'],
    maxRows: 1000,
  });
  return { sim, dir, out, file };
}

async function run(job: Job, extraEnv: Record<string, string> = {}, args: string[] = []): Promise<Exit> {
  const exit = await runCliWith(['run', '--config', job.file, ...args], {
    cwd: job.dir,
    env: { SIM_KEY: KEY, ...extraEnv },
  });
  outputs.push(exit.stdout, exit.stderr);
  return exit;
}

/** Runs with the failpoint and expects the process to die by it. */
async function crashAt(job: Job, point: string, count: number): Promise<Exit> {
  const exit = await run(job, { BULK_EXTRACT_CRASH_AT: `${point}:${count}` });
  expect(exit.signal, `expected a SIGKILL at ${point}:${count}; ${describeExit(exit)}`).toBe('SIGKILL');
  expect(exit.code).toBeNull();
  expect(exit.stderr).not.toMatch(/^bulk-extract: complete/m);
  return exit;
}

function checkpointRows(state: CrashState): number {
  return Object.values(state.checkpoint?.streams ?? {})
    .flatMap((stream) => Object.values(stream.parts))
    .reduce((sum, part) => sum + part.rows, 0);
}

async function resumeToEnd(job: Job): Promise<Exit> {
  const exit = await run(job);
  expect(exit.code, describeExit(exit)).toBe(0);
  expect(exit.stderr).toMatch(/"msg":"resuming export"|"msg":"starting export"/);
  expect(exit.stderr).toMatch(/^bulk-extract: complete/m);
  return exit;
}

describe.concurrent('SIGKILL at a failpoint, then resume', () => {
  const POINTS = ['after-append', 'after-encode-chunk', 'after-shard-rename', 'after-manifest-write', 'after-checkpoint-write'];

  /** Each failpoint leaves what it is meant to leave, so the next run has something to repair. */
  function expectLeftovers(point: string, count: number, state: CrashState): void {
    switch (point) {
      case 'after-append':
        expect(state.inprogress.length, 'an open shard was killed with its temp files').toBeGreaterThan(0);
        break;
      case 'after-encode-chunk':
        expect(
          state.inprogress.filter((path) => path.endsWith('.parquet.inprogress')).length,
          'a Parquet file killed half written, as a temp file',
        ).toBeGreaterThan(0);
        break;
      case 'after-shard-rename':
        expect(state.unlisted.length, 'renamed shards that the manifest does not know').toBeGreaterThan(0);
        break;
      case 'after-manifest-write':
        // The 1st time is the run's initial save, which only forgets shards and so writes the
        // checkpoint first; later times are shard commits, which write the manifest first.
        if (count > 1) {
          expect(state.pastCheckpoint.length, 'manifest ahead of the checkpoint').toBeGreaterThan(0);
        } else {
          expect(state.checkpoint, 'the initial save wrote the checkpoint before the manifest').toBeDefined();
          expect(state.pastCheckpoint).toEqual([]);
        }
        break;
      case 'after-checkpoint-write':
        // Manifest and checkpoint were written for the same commit; other partitions may have renamed
        // shards of their own meanwhile (they wait for the committer), so unlisted ones may exist.
        expect(state.checkpoint).toBeDefined();
        expect(state.pastCheckpoint).toEqual([]);
        break;
    }
  }

  // One folder per failpoint: killed the 1st, 3rd and 7th time the run reaches it (each run resuming
  // what the previous one left), then resumed without a failpoint. The counts are per process.
  // Four real processes a test, five tests at once: 25-35 s each on 2 cores.
  it.each(POINTS)('%s at counts 1, 3, 7 in a row, then a resume: exact', { timeout: 120_000 }, async (point) => {
    const job = await newJob();
    let progress = -1;
    for (const count of [1, 3, 7]) {
      await crashAt(job, point, count);
      const state = await inspectCrashState(job.out);
      expectLeftovers(point, count, state);
      const rows = checkpointRows(state);
      expect(rows, 'checkpointed progress never goes back').toBeGreaterThanOrEqual(progress);
      progress = rows;
    }
    // Killed at its 7th manifest or checkpoint write, a run had checkpointed 5 commits or more.
    if (point.endsWith('-write')) expect(progress, 'the killed runs made progress').toBeGreaterThan(0);
    const resumed = await resumeToEnd(job);
    expect(resumed.stderr).toContain('"resumed":true');
    await expectExactOutput(job.out, STREAMS);
  });

  it('after-shard-rename:7 from a fresh start, then a resume: exact', async () => {
    const job = await newJob();
    await crashAt(job, 'after-shard-rename', 7);
    const state = await inspectCrashState(job.out);
    expectLeftovers('after-shard-rename', 7, state);
    await resumeToEnd(job);
    await expectExactOutput(job.out, STREAMS);
  });

  it('after-checkpoint-write at the final write (everything committed, _SUCCESS not yet) resumes to _SUCCESS without refetching',
    async () => {
      const job = await newJob();
      await crashAt(job, 'after-checkpoint-write', PERSISTS);
      const state = await inspectCrashState(job.out);
      // No shard or state file was being written. The progress file is rewritten every few seconds
      // and the kill may land inside one of its writes: the next run's first write replaces that
      // temp file, and expectExactOutput below holds that none is left.
      expect(state.inprogress.filter((path) => path !== '.progress.json.inprogress')).toEqual([]);
      expect(state.unlisted).toEqual([]);
      const parts = Object.values(state.checkpoint?.streams ?? {}).flatMap((s) => Object.values(s.parts));
      expect(parts.every((p) => p.done), 'every part done before the last write').toBe(true);
      // The count is right: this is the final write of the run (its state), not the last commit's.
      expect(state.manifest?.state).toBe('complete');
      expect(existsSync(join(job.out, '_SUCCESS'))).toBe(false);

      const before = job.sim.stats().byRoute;
      await resumeToEnd(job);
      const after = job.sim.stats().byRoute;
      expect(after['GET /events']).toBe(before['GET /events']);
      expect(after['GET /assets']).toBe(before['GET /assets']);
      await expectExactOutput(job.out, STREAMS);
    },
  );

  it('several kills in a row, at different points, then one resume', async () => {
    const job = await newJob();
    const sequence: [string, number][] = [
      ['after-append', 5],
      ['after-shard-rename', 2],
      ['after-manifest-write', 4],
      ['after-checkpoint-write', 3],
    ];
    let lastRows = -1;
    for (const [point, count] of sequence) {
      await crashAt(job, point, count);
      const rows = checkpointRows(await inspectCrashState(job.out));
      // Progress never goes back, and never runs ahead of the source.
      expect(rows).toBeGreaterThanOrEqual(Math.max(lastRows, 0));
      expect(rows).toBeLessThan(EVENTS + ASSETS);
      lastRows = rows;
    }
    expect(lastRows, 'the kills in a row made progress').toBeGreaterThan(0);
    const resumed = await resumeToEnd(job);
    expect(resumed.stderr).toContain('"resumed":true');
    await expectExactOutput(job.out, STREAMS);
  });
});

describe.concurrent('SIGKILL from outside', () => {
  // Up to 10 CLI processes one after another: on a loaded machine that can take longer than the default 30 s.
  it('at seeded random moments (the k-th stderr line at log-level debug, or right after a "shard committed") ends exact', { timeout: 120_000 }, async () => {
    const job = await newJob();
    const random = seededRandom(20_260_101);
    let kills = 0;
    let finished: Exit | undefined;
    for (let round = 0; round < 10 && finished === undefined; round++) {
      // Rounds past the fifth are not killed, so the loop always ends.
      const killing = round < 5;
      const byCommit = random() < 0.5;
      // Small k, so that several rounds are killed before the work runs out (a full run logs about 20 lines).
      const k = byCommit ? 1 + Math.floor(random() * 2) : 2 + Math.floor(random() * 3);
      const cli = spawnCli(['run', '--config', job.file, '--log-level', 'debug'], {
        cwd: job.dir,
        env: { SIM_KEY: KEY },
      });
      let commits = 0;
      cli.onStderrLine((line, index) => {
        if (line.includes('"msg":"shard committed"')) commits++;
        if (killing && (byCommit ? commits === k && line.includes('"msg":"shard committed"') : index === k)) {
          cli.child.kill('SIGKILL');
        }
      });
      const exit = await cli.done;
      outputs.push(exit.stdout, exit.stderr);
      if (exit.signal === 'SIGKILL') {
        kills++;
        await inspectCrashState(job.out);
      } else {
        expect(exit.code, describeExit(exit)).toBe(0);
        finished = exit;
      }
    }
    expect(kills, 'the test killed the CLI several times').toBeGreaterThanOrEqual(3);
    expect(finished, 'a run completed').toBeDefined();
    await expectExactOutput(job.out, STREAMS);
  });
});
