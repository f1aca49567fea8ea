import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator, SimulatorOptions } from '../../src/simulator/index.js';
import { createFakeClock } from '../support/fake-clock.js';
import { CHECKPOINT_VERSION } from '../../src/export/state/checkpoint-schema.js';
import {
  createGatedClock,
  describeExit,
  type Exit,
  expectedIds,
  expectExactOutput,
  type ExpectedStream,
  inspectCrashState,
  type JobSpec,
  listFiles,
  newSimulator,
  readCheckpoint,
  runCliWith,
  snapshot,
  spawnCli,
  type StreamSpec,
  tempDir,
  writeJob,
  type Job,
  newJob as newHarnessJob,
} from '../support/resume-harness.js';

/**
 * Invariants 3, 5 and 8 at the CLI: a resume refuses drifted settings (or starts over with --fresh),
 * two runs never share an output folder, an expired checkpointed cursor restarts its partition,
 * a damaged checkpoint is refused without touching the output, done partitions are not read again.
 *
 * Every test has its own simulator (they run concurrently and count requests). Events: 12,000 in 4
 * partitions of 3 pages (limit 1000), shards of 2000 rows: 2 shards per partition, 8 commits; assets:
 * 600 in 2 partitions of one page, 1 commit each.
 */
const KEY = 'resume-rules-key-0001';
const EVENTS = 12_000;
const ASSETS = 600;
const SEED = 23;
const PAGES_PER_PART = EVENTS / 4 / 1000;

const outputs: string[] = [];

afterAll(() => {
  expect(outputs.join('\n')).not.toContain(KEY);
});

function simulator(options: Partial<SimulatorOptions> = {}): Promise<Simulator> {
  return newSimulator({ events: EVENTS, assets: ASSETS, seed: SEED, apiKeys: [KEY], recordRequests: true, ...options });
}

const EVENTS_ONLY: StreamSpec[] = [{ resource: 'events', partitions: 4, limit: 1000 }];
const BOTH: StreamSpec[] = [
  { resource: 'events', partitions: 4, limit: 1000 },
  { resource: 'assets', partitions: 2, limit: 1000 },
];

function newJob(sim: Simulator, streams: StreamSpec[] = EVENTS_ONLY, extra: Partial<JobSpec> = {}): Job {
  return newHarnessJob(sim, streams, extra, 'resume-rules');
}

/** Rewrites the job file with changed settings (same output folder). */
function rewrite(job: Job, change: Partial<JobSpec>): void {
  job.spec = { ...job.spec, ...change };
  writeJob(job.file, job.spec);
}

async function run(job: Job, args: string[] = [], env: Record<string, string> = {}): Promise<Exit> {
  const exit = await runCliWith(['run', '--config', job.file, ...args], { cwd: job.dir, env: { SIM_KEY: KEY, ...env } });
  outputs.push(exit.stdout, exit.stderr);
  return exit;
}

async function interrupt(job: Job, at = 'after-checkpoint-write:5', args: string[] = []): Promise<void> {
  const exit = await run(job, args, { BULK_EXTRACT_CRASH_AT: at });
  expect(exit.signal, `expected a SIGKILL at ${at}; ${describeExit(exit)}`).toBe('SIGKILL');
  expect(existsSync(join(job.out, '_checkpoint.json'))).toBe(true);
  // A killed run leaves its lock; the next run takes it over as stale (tested below).
  expect(existsSync(join(job.out, '.lock'))).toBe(true);
}

/** The folder's files and contents, without the lock a killed run left (a run may take it over). */
function contents(dir: string): Record<string, string> {
  const { '.lock': _lock, ...rest } = snapshot(dir);
  return rest;
}

function expectedEvents(target: Simulator, spec: StreamSpec, formats: JobSpec['formats']): ExpectedStream {
  return {
    name: spec.name ?? spec.resource,
    resource: spec.resource,
    partitions: spec.partitions ?? 10,
    formats: spec.formats ?? formats ?? ['parquet'],
    ids: expectedIds(target, spec.resource, spec.filter),
  };
}

function listRequests(sim: Simulator, from: number, route: string) {
  return sim.requests().slice(from).filter((r) => r.route === route);
}

/** The expected output of every stream of a job, read from its simulator (or `target`). */
function expectedOf(job: Job, target: Simulator = job.sim): ExpectedStream[] {
  return job.spec.streams.map((stream) => expectedEvents(target, stream, job.spec.formats));
}

