import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StoredRunRecord } from '../../src/export/index.js';
import type { SimulatorOptions } from '../../src/simulator/index.js';
import {
  createGatedClock,
  describeExit,
  type Exit,
  type Job,
  listFiles,
  newJob,
  newSimulator,
  readManifest,
  recordsIn,
  runCliWith,
  spawnCli,
  type StreamSpec,
} from '../support/resume-harness.js';

/**
 * Every run leaves its `run --json` summary in the output as `_runs/<time>.json`, and
 * `status` lists the last runs from there. Real CLI processes against the simulator: events
 * 4,000 in 2 partitions of 2 pages, shards of 2000 rows.
 */
const KEY = 'run-records-key-0001';
const STREAMS: StreamSpec[] = [{ resource: 'events', partitions: 2, limit: 1000 }];
const RECORD_NAME = /^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z\.json$/;

async function job(options: Partial<SimulatorOptions> = {}): Promise<Job> {
  const sim = await newSimulator({ events: 4000, assets: 10, seed: 71, apiKeys: [KEY], ...options });
  return newJob(sim, STREAMS, {}, 'run-records');
}

function cli(j: Job, args: string[], env: Record<string, string> = {}): Promise<Exit> {
  return runCliWith([...args, '--config', j.file], { cwd: j.dir, env: { SIM_KEY: KEY, ...env } });
}

/** The time a record's name gives, as ISO 8601. */
const nameTime = (name: string) => name.replace(/T(\d\d)-(\d\d)-/, 'T$1:$2:').replace(/(\.worker-\d+-of-\d+)?\.json$/, '');

describe.concurrent('the record of a run in _runs/', () => {
  it('a complete run: the very line run --json printed, named by the run\'s end', async () => {
    const j = await job();
    const exit = await cli(j, ['run', '--json']);
    expect(exit.code, describeExit(exit)).toBe(0);
    const [only, ...more] = listFiles(join(j.out, '_runs'));
    expect(more).toEqual([]);
    expect(only).toMatch(RECORD_NAME);
    expect(readFileSync(join(j.out, '_runs', only ?? ''), 'utf8')).toBe(exit.stdout);
    const manifest = readManifest(j.out);
    expect(nameTime(only ?? '')).toBe(manifest.finishedAt);
    expect(JSON.parse(exit.stdout)).toMatchObject({ state: 'complete', exitCode: 0, rowsThisRun: 4000 });

    // Without --json too; a run with nothing to do is recorded as such; a dry run writes nothing.
    expect((await cli(j, ['run'])).code).toBe(0);
    expect((await cli(j, ['run', '--dry-run'])).code).toBe(0);
    const records = recordsIn(j.out);
    expect(records.map(({ record }) => [record.state, record.exitCode, record.requests])).toEqual([
      ['complete', 0, manifest.requests],
      ['nothing-to-do', 0, 0],
    ]);
  });

  it('a failed run: state failed, exit code 1, the reason and the partitions\' errors', async () => {
    const j = await job({ faults: { rate500: 1 } });
    const exit = await cli(j, ['run']);
    expect(exit.code, describeExit(exit)).toBe(1);
    const [failed] = recordsIn(j.out);
    expect(failed?.record).toMatchObject({ state: 'failed', exitCode: 1, reason: { code: 'E_HTTP_STATUS' }, rowsThisRun: 0 });
    expect(failed?.record.errors.map((error) => error.partition).sort()).toEqual([1, 2]);
    expect(failed?.record.reason?.message).toContain('HTTP 500');
  });

  it('an interrupted run (SIGINT with requests in flight): state interrupted, exit code 130', async () => {
    const clock = createGatedClock(2);
    const j = await job({ faults: { latencyMs: 1 }, clock });
    const run = spawnCli(['run', '--config', j.file], { cwd: j.dir, env: { SIM_KEY: KEY } });
    await clock.whenHeld(2);
    run.child.kill('SIGINT');
    const exit = await run.done;
    expect(exit.code, describeExit(exit)).toBe(130);
    expect(recordsIn(j.out).map(({ record }) => [record.state, record.exitCode, record.rowsThisRun])).toEqual([
      ['interrupted', 130, 2000],
    ]);
  });

  it('the workers of a split job: each record names its worker', async () => {
    const j = await job();
    const exits = await Promise.all([0, 1].map((i) => cli(j, ['run', '--shard', `${i}/2`])));
    for (const exit of exits) expect(exit.code, describeExit(exit)).toBe(0);
    const names = listFiles(join(j.out, '_runs'));
    expect(names.map((name) => name.replace(/^[^.]+\.\d{3}Z/, '<time>')).sort()).toEqual([
      '<time>.worker-0-of-2.json',
      '<time>.worker-1-of-2.json',
    ]);
    expect(recordsIn(j.out).map(({ record }) => record.state)).toEqual(['complete', 'complete']);
  });
});

