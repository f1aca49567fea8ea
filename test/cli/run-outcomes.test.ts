import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JsonReport } from '../../src/cli/run-report.js';
import type { Simulator } from '../../src/simulator/index.js';
import {
  createGatedClock,
  describeExit,
  type Exit,
  type Job,
  newJob,
  newSimulator,
  readManifest,
  runCliWith,
  snapshot,
  spawnCli,
  type StreamSpec,
} from '../support/resume-harness.js';

/**
 * What `run` says at its end, and `status` after it: a full
 * export already complete says so and changes nothing; a refused credential is one message;
 * `--json` is one summary on stdout whatever happened; `status --out` needs no job file, and tells
 * partitions never fetched and a run that is not running from one that is.
 */
const KEY = 'run-outcomes-key-0001';
const STREAMS: StreamSpec[] = [
  { resource: 'events', partitions: 3, limit: 1000 },
  { resource: 'assets', partitions: 2, limit: 1000 },
];

function simulator(): Promise<Simulator> {
  return newSimulator({ events: 6000, assets: 400, seed: 61, apiKeys: [KEY], recordRequests: true });
}

async function job(streams = STREAMS): Promise<Job> {
  return newJob(await simulator(), streams, {}, 'run-outcomes');
}

function run(j: Job, args: string[] = [], env: Record<string, string> = {}): Promise<Exit> {
  return runCliWith(['run', '--config', j.file, ...args], { cwd: j.dir, env: { SIM_KEY: KEY, ...env } });
}

const listRequests = (sim: Simulator, from = 0) =>
  sim.requests().slice(from).filter((r) => r.route === 'GET /events' || r.route === 'GET /assets');

describe.concurrent('a full export that is already complete', () => {
  it('says so, names --fresh and mode: snapshot, makes no request and changes nothing', async () => {
    const j = await job();
    const first = await run(j);
    expect(first.code, describeExit(first)).toBe(0);
    const before = snapshot(j.out);
    const from = j.sim.requests().length;
    const again = await run(j);
    expect(again.code, describeExit(again)).toBe(0);
    expect(again.stderr).toMatch(/events: complete since \d{4}-\d\d-\d\dT[\d:.]+Z: use --fresh to export it again, /);
    expect(again.stderr).toContain(': use --fresh to export it again, or mode: snapshot for a new export each run');
    // Said once: the summary's first line; no log line and no second summary line say it again.
    expect(again.stderr.split('\n').find((line) => line.startsWith('bulk-extract'))).toBe(
      'bulk-extract: nothing to do; the output was not changed.',
    );
    expect(again.stderr.match(/nothing to do/g)).toHaveLength(1);
    expect(again.stderr).not.toContain('bulk-extract: complete in');
    expect(j.sim.requests().slice(from)).toEqual([]);
    expect(snapshot(j.out)).toEqual(before);
  });
});

describe.concurrent('run --json', () => {
  it('a complete run: one JSON object on stdout with per-stream rows, files, bytes, state and window', async () => {
    const j = await job();
    const exit = await run(j, ['--json']);
    expect(exit.code, describeExit(exit)).toBe(0);
    const lines = exit.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const report = JSON.parse(lines[0] ?? '') as JsonReport;
    const manifest = readManifest(j.out);
    expect(report).toMatchObject({ exitCode: 0, state: 'complete', reason: null, destination: j.out, rowsThisRun: 6400 });
    expect(report.requests).toBe(manifest.requests);
    expect(report.durationMs).toBe(manifest.durationMs);
    for (const stream of report.streams) {
      const files = manifest.files.filter((f) => f.stream === stream.name);
      expect(stream).toMatchObject({
        state: 'done',
        rows: manifest.streams[stream.name]?.rows,
        files: files.length,
        bytes: files.reduce((sum, f) => sum + f.bytes, 0),
        window: manifest.streams[stream.name]?.window,
      });
    }
    expect(report.streams.map((s) => s.name)).toEqual(['events', 'assets']);
  });

  it('a refused run (settings drift): exit 2 and the reason, also on stdout as JSON', async () => {
    const j = await job();
    expect((await run(j)).code).toBe(0);
    const drifted = await run(j, ['--json', '--formats', 'ndjson']);
    expect(drifted.code, describeExit(drifted)).toBe(2);
    const report = JSON.parse(drifted.stdout) as JsonReport;
    expect(report).toMatchObject({ exitCode: 2, state: 'refused', reason: { code: 'E_CHECKPOINT' }, destination: j.out });
    expect(report.reason?.message).toContain('settings differ');
  });

  it('a refused credential: exit 3, state refused, E_AUTH', async () => {
    const j = await job();
    const exit = await run(j, ['--json'], { SIM_KEY: 'a-wrong-key-0000' });
    expect(exit.code, describeExit(exit)).toBe(3);
    expect(JSON.parse(exit.stdout)).toMatchObject({ exitCode: 3, reason: { code: 'E_AUTH' } });
  });

  it('a config error: exit 2, state refused, no destination known yet', async () => {
    const j = await job();
    const exit = await runCliWith(['run', '--config', join(j.dir, 'missing.yaml'), '--json'], { cwd: j.dir });
    expect(exit.code).toBe(2);
    expect(JSON.parse(exit.stdout)).toMatchObject({ exitCode: 2, state: 'refused', reason: { code: 'E_CONFIG' }, destination: null });
  });
});