function param(params: readonly [string, string][], key: string): string | undefined {
  return params.find(([k]) => k === key)?.[1];
}

describe.concurrent('drift refusal', () => {
  let other: Simulator;

  beforeAll(async () => {
    // The same data at another address: "the base URL changed".
    other = await simulator();
  });

  interface DriftCase {
    what: string;
    change: (job: Job) => Partial<JobSpec>;
    /** Both values and the key, as the message must show them. */
    shows: (job: Job) => string;
    /** Where the --fresh run reads from. */
    target: (job: Job) => Simulator;
  }

  const cases: DriftCase[] = [
    {
      what: 'limit',
      change: () => ({ streams: [{ resource: 'events', partitions: 4, limit: 500 }] }),
      shows: () => 'stream \'events\': limit =1000 in the checkpoint, =500 in the config',
      target: (job) => job.sim,
    },
    {
      what: 'a filter',
      change: () => ({ streams: [{ resource: 'events', partitions: 4, limit: 1000, filter: { type: 'alarm' } }] }),
      shows: () => 'stream \'events\': type (not set) in the checkpoint, =alarm in the config',
      target: (job) => job.sim,
    },
    {
      what: 'partitions',
      change: () => ({ streams: [{ resource: 'events', partitions: 3, limit: 1000 }] }),
      shows: () => 'stream \'events\': partitions 4 in the checkpoint, 3 in the config',
      target: (job) => job.sim,
    },
    {
      what: 'formats',
      change: () => ({ formats: ['parquet'] }),
      shows: () => 'stream \'events\': formats parquet+ndjson in the checkpoint, parquet in the config',
      target: (job) => job.sim,
    },
    {
      what: 'the base URL',
      change: () => ({ baseUrl: other.baseUrl }),
      shows: (job) => `source.baseUrl: '${job.sim.baseUrl}' in the checkpoint, '${other.baseUrl}' in the config`,
      target: () => other,
    },
  ];

  it.each(cases)('changing $what after an interrupted run: exit 2 naming the difference; --fresh starts over', async (c) => {
    const job = newJob(await simulator());
    await interrupt(job);
    const before = contents(job.out);
    const requestsBefore = job.sim.requests().length + other.requests().length;
    rewrite(job, c.change(job));

    const refused = await run(job);
    expect(refused.code, describeExit(refused)).toBe(2);
    expect(refused.stderr).toContain(c.shows(job));
    expect(refused.stderr).toContain('--fresh');
    expect(refused.stderr).toMatch(/settings differ from the run recorded in .*_checkpoint\.json/);
    // Refusing loses and writes nothing, and asks the platform nothing.
    expect(contents(job.out)).toEqual(before);
    expect(existsSync(join(job.out, '.lock')), 'the refused run released the lock').toBe(false);
    expect(job.sim.requests().length + other.requests().length).toBe(requestsBefore);

    const startedFresh = Date.now();
    const fresh = await run(job, ['--fresh']);
    expect(fresh.code, describeExit(fresh)).toBe(0);
    expect(fresh.stderr).toContain('"resumed":false');
    await expectExactOutput(job.out, expectedOf(job, c.target(job)));
    expect(fresh.stderr).toContain('--fresh: deleting earlier output');
    // What the interrupted run wrote is gone: every shard now was written by the --fresh run.
    const shards = listFiles(job.out).filter((f) => f.includes('/part='));
    const old = shards.filter((f) => statSync(join(job.out, f)).mtimeMs < startedFresh);
    expect(old, 'shards older than the --fresh run').toEqual([]);
    if (c.what === 'partitions') expect(listFiles(job.out).filter((f) => f.includes('-of-4'))).toEqual([]);
    if (c.what === 'formats') expect(listFiles(job.out).filter((f) => f.endsWith('.ndjson'))).toEqual([]);
  });

  it('--fresh --stream NAME forgets only that stream: the other stream\'s finished work is kept', async () => {
    const job = newJob(await simulator(), BOTH);
    const assetsDone = await run(job, ['--stream', 'assets']);
    expect(assetsDone.code, describeExit(assetsDone)).toBe(0);
    await interrupt(job, 'after-checkpoint-write:3', ['--stream', 'events']);
    const assetFiles = listFiles(job.out).filter((f) => f.startsWith('assets/'));
    expect(assetFiles.length).toBeGreaterThan(0);

    const from = job.sim.requests().length;
    const fresh = await run(job, ['--fresh', '--stream', 'events']);
    expect(fresh.code, describeExit(fresh)).toBe(0);
    expect(listRequests(job.sim, from, 'GET /assets')).toEqual([]);
    // The assets stream was not planned, so its progress stays: the job is now complete.
    const checkpoint = readCheckpoint(job.out);
    expect(checkpoint.streams.assets, 'assets progress kept in the checkpoint').toBeDefined();
    expect(existsSync(join(job.out, '_SUCCESS')), '_SUCCESS once every stream of the job is done').toBe(true);
    await expectExactOutput(job.out, expectedOf(job));
  });
});