describe.concurrent('status lists the last runs', () => {
  /** An output with 3 runs recorded: complete, nothing to do, refused for drift. */
  async function withHistory(): Promise<Job> {
    const j = await job();
    expect((await cli(j, ['run'])).code).toBe(0);
    expect((await cli(j, ['run'])).code).toBe(0);
    expect((await cli(j, ['run', '--formats', 'ndjson'])).code).toBe(2);
    expect(recordsIn(j.out)).toHaveLength(3);
    return j;
  }

  it('in text: one line each, newest first, --runs N of them (default 5, 0: none)', async () => {
    const j = await withHistory();
    const status = await runCliWith(['status', '--out', j.out]);
    expect(status.code, describeExit(status)).toBe(0);
    const block = status.stdout.split('last 3 runs, newest first:\n')[1]?.trimEnd().split('\n') ?? [];
    expect(block, status.stdout).toHaveLength(3);
    const [refused, idle, complete] = block;
    expect(refused).toMatch(/^ {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ {2}refused +exit 2 /);
    expect(refused).toMatch(/ exit 2 +- +0 rows {2}0 requests \(0 throttled\) {2}E_CHECKPOINT: /);
    expect(refused).toContain('E_CHECKPOINT: The job\'s settings differ from the run recorded in');
    expect(idle).toMatch(/ {2}nothing-to-do +exit 0 +0s +0 rows {2}0 requests \(0 throttled\)$/);
    expect(complete).toMatch(/ {2}complete +exit 0 +\d+s +4,000 rows {2}\d+ requests \(0 throttled\)$/);

    const two = await runCliWith(['status', '--out', j.out, '--runs', '2']);
    expect(two.stdout).toContain('last 2 runs, newest first:\n');
    expect(two.stdout).not.toMatch(/ complete +exit 0/);
    const none = await runCliWith(['status', '--out', j.out, '--runs', '0']);
    expect(none.stdout).not.toMatch(/runs/);
    const bad = await runCliWith(['status', '--out', j.out, '--runs', 'all']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--runs expects a whole number of runs (0: none), got \'all\'');
  });

  it('in --json: "runs", newest first, each with its key, time, worker and record', async () => {
    const j = await withHistory();
    const status = await runCliWith(['status', '--out', j.out, '--json', '--runs', '2']);
    expect(status.code, describeExit(status)).toBe(0);
    const { runs, state } = JSON.parse(status.stdout) as { runs: StoredRunRecord[]; state: string };
    expect(state).toBe('complete');
    const files = recordsIn(j.out).reverse();
    expect(runs.map((run) => run.key)).toEqual(files.slice(0, 2).map(({ name }) => `_runs/${name}`));
    expect(runs.map((run) => run.record)).toEqual(files.slice(0, 2).map(({ record }) => record));
    expect(runs[0]).toMatchObject({ worker: null, recordedAt: nameTime(files[0]?.name ?? '') });
    const none = JSON.parse((await runCliWith(['status', '--out', j.out, '--json', '--runs', '0'])).stdout) as {
      runs: unknown[];
    };
    expect(none.runs).toEqual([]);
  });

  it('a damaged record is skipped with a warning naming it; status still succeeds', async () => {
    const j = await withHistory();
    const newest = recordsIn(j.out).at(-1)?.name ?? '';
    const path = join(j.out, '_runs', newest);
    writeFileSync(path, readFileSync(path, 'utf8').slice(0, 40));
    const status = await runCliWith(['status', '--out', j.out]);
    expect(status.code, describeExit(status)).toBe(0);
    expect(status.stdout).toContain('last 2 runs, newest first:\n');
    expect(status.stderr).toContain(`${path} is not valid JSON (damaged or truncated): not a run record of bulk-extract. Skipped;`);
  });

  it('an output without records says so', async () => {
    const j = await job();
    expect((await cli(j, ['run'])).code).toBe(0);
    rmSync(join(j.out, '_runs'), { recursive: true });
    const status = await runCliWith(['status', '--out', j.out]);
    expect(status.stdout).toContain('\nruns: none recorded in _runs/ yet');
  });
});