describe.concurrent('a credential refused by the platform', () => {
  it('stops the run with one message and exit 3; no stack trace, no lines per partition', async () => {
    const j = await job([{ resource: 'events', partitions: 5, limit: 1000 }]);
    const exit = await run(j, [], { SIM_KEY: 'a-wrong-key-0000' });
    expect(exit.code, describeExit(exit)).toBe(3);
    expect(exit.stderr.match(/refused the api-key credential/g), exit.stderr).toHaveLength(1);
    expect(exit.stderr).not.toContain('"stack"');
    expect(listRequests(j.sim), 'no page was asked for').toEqual([]);
    expect(existsSync(j.out), 'the output folder it would have created is not left behind').toBe(false);
  });
});

describe.concurrent('retries in many partitions at once', () => {
  it('print no MaxListenersExceededWarning (every partition waits on the run\'s one stop signal)', async () => {
    // 30% 503s: retries enough to have every partition waiting at once, never 10 failures in a row.
    const faults = { rate503: 0.3 };
    const sim = await newSimulator({ events: 20_000, assets: 10, seed: 62, apiKeys: [KEY], faults });
    const j = newJob(sim, [{ resource: 'events', partitions: 10, limit: 200 }], {}, 'run-outcomes');
    const exit = await run(j);
    expect(exit.code, describeExit(exit)).toBe(0);
    expect(exit.stderr).toMatch(/"msg":"GET \/events partition \d+\/10: HTTP 503/);
    expect(exit.stderr).not.toContain('MaxListenersExceededWarning');
  });
});

describe.concurrent('bulk-extract status', () => {
  it('--out DIR without a job file; after a --stream run: "incomplete", the other stream "not started"', async () => {
    const j = await job();
    const events = await run(j, ['--stream', 'events']);
    expect(events.code, describeExit(events)).toBe(0);
    const status = await runCliWith(['status', '--out', j.out]);
    expect(status.code, describeExit(status)).toBe(0);
    expect(status.stdout).toContain(`${j.out}: run incomplete`);
    expect(status.stdout).not.toMatch(/running/);
    const json = JSON.parse((await runCliWith(['status', '--out', j.out, '--json'])).stdout) as { state: string };
    expect(json.state).toBe('incomplete');
    // The job file knows the stream the checkpoint has not seen yet.
    const withJob = await runCliWith(['status', '--config', j.file], { cwd: j.dir, env: { SIM_KEY: KEY } });
    expect(withJob.stdout).toContain('  assets: not started (the job has it; no run has read it yet)\n');
  });

  it('a run killed mid-way is "stopped", not "running"; partitions with nothing committed say so', async () => {
    const j = await job();
    const killed = await run(j, [], { BULK_EXTRACT_CRASH_AT: 'after-shard-rename:2' });
    expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
    const stopped = await runCliWith(['status', '--config', j.file], { cwd: j.dir, env: { SIM_KEY: KEY } });
    expect(stopped.stdout).toContain('run stopped before it finished (killed?); run it again to resume');
    // 5 partitions, at most one commit checkpointed: the others have nothing committed yet.
    const parts = stopped.stdout.split('\n').filter((line) => / rows /.test(line));
    expect(parts).toHaveLength(5);
    // "not started", or, when the killed run's progress file showed it fetching, "stopped: the run
    // fetching it is gone; nothing committed".
    const nothingCommitted = /(not started|0 shards {2}stopped: .*nothing committed)$/;
    expect(parts.filter((line) => nothingCommitted.test(line)).length).toBeGreaterThanOrEqual(4);
    expect(parts.some((line) => / running/.test(line))).toBe(false);
  });

  it('a live run is "running", with its pid', async () => {
    // The simulator holds every page (its latency is a closed gate), so the run stays in flight.
    const clock = createGatedClock(0);
    const faults = { latencyMs: 1 };
    const sim = await newSimulator({ events: 6000, assets: 400, seed: 61, apiKeys: [KEY], faults, clock });
    const j = newJob(sim, STREAMS, {}, 'run-outcomes');
    const cli = spawnCli(['run', '--config', j.file], { cwd: j.dir, env: { SIM_KEY: KEY } });
    await clock.whenHeld(1);
    const live = await runCliWith(['status', '--out', j.out]);
    cli.child.kill('SIGKILL');
    expect(live.stdout).toContain(`${j.out}: run running (pid ${cli.child.pid} on `);
    const json = JSON.parse((await runCliWith(['status', '--out', j.out, '--json'])).stdout) as { state: string };
    expect(json.state, 'killed now: its lock is left, its process gone').toBe('stopped');
  });
});
