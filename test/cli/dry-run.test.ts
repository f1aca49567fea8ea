import { chmodSync, cpSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import {
  describeExit,
  type Exit,
  type JobSpec,
  newSimulator,
  runCliWith,
  snapshot,
  type StreamSpec,
  tempDir,
  writeJob,
} from '../support/resume-harness.js';

/**
 * `run --dry-run` finds what the run would refuse, as the run finds it, and
 * changes nothing: drift, a missing shard, a lock held by a live run, a folder this user may not
 * write. (Object storage: test/export/s3-export.test.ts.)
 */
const KEY = 'dry-run-key-0001';
const STREAMS: StreamSpec[] = [{ resource: 'events', partitions: 2, limit: 1000 }];

let sim: Simulator;
let finished: string;

beforeAll(async () => {
  sim = await newSimulator({ events: 3000, assets: 10, seed: 71, apiKeys: [KEY], recordRequests: true });
  const dir = tempDir('dry-run-template');
  finished = join(dir, 'out');
  const exit = await runCliWith(['run', '--config', writeJob(join(dir, 'job.yaml'), spec(finished))], { cwd: dir, env: { SIM_KEY: KEY } });
  expect(exit.code, describeExit(exit)).toBe(0);
});

function spec(outDir: string, extra: Partial<JobSpec> = {}): JobSpec {
  return { baseUrl: sim.baseUrl, outDir, streams: STREAMS, maxRows: 1000, ...extra };
}

/** A copy of the finished export; the dry run must leave it byte for byte as it was. */
async function dryRun(
  extra: Partial<JobSpec>,
  breakIt: (out: string) => void,
  unprivileged = false,
  flags: string[] = [],
): Promise<Exit> {
  const dir = tempDir('dry-run');
  chmodSync(dir, 0o755);
  const out = join(dir, 'out');
  cpSync(finished, out, { recursive: true });
  breakIt(out);
  const file = writeJob(join(dir, 'job.yaml'), spec(out, extra));
  const before = snapshot(out);
  const exit = await runCliWith(['run', '--config', file, '--dry-run', ...flags], { cwd: dir, env: { SIM_KEY: KEY }, unprivileged });
  expect(snapshot(out), 'a dry run changes nothing').toEqual(before);
  return exit;
}

describe.concurrent('run --dry-run tells what a run would refuse', () => {
  it('nothing wrong: exit 0, and what the run would do with each stream', async () => {
    const exit = await dryRun({}, () => {});
    expect(exit.code, describeExit(exit)).toBe(0);
    expect(exit.stdout).toContain('  events: complete since ');
    expect(exit.stdout).not.toContain('REFUSED');
  });

  it('settings drift: exit 2, with the differences', async () => {
    const exit = await dryRun({ streams: [{ resource: 'events', partitions: 2, limit: 500 }] }, () => {});
    expect(exit.code, describeExit(exit)).toBe(2);
    expect(exit.stdout).toMatch(/^REFUSED {5}a run now would stop here: The job's settings differ/m);
    expect(exit.stdout).toContain('limit =1000 in the checkpoint, =500 in the config');
  });

  it('a missing shard: exit 2, naming it', async () => {
    const exit = await dryRun({}, (out) => unlinkSync(join(out, 'events/part=2-of-2/000000.parquet')));
    expect(exit.code, describeExit(exit)).toBe(2);
    expect(exit.stdout).toContain('events/part=2-of-2/000000.parquet: missing');
  });

  it('a lock held by a live run: exit 75, as the run would (an overlap), naming its pid', async () => {
    const lock = JSON.stringify({ pid: process.pid, host: hostname(), startedAt: new Date().toISOString() });
    const exit = await dryRun({}, (out) => writeFileSync(join(out, '.lock'), lock));
    expect(exit.code, describeExit(exit)).toBe(75);
    expect(exit.stdout).toContain(`in use by another bulk-extract run (pid ${process.pid} on ${hostname()}`);
  });

  it('a folder this user may not write (nobody, a real EACCES): exit 2 (not worth retrying as is), E_OUTPUT_ACCESS', async () => {
    // More partitions than recorded would be drift; a new stream is work to do.
    const streams: StreamSpec[] = [...STREAMS, { resource: 'assets', partitions: 1 }];
    const exit = await dryRun({ streams }, () => {}, true);
    expect(exit.code, describeExit(exit)).toBe(2);
    expect(exit.stdout).toMatch(/REFUSED {5}a run now would stop here: Cannot write to \S+ \(EACCES/);
  });

  it('with --fresh, drift is no refusal (the run starts over); with --repair, the damaged partitions are listed', async () => {
    const fresh = await dryRun({ streams: [{ resource: 'events', partitions: 2, limit: 500 }] }, () => {}, false, ['--fresh']);
    expect(fresh.code, describeExit(fresh)).toBe(0);
    expect(fresh.stdout).toContain('  starts over from the first page (--fresh deletes its earlier output)');
    const repair = await dryRun({}, (out) => unlinkSync(join(out, 'events/part=2-of-2/000000.ndjson')), false, ['--repair']);
    expect(repair.code, describeExit(repair)).toBe(0);
    expect(repair.stdout).toContain('repair      would read again:\n  events/2: events/part=2-of-2/000000.ndjson: missing');
  });
});

describe('run --dry-run of a stream with metadataColumns', () => {
  it("shows each key's Parquet column, Unicode letters and digits kept", async () => {
    const dir = tempDir('dry-run-metadata-columns');
    const streams: StreamSpec[] = [{ resource: 'events', partitions: 2, limit: 1000, metadataColumns: ['ключ', '温度', 'a.b c'] }];
    const file = writeJob(join(dir, 'job.yaml'), spec(join(dir, 'out'), { streams }));
    const exit = await runCliWith(['run', '--config', file, '--dry-run'], { cwd: dir, env: { SIM_KEY: KEY } });
    expect(exit.code, describeExit(exit)).toBe(0);
    expect(exit.stdout).toContain('\n  metadata columns: metadata_ключ ("ключ"), metadata_温度 ("温度"), metadata_a_b_c ("a.b c")\n  starts from the first page\n');
  });
});

describe('run --dry-run of an instances stream', () => {
  const view = (version: string) => ({ space: 'cdf_cdm', externalId: 'CogniteAsset', version });
  const job = (version: string, extra: Record<string, unknown> = {}) => {
    const dir = tempDir('dry-run-instances');
    const stream = { resource: 'instances', name: 'assets', view: view(version), spaces: ['sim_site_a', 'sim_site_b'], split: 'space', ...extra };
    return { dir, file: writeJob(join(dir, 'job.yaml'), spec(join(dir, 'out'), { streams: [stream as never] })) };
  };
  const cli = ({ dir, file }: { dir: string; file: string }, ...flags: string[]) =>
    runCliWith(['run', '--config', file, ...flags], { cwd: dir, env: { SIM_KEY: KEY } });
  const run = (version: string) => cli(job(version), '--dry-run');

  it("lists the view's columns and the queries", async () => {
    const exit = await run('v1');
    expect(exit.code, describeExit(exit)).toBe(0);
    const queries = 'in 2 queries (split), each its own cursor chain';
    expect(exit.stdout).toContain('stream assets: POST /models/instances/list {"instanceType":"node"');
    expect(exit.stdout).toContain(queries);
    const own = 'space, externalId, instanceType, version, type, createdTime, lastUpdatedTime, deletedTime';
    expect(exit.stdout).toMatch(new RegExp(`\n {2}columns: ${own}, name, .*, installationDate, .*, extra\n`));
  });

  it('incremental: the sync request, the backfill first, then the changes since the last run from its cursors', async () => {
    const incremental = job('v1', { mode: 'incremental' });
    const before = await cli(incremental, '--dry-run');
    expect(before.code, describeExit(before)).toBe(0);
    expect(before.stdout).toContain('stream assets: POST /models/instances/sync {"with":{"instances":{"nodes":{"filter":{"and":[{"hasData":');
    const backfillRead = 'reads the sync feed from its start: every instance of the view, then the changes made meanwhile (the backfill)';
    expect(before.stdout).toContain(`  ${backfillRead}`);
    expect(before.stdout).toMatch(/ {2}starts \(run=<the run's start time>\) from the first page\n/);
    const backfill = await cli(incremental);
    expect(backfill.code, describeExit(backfill)).toBe(0);
    const after = await cli(incremental, '--dry-run');
    const changes = / {2}reads the sync feed's changes since the run that started (\S+), deletes included\n/;
    const since = changes.exec(after.stdout);
    expect(Number.isNaN(Date.parse(since?.[1] ?? '')), after.stdout).toBe(false);
    const next = / {2}starts \(run=<the run's start time>\) from the cursors the last run ended with\n/;
    expect(after.stdout).toMatch(next);
  });

  it('a view the platform does not have: refused, exit 2, naming it', async () => {
    const exit = await run('v9');
    expect(exit.code, describeExit(exit)).toBe(2);
    expect(exit.stdout).toMatch(/REFUSED {5}a run now would stop here: .*no view cdf_cdm:CogniteAsset version v9/);
  });
});
