import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closedPort } from '../support/closed-port.js';
import { familiesOf, type FakePushgateway, startFakePushgateway } from '../support/fake-pushgateway.js';
import { parseSamples, valueOf } from '../support/prom-text.js';
import {
  createGatedClock,
  describeExit,
  type Job,
  newJob,
  newSimulator,
  recordsIn,
  runCliWith,
  snapshot,
  spawnCli,
} from '../support/resume-harness.js';

/**
 * A run refused because another live run holds its output (an overlap) exits 75, with E_LOCKED in
 * its summary and record, and publishes only when it was refused: the live run's lock, textfile,
 * `/metrics` and pushed metrics stay as that run keeps them. The built CLI against the simulator,
 * a fake Pushgateway on loopback recording the pushes.
 */
const KEY = 'overlap-test-key-0001';
const OVERLAP = 'bulk_extract_overlap_refused_timestamp_seconds';

let gateway: FakePushgateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

function run(job: Job, args: string[]) {
  return runCliWith(['run', '--config', job.file, ...args], { cwd: job.dir, env: { SIM_KEY: KEY } });
}

/**
 * The requests that change the gateway from the `from`-th on: the live run's GET of its groups (it
 * reads them once it holds the output, to remove those earlier runs left) changes nothing.
 */
const writes = (from: number) => (gateway?.requests ?? []).slice(from).filter(({ method }) => method !== 'GET');
const pushes = (from: number) => writes(from).map(({ method, path }) => `${method} ${path}`);

describe('an overlap: exit 75', () => {
  it('a live run holds the folder: exit 75, E_LOCKED; its textfile, /metrics and pushes kept, the refusal added', async () => {
    const clock = createGatedClock();
    const faults = { latencyMs: 1 };
    const sim = await newSimulator({ events: 4000, assets: 100, seed: 3, apiKeys: [KEY], faults, clock });
    const job = newJob(sim, [{ resource: 'events', partitions: 2, limit: 1000 }], { formats: ['ndjson'] }, 'overlap');
    gateway = await startFakePushgateway();
    const port = await closedPort();
    const textfile = join(job.dir, 'hourly.prom');
    const metrics = { export: 'hourly', textfile, pushgateway: gateway.url, port, host: '127.0.0.1', intervalSeconds: 3600 };
    appendFileSync(job.file, `metrics: ${JSON.stringify(metrics)}\n`);

    const holder = spawnCli(['run', '--config', job.file], { cwd: job.dir, env: { SIM_KEY: KEY } });
    // A request is in flight: the holder has its lock, its first checkpoint, its textfile and first push.
    await clock.whenHeld(1);
    const liveText = readFileSync(textfile, 'utf8');
    const pushedByHolder = gateway.requests.length;
    expect(pushes(0)).toContain('POST /metrics/job/hourly');
    const before = snapshot(job.out);

    const refusedAt = Date.now() / 1000;
    const refused = await run(job, ['--json']);
    expect(refused.code, describeExit(refused)).toBe(75);
    expect(refused.stderr).toContain(`is in use by another bulk-extract run (pid ${holder.child.pid}`);
    expect(JSON.parse(refused.stdout)).toMatchObject({ exitCode: 75, state: 'refused', reason: { code: 'E_LOCKED' } });
    const added = recordsIn(job.out).map(({ record }) => record);
    expect(added).toHaveLength(1);
    expect(added[0]).toMatchObject({ exitCode: 75, state: 'refused', reason: { code: 'E_LOCKED' } });
    // snapshot() leaves _runs/ out: the refusal's record is its one change.
    expect(snapshot(job.out), 'the folder, its lock included, as the live run keeps it').toEqual(before);

    expect(readFileSync(textfile, 'utf8'), 'the live run\'s textfile').toBe(liveText);
    expect(refused.stderr, 'no endpoint tried on the live run\'s port').not.toMatch(/metrics: serving|cannot serve/);
    const served = parseSamples(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
    expect(valueOf(served, OVERLAP), 'the live run\'s /metrics').toBeUndefined();
    expect(pushes(pushedByHolder), 'one POST, to the run-wide group').toEqual(['POST /metrics/job/hourly']);
    const body = writes(pushedByHolder)[0]?.body ?? '';
    expect(familiesOf(body)).toEqual([OVERLAP]);
    const at = valueOf(parseSamples(body), OVERLAP, { export: 'hourly' }) ?? 0;
    expect(at).toBeGreaterThanOrEqual(Math.floor(refusedAt));
    expect(at).toBeLessThanOrEqual(Date.now() / 1000);

    clock.open();
    const first = await holder.done;
    expect(first.code, describeExit(first)).toBe(0);
    const last = parseSamples(readFileSync(textfile, 'utf8'));
    expect(valueOf(last, 'bulk_extract_last_run_exit_code'), 'the live run\'s end is the last run').toBe(0);
    expect(valueOf(last, OVERLAP)).toBeUndefined();
  });

  it('a run without --shard while a worker of the split job runs: exit 75, and --dry-run says 75 too', async () => {
    const sim = await newSimulator({ events: 2000, assets: 100, seed: 4, apiKeys: [KEY] });
    const job = newJob(sim, [{ resource: 'events', partitions: 2, limit: 1000 }], { formats: ['ndjson'] }, 'overlap-split');
    gateway = await startFakePushgateway();
    appendFileSync(job.file, `metrics: ${JSON.stringify({ pushgateway: gateway.url })}\n`);
    const worker = await run(job, ['--shard', '0/2']);
    expect(worker.code, describeExit(worker)).toBe(0);
    expect(worker.stderr).toContain('worker 0/2: complete; worker 1 is not');
    // Worker 1 runs: a live process holds its lock.
    mkdirSync(join(job.out, '_workers'), { recursive: true });
    const owner = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString() };
    writeFileSync(join(job.out, '_workers', 'worker-1-of-2.lock'), JSON.stringify(owner));
    const before = snapshot(job.out);
    const records = recordsIn(job.out).length;

    const dry = await run(job, ['--dry-run']);
    expect(dry.code, describeExit(dry)).toBe(75);
    expect(dry.stdout).toContain('worker 1/2 of a split job is running; a run without --shard now would be refused.');
    // A worker's dry run is refused by itself running, not by the others (they run side by side).
    const sibling = await run(job, ['--dry-run', '--shard', '0/2']);
    expect(sibling.code, describeExit(sibling)).toBe(0);
    expect(sibling.stdout).not.toContain('would be refused');
    const itself = await run(job, ['--dry-run', '--shard', '1/2']);
    expect(itself.code, describeExit(itself)).toBe(75);
    expect(itself.stdout).toContain('worker 1/2 of a split job is running; a second run of it now would be refused.');

    const pushed = gateway.requests.length;
    const whole = await run(job, ['--json']);
    expect(whole.code, describeExit(whole)).toBe(75);
    expect(whole.stderr).toContain('has a split job in progress (2 workers');
    expect(whole.stderr).toContain('workers 1 are running');
    expect(JSON.parse(whole.stdout)).toMatchObject({ exitCode: 75, reason: { code: 'E_LOCKED' } });
    expect(recordsIn(job.out).slice(records).map(({ record }) => record.exitCode)).toEqual([75]);
    expect(snapshot(job.out)).toEqual(before);
    // The export label is the job file's name: job.yaml.
    expect(pushes(pushed)).toEqual(['POST /metrics/job/job']);
    expect(familiesOf(writes(pushed)[0]?.body ?? '')).toEqual([OVERLAP]);
  });
});
