import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseSamples, prometheusTool, type Sample, valueOf } from '../support/prom-text.js';
import { startPushgateway, stopPushgateways } from '../support/pushgateway.js';
import { describeExit, type Exit, type Job, newJob, newSimulator, recordsIn, runCliWith, tempDir } from '../support/resume-harness.js';

afterEach(stopPushgateways);

/**
 * A run's lifecycle as the textfile shows it, with the built CLI against the simulator: a start
 * newer than the last end while a run lasts, its own end, exit code and error code once it ended;
 * and a run killed by SIGKILL (as an OOM kill is) leaves the start without an end.
 */
const KEY = 'lifecycle-test-api-key-0001';
const WRONG_KEY = 'lifecycle-test-wrong-key-0002';
const SPAWNS = 120_000;

/** What the textfile says of the runs. */
interface Lifecycle {
  start: number | undefined;
  end: number | undefined;
  deadline: number | undefined;
  exitCode: number | undefined;
  success: number | undefined;
  codes: string[];
}

function lifecycleOf(text: string): Lifecycle {
  const samples: Sample[] = parseSamples(text);
  return {
    start: valueOf(samples, 'bulk_extract_run_start_timestamp_seconds', { export: 'lifecycle' }),
    end: valueOf(samples, 'bulk_extract_run_end_timestamp_seconds', { export: 'lifecycle' }),
    deadline: valueOf(samples, 'bulk_extract_run_deadline_timestamp_seconds', { export: 'lifecycle' }),
    exitCode: valueOf(samples, 'bulk_extract_last_run_exit_code'),
    success: valueOf(samples, 'bulk_extract_last_success_timestamp_seconds'),
    codes: samples.filter((s) => s.name === 'bulk_extract_last_run_info' && s.value === 1).map((s) => s.labels.code ?? ''),
  };
}

/** When the newest run record says its run ended, in seconds (its name: the end, or the refusal). */
function lastRecordEnd(out: string): number {
  const newest = recordsIn(out).at(-1)!;
  const time = /^(\d{4}-\d\d-\d\dT\d\d)-(\d\d)-(\d\d\.\d{3}Z)/.exec(newest.name)!;
  return Date.parse(`${time[1]}:${time[2]}:${time[3]}`) / 1000;
}

/** A job of 8 pages (4000 events, 2 partitions of 4 pages) with `metrics`, and how to run it. */
async function lifecycleJob(metrics: Record<string, unknown>) {
  const sim = await newSimulator({ events: 4000, assets: 0, seed: 3, apiKeys: [KEY] });
  const job: Job = newJob(sim, [{ resource: 'events', partitions: 2, limit: 500 }], { formats: ['ndjson'] }, 'metrics-lifecycle');
  appendFileSync(job.file, `metrics: ${JSON.stringify({ ...metrics, export: 'lifecycle' })}\n`);
  const run = (key: string, args: string[] = [], env: Record<string, string> = {}): Promise<Exit> =>
    runCliWith(['run', '--config', job.file, ...args], { cwd: job.dir, env: { SIM_KEY: key, ...env } });
  return { job, run };
}

/** SIGKILL at the 4th page of 8 (half way), as an OOM kill would: nothing runs after that, no record is written. */
const HALF_WAY = { BULK_EXTRACT_CRASH_AT: 'after-append:4' };

describe('the run lifecycle in the textfile', () => {
  it('complete, refused, then SIGKILLed half way: the killed run leaves its start newer than the end of the run before, whose exit code stays', async () => {
    const path = join(tempDir('metrics-lifecycle-textfile'), 'lifecycle.prom');
    const { job, run } = await lifecycleJob({ textfile: path });

    const complete = await run(KEY);
    expect(complete.code, describeExit(complete)).toBe(0);
    const first = lifecycleOf(readFileSync(path, 'utf8'));
    expect(first.end, 'its own end, the time its record has').toBe(lastRecordEnd(job.out));
    expect(first.start).toBeLessThan(first.end!);
    expect(first).toMatchObject({ exitCode: 0, success: first.end, codes: ['none'] });

    const refused = await run(WRONG_KEY, ['--fresh']);
    expect(refused.code, describeExit(refused)).toBe(3);
    const second = lifecycleOf(readFileSync(path, 'utf8'));
    expect(second.end, 'a refused run ends too').toBe(lastRecordEnd(job.out));
    expect(second.start).toBeLessThanOrEqual(second.end!);
    expect(second).toMatchObject({ exitCode: 3, success: first.end, codes: ['E_AUTH'] });

    const killed = await run(KEY, ['--fresh'], HALF_WAY);
    expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
    expect(recordsIn(job.out)).toHaveLength(2);
    const third = lifecycleOf(readFileSync(path, 'utf8'));
    expect(third.start, 'the killed run\'s start').toBeGreaterThan(second.end!);
    expect(third, 'the run before stays the last that ended').toMatchObject({
      end: second.end,
      exitCode: 3,
      success: first.end,
      codes: ['E_AUTH'],
    });

    // The next run completes: its end is newer than its start again.
    const resumed = await run(KEY);
    expect(resumed.code, describeExit(resumed)).toBe(0);
    const fourth = lifecycleOf(readFileSync(path, 'utf8'));
    expect(fourth.start).toBeGreaterThan(third.start!);
    expect(fourth.end).toBeGreaterThan(fourth.start!);
    expect(fourth).toMatchObject({ exitCode: 0, success: fourth.end, codes: ['none'] });
  }, SPAWNS);

  it('the first run of an export, SIGKILLed: a start and no end, no exit code, no error code', async () => {
    const path = join(tempDir('metrics-lifecycle-first'), 'lifecycle.prom');
    const { job, run } = await lifecycleJob({ textfile: path });
    const killed = await run(KEY, [], HALF_WAY);
    expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
    expect(recordsIn(job.out)).toEqual([]);
    const left = lifecycleOf(readFileSync(path, 'utf8'));
    expect(left.start).toBeGreaterThan(0);
    expect(left).toMatchObject({ end: undefined, exitCode: undefined, success: undefined, codes: [] });
  }, SPAWNS);

  it.skipIf(prometheusTool('prometheus-pushgateway') === undefined)(
    'pushed to a Pushgateway: after a complete run, a run SIGKILLed half way leaves its start and deadline pushed and the end of the one before',
    async () => {
      const url = await startPushgateway(prometheusTool('prometheus-pushgateway')!);
      const { run } = await lifecycleJob({ pushgateway: url });
      const pushed = async () => lifecycleOf(await (await fetch(`${url}/metrics`)).text());
      const complete = await run(KEY, ['--metrics-run-deadline', '48h']);
      expect(complete.code, describeExit(complete)).toBe(0);
      const before = await pushed();
      expect(before.end).toBeGreaterThan(before.start!);
      expect(before.deadline).toBe(before.start! + 48 * 3600);
      const killed = await run(KEY, ['--fresh'], HALF_WAY);
      expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
      const after = await pushed();
      expect(after.start).toBeGreaterThan(before.end!);
      expect(after).toMatchObject({ end: before.end, exitCode: 0, success: before.end, codes: ['none'] });
      // A push adds to the group (POST): the killed run's own deadline (the default, 50 min) replaced the 48 h.
      expect(after.deadline).toBeCloseTo(after.start! + 50 * 60, 3);
    },
    SPAWNS,
  );
});