describe.concurrent('a checkpoint whose committed shards are not in the output folder', () => {
  it('is not trusted for another output folder: --out with a custom checkpoint path refuses or re-exports, never _SUCCESS over missing rows', async () => {
    const dir = tempDir('resume-rules-apart');
    const checkpoint = join(dir, 'progress.json');
    const job = newJob(await simulator(), EVENTS_ONLY, { checkpoint });
    // 7 of the 8 commits.
    const exit1 = await run(job, [], { BULK_EXTRACT_CRASH_AT: 'after-checkpoint-write:8' });
    expect(exit1.signal, describeExit(exit1)).toBe('SIGKILL');
    const committedRows = Object.values(readCheckpoint(job.out, checkpoint).streams.events?.parts ?? {}).reduce(
      (sum, p) => sum + p.rows,
      0,
    );
    expect(committedRows, 'the interrupted run committed rows into the first folder').toBeGreaterThan(0);

    // Same job, same checkpoint file, another output folder: the rows committed so far are not there.
    const other = join(dir, 'other-out');
    const exit = await run(job, ['--out', other]);
    if (exit.code === 0) {
      await expectExactOutput(other, expectedOf(job), checkpoint);
    } else {
      expect(exit.code, describeExit(exit)).toBe(2);
      expect(existsSync(join(other, '_SUCCESS'))).toBe(false);
    }
  });

  it('is not trusted when the shard folders are gone (what a --fresh killed between its deletions leaves)', async () => {
    // --fresh deletes the stream folders first and the checkpoint after them; a SIGKILL in between
    // leaves this state. Emulated here by deleting the folder the way --fresh does.
    const job = newJob(await simulator());
    await interrupt(job, 'after-checkpoint-write:8');
    rmSync(join(job.out, 'events'), { recursive: true, force: true });

    const exit = await run(job);
    if (exit.code === 0) {
      await expectExactOutput(job.out, expectedOf(job));
    } else {
      expect(exit.code, describeExit(exit)).toBe(2);
      expect(existsSync(join(job.out, '_SUCCESS'))).toBe(false);
    }
  });
});

describe.concurrent('the output folder lock', () => {
  it('a second run while one holds the folder exits 75 (an overlap) naming the holder\'s pid, and changes nothing', async () => {
    const clock = createGatedClock();
    const job = newJob(await simulator({ faults: { latencyMs: 1 }, clock }));
    const holder = spawnCli(['run', '--config', job.file], { cwd: job.dir, env: { SIM_KEY: KEY } });
    // Requests are in flight, so the holder has its lock and wrote its first checkpoint.
    await clock.whenHeld(1);
    const before = snapshot(job.out);
    expect(Object.keys(before)).toContain('.lock');

    const second = await run(job);
    expect(second.code, describeExit(second)).toBe(75);
    expect(second.stderr).toContain(`is in use by another bulk-extract run (pid ${holder.child.pid} on ${hostname()}`);
    expect(snapshot(job.out)).toEqual(before);

    clock.open();
    const first = await holder.done;
    outputs.push(first.stdout, first.stderr);
    expect(first.code, describeExit(first)).toBe(0);
    await expectExactOutput(job.out, expectedOf(job));
  });

  it('a stale lock (a dead process on this host) is taken over and the run completes', async () => {
    const job = newJob(await simulator());
    const dead = spawn(process.execPath, ['-e', '']);
    await once(dead, 'exit');
    const pid = dead.pid;
    expect(pid).toBeTypeOf('number');
    mkdirSync(job.out);
    writeFileSync(join(job.out, '.lock'), JSON.stringify({ pid, host: hostname(), startedAt: new Date().toISOString() }));

    const exit = await run(job);
    expect(exit.code, describeExit(exit)).toBe(0);
    expect(exit.stderr).toContain('removing a stale lock');
    await expectExactOutput(job.out, expectedOf(job));
  });
  // A lock of another host: test/export/lock.test.ts (it takes a minute of unchanged heartbeat).
});

