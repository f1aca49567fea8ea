import { type ChildProcess, spawn, type SpawnOptions } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RESUME_HINT } from '../../src/cli/exit-codes.js';
import type { Simulator, SimulatorOptions } from '../../src/simulator/index.js';
import { CLI } from '../support/cli.js';
import {
  createGatedClock,
  describeExit,
  type Exit,
  type Job,
  newJob,
  newSimulator,
  runCliWith,
  spawnCli,
  type StreamSpec,
  tempDir,
} from '../support/resume-harness.js';

/**
 * What a run says on stdout and stderr, as a scheduler's log keeps it (not a terminal: the log is
 * JSON): the deprecated API key once, in plain words; no advice on a run that did nothing; no log
 * line after the report or the summary; after Ctrl-C, how to go on.
 */
const KEY = 'what-a-run-says-key-0001';
const STREAMS: StreamSpec[] = [
  { resource: 'events', partitions: 4, limit: 1000 },
  { resource: 'assets', partitions: 2, limit: 1000 },
];

function simulator(options: Partial<SimulatorOptions> = {}): Promise<Simulator> {
  return newSimulator({ events: 4000, assets: 600, seed: 47, apiKeys: [KEY], ...options });
}

async function job(options: Partial<SimulatorOptions> = {}, streams = STREAMS): Promise<Job> {
  return newJob(await simulator(options), streams, { formats: ['ndjson'] }, 'what-a-run-says');
}

function run(j: Job, ...flags: string[]): Promise<Exit> {
  return runCliWith(['run', '--config', j.file, ...flags], { cwd: j.dir, env: { SIM_KEY: KEY } });
}

/**
 * The CLI with stdout and stderr into one file, as `>log 2>&1` does: the file holds the lines in the
 * order they were written, whichever stream each went to.
 */
async function runInOneFile(j: Job, ...flags: string[]): Promise<{ code: number | null; lines: string[] }> {
  const file = join(tempDir('one-file'), 'log');
  const fd = openSync(file, 'w');
  let child: ChildProcess;
  try {
    const options: SpawnOptions = { cwd: j.dir, env: { ...process.env, SIM_KEY: KEY }, stdio: ['ignore', fd, fd] };
    child = spawn(process.execPath, [CLI, 'run', '--config', j.file, ...flags], options);
  } finally {
    closeSync(fd);
  }
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, lines: readFileSync(file, 'utf8').split('\n').filter((line) => line !== '') };
}

const DEPRECATED =
  'API keys and /login cookie sessions are deprecated by the platform in favour of OpenID Connect; move to source.auth.type: oauth-client-credentials';

const isLogRecord = (line: string) => line.startsWith('{"level":');

describe.concurrent('what a run says', () => {
  it('an API key: one plain warning line a run, not a JSON record, however many partitions and requests', async () => {
    const j = await job();
    const exit = await run(j);
    expect(exit.code, describeExit(exit)).toBe(0);
    const deprecated = exit.stderr.split('\n').filter((line) => /deprecated/i.test(line));
    expect(deprecated).toEqual([`warning: ${DEPRECATED}`]);
    // The dry run says it once too.
    const dry = await run(j, '--dry-run');
    expect(dry.stderr.split('\n').filter((line) => /deprecated/i.test(line))).toHaveLength(1);
  });

  it('a run that had nothing to do gives no advice on checking keys; the run that wrote does', async () => {
    const j = await job();
    const first = await run(j);
    expect(first.code, describeExit(first)).toBe(0);
    expect(first.stderr).toContain('keys not checked: run with --verify');
    const again = await run(j);
    expect(again.code, describeExit(again)).toBe(0);
    expect(again.stderr).toMatch(/^bulk-extract: nothing to do; the output was not changed\.$/m);
    expect(again.stderr).not.toContain('keys not checked');
    // Asked, it checks what is there, and says so.
    const verified = await run(j, '--verify');
    expect(verified.stderr).toMatch(/^verified: every shard matches the manifest; 4,600 keys checked, each unique$/m);
  });

  it('no log line after the summary of a run, nor after the report of --dry-run', async () => {
    const j = await job();
    // At debug, every request the dry run makes is a log record, the last ones just before the report.
    const dry = await runInOneFile(j, '--dry-run', '--log-level', 'debug');
    expect(dry.code, dry.lines.join('\n')).toBe(0);
    const report = dry.lines.findIndex((line) => line.startsWith('credential  '));
    expect(report, dry.lines.join('\n')).toBeGreaterThan(0);
    expect(dry.lines.slice(report).filter(isLogRecord)).toEqual([]);

    const ran = await runInOneFile(j, '--log-level', 'debug');
    expect(ran.code, ran.lines.join('\n')).toBe(0);
    expect(ran.lines.filter(isLogRecord).length).toBeGreaterThan(5);
    const summary = ran.lines.findIndex((line) => line.startsWith('bulk-extract: complete in '));
    expect(summary, ran.lines.join('\n')).toBeGreaterThan(0);
    expect(ran.lines.slice(summary).filter(isLogRecord)).toEqual([]);
  });

  it('SIGINT during the run: exit 130, and the summary ends saying to run the same command again', async () => {
    // The first page of each of the 4 chains (3,000 events each) goes through; every second request is held.
    const clock = createGatedClock(4);
    const j = await job({ events: 12_000, faults: { latencyMs: 1 }, clock }, [STREAMS[0] as StreamSpec]);
    const cli = spawnCli(['run', '--config', j.file], { cwd: j.dir, env: { SIM_KEY: KEY } });
    await clock.whenHeld(4);
    cli.child.kill('SIGINT');
    const exit = await cli.done;
    expect(exit.code, describeExit(exit)).toBe(130);
    const lines = exit.stderr.trimEnd().split('\n');
    expect(lines.find((line) => line.startsWith('bulk-extract: '))).toMatch(/^bulk-extract: interrupted in /);
    expect(lines.at(-1)).toBe(RESUME_HINT);
    expect(RESUME_HINT).toMatch(/run the same command again to resume$/);
    clock.open();
  });
});