describe.concurrent('expired cursors', () => {
  it('on resume: the refused partitions are re-read from their first page, with a warning, and the output is exact', async () => {
    const clock = createFakeClock();
    const ttl = await simulator({ faults: { cursorTtlMs: 60_000 }, clock });
    const job = newJob(ttl);
    // 5 commits over 4 partitions of 2 shards each: some partition has exactly one, so it has a
    // cursor and is not done.
    await interrupt(job, 'after-checkpoint-write:6');
    const saved = readCheckpoint(job.out).streams.events?.parts ?? {};
    const refused = Object.entries(saved).filter(([, p]) => p.cursor !== null && !p.done);
    expect(refused.length, 'a partition resumes from a cursor').toBeGreaterThan(0);
    const oldShards = listFiles(job.out).filter((f) => f.includes('/part='));

    clock.advance(120_000);
    const from = ttl.requests().length;
    const exit = await run(job);
    outputs.push(exit.stderr);
    expect(exit.code, describeExit(exit)).toBe(0);

    const warnings = exit.stderr.split('\n').filter((line) => line.includes('refused the checkpointed cursor'));
    expect(warnings).toHaveLength(refused.length);
    for (const [m, part] of Object.entries(saved)) {
      const requests = ttl
        .requests()
        .slice(from)
        .filter((r) => r.route === 'GET /events' && param(r.params, 'partition') === `${m}/4`);
      if (part.done) {
        expect(requests, `done partition ${m} is not read again`).toEqual([]);
        continue;
      }
      if (part.cursor !== null) {
        expect(warnings.some((w) => w.includes(`"partition":"${m}/4"`))).toBe(true);
        expect(requests[0]?.status).toBe(400);
        expect(param(requests[0]?.params ?? [], 'cursor')).toBe(part.cursor);
        expect(requests[1]?.status, `partition ${m} restarts`).toBe(200);
        expect(param(requests[1]?.params ?? [], 'cursor'), `partition ${m} restarts at its first page`).toBeUndefined();
        expect(requests.filter((r) => r.status === 200)).toHaveLength(PAGES_PER_PART);
      } else {
        expect(param(requests[0]?.params ?? [], 'cursor')).toBeUndefined();
      }
    }
    expect(oldShards.length).toBeGreaterThan(0);
    await expectExactOutput(job.out, expectedOf(job));
  });

  it('mid-run: the partition fails (exit 1) naming the request; committed work stays valid; the resume ends exact', async () => {
    // The clock jumps past the cursor TTL once 9 pages were served: the 10th request carries a
    // cursor issued before the jump and is refused (400, not retried).
    let served = (): number => 0;
    const base = Date.UTC(2026, 0, 1);
    const clock = {
      now: () => base + (served() >= 9 ? 3_600_000 : 0),
      sleep: () => Promise.resolve(),
    };
    const ttl = await simulator({ faults: { cursorTtlMs: 60_000 }, clock });
    served = () => ttl.stats().pages;
    // One partition of 12 pages: shards after pages 2, 4, 6 and 8; page 9 is in the open shard.
    const job = newJob(ttl, [{ resource: 'events', partitions: 1, limit: 1000 }]);
    const failed = await run(job);
    expect(failed.code, describeExit(failed)).toBe(1);
    const rejected = ttl.requests().filter((r) => r.status === 400);
    expect(rejected).toHaveLength(1);
    const message = failed.stderr.split('\n').find((line) => line.includes('partition failed'));
    expect(message, failed.stderr).toBeDefined();
    expect(message).toContain('HTTP 400');
    expect(message).toContain('Cursor has expired');
    // The full export pins maxLastUpdatedTime at the run's start; the resume sends the same pin.
    expect(message).toMatch(/GET \/api\/v1\/projects\/demo\/events\?limit=1000&maxLastUpdatedTime=\d+&cursor=/);
    expect(message).toContain(`request id ${rejected[0]?.requestId}`);
    expect(failed.stderr).toMatch(/^bulk-extract: failed/m);

    const state = await inspectCrashState(job.out);
    expect(state.inprogress, 'the open shard was dropped').toEqual([]);
    expect(state.unlisted).toEqual([]);
    expect(state.manifest?.state).toBe('failed');
    const part = state.checkpoint?.streams.events?.parts['1'];
    expect(part).toMatchObject({ rows: 8000, nextSeq: 4, done: false });
    expect(part?.cursor).toEqual(expect.any(String));
    expect(existsSync(join(job.out, '_SUCCESS'))).toBe(false);

    const resumed = await run(job);
    expect(resumed.code, describeExit(resumed)).toBe(0);
    expect(resumed.stderr).toContain('refused the checkpointed cursor');
    await expectExactOutput(job.out, expectedOf(job));
  });
});

describe.concurrent('a damaged checkpoint', () => {
  let job: Job;
  let original: string;
  const messages: Record<string, string | undefined> = {};

  beforeAll(async () => {
    job = newJob(await simulator());
    await interrupt(job);
    original = readFileSync(join(job.out, '_checkpoint.json'), 'utf8');
  });

  const damages: [string, (text: string) => string, RegExp][] = [
    ['truncated', (text) => text.slice(0, Math.floor(text.length / 2)), /is not valid JSON \(damaged or truncated\)/],
    ['not JSON at all', () => 'checkpoint? what checkpoint?\n', /is not valid JSON \(damaged or truncated\)/],
    ['empty', () => '', /is not valid JSON \(empty\)/],
    ['JSON but not a checkpoint', () => '{"hello":"world"}', /is not a bulk-extract checkpoint \(version: /],
    [
      'from a newer version (99)',
      (text) => JSON.stringify({ ...(JSON.parse(text) as object), version: 99 }),
      new RegExp(`written by a newer bulk-extract \\(checkpoint version 99, this one reads ${CHECKPOINT_VERSION}\\)`),
    ],
  ];

  it.each(damages)('%s: exit 2 with its own message; no shard deleted or written', async (kind, damage, pattern) => {
    const out = tempDir('resume-damaged');
    cpSync(job.out, out, { recursive: true });
    rmSync(join(out, '.lock'));
    const path = join(out, '_checkpoint.json');
    writeFileSync(path, damage(original));
    const before = snapshot(out);
    const requestsBefore = job.sim.requests().length;

    const exit = await run(job, ['--out', out]);
    expect(exit.code, describeExit(exit)).toBe(2);
    expect(exit.stderr).toMatch(pattern);
    expect(exit.stderr).toContain(path);
    expect(exit.stderr).toContain('--fresh');
    expect(snapshot(out)).toEqual(before);
    expect(job.sim.requests().length).toBe(requestsBefore);
    const message = exit.stderr.split('\n').find((line) => line.startsWith('bulk-extract run: '));
    expect(message, 'one error line').toBeDefined();
    messages[kind] = message?.replaceAll(out, '<out>');
  });

  afterAll(() => {
    // The kinds of damage get different messages (all but 'not JSON at all', which is 'truncated').
    const kinds = ['truncated', 'empty', 'JSON but not a checkpoint', 'from a newer version (99)'];
    const seen = kinds.map((kind) => messages[kind]);
    if (seen.every((m) => m !== undefined)) expect(new Set(seen).size).toBe(kinds.length);
  });
});

describe('resume skips done partitions', () => {
  it('after a resume no request is made for a partition the checkpoint marks done', async () => {
    const job = newJob(await simulator(), BOTH);
    // 8 commits of 10: the two asset partitions have 2 at most, so events have 6 or more over 4
    // partitions of 2 commits each: some events partition is done, and some partition is not.
    await interrupt(job, 'after-checkpoint-write:9');
    const checkpoint = readCheckpoint(job.out);
    const parts = Object.entries(checkpoint.streams).flatMap(([name, s]) =>
      Object.entries(s.parts).map(([m, p]) => ({ name, m, n: s.partitions, ...p })),
    );
    expect(parts.filter((p) => p.name === 'events' && p.done).length).toBeGreaterThan(0);
    expect(parts.filter((p) => !p.done).length).toBeGreaterThan(0);

    const from = job.sim.requests().length;
    const exit = await run(job);
    expect(exit.code, describeExit(exit)).toBe(0);
    for (const part of parts) {
      const requests = listRequests(job.sim, from, `GET /${part.name}`).filter(
        (r) => param(r.params, 'partition') === `${part.m}/${part.n}`,
      );
      if (part.done) {
        expect(requests, `${part.name} ${part.m}/${part.n} is done`).toEqual([]);
      } else {
        // It continues from its checkpointed cursor (or its first page if it had none).
        expect(requests.length).toBeGreaterThan(0);
        expect(param(requests[0]?.params ?? [], 'cursor')).toBe(part.cursor ?? undefined);
      }
    }
    await expectExactOutput(job.out, expectedOf(job));
  });
});
