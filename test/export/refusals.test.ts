import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, mkdirSync, readFileSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import {
  describeExit,
  type Exit,
  type JobSpec,
  listFiles,
  newSimulator,
  recordsIn,
  runCliWith,
  snapshot,
  type StreamSpec,
  tempDir,
  writeJob,
} from '../support/resume-harness.js';
import { NOBODY } from '../support/unprivileged.js';

/**
 * A refused run changes nothing: every refusal is decided before anything in
 * the output folder is touched. Each case starts from a copy of one finished export (with its
 * `_SUCCESS`), breaks one thing, runs the real CLI and compares the sha256 of every file in the
 * folder, `_SUCCESS`, checkpoint and manifest included, before and after; no lock is left. The
 * one file a refusal adds is its record in `_runs/` (none when the job file was at fault).
 */
const KEY = 'refusals-key-0001';
const STREAMS: StreamSpec[] = [
  { resource: 'events', partitions: 3, limit: 1000 },
  { resource: 'assets', partitions: 1, limit: 1000 },
];

let sim: Simulator;
/** The finished export every case copies. */
let finished: string;

beforeAll(async () => {
  sim = await newSimulator({ events: 6000, assets: 300, seed: 31, apiKeys: [KEY] });
  const dir = tempDir('refusals-template');
  finished = join(dir, 'out');
  const file = writeJob(join(dir, 'job.yaml'), spec(finished));
  const exit = await runCliWith(['run', '--config', file], { cwd: dir, env: { SIM_KEY: KEY } });
  expect(exit.code, describeExit(exit)).toBe(0);
  expect(listFiles(finished)).toContain('_SUCCESS');
});

function spec(outDir: string, extra: Partial<JobSpec> = {}): JobSpec {
  return { baseUrl: sim.baseUrl, outDir, streams: STREAMS, formats: ['parquet', 'ndjson'], maxRows: 2000, ...extra };
}

interface Case {
  dir: string;
  out: string;
  file: string;
}

/** A copy of the finished export and its job file, in a folder of its own (open to nobody too). */
function copyOfFinished(extra: Partial<JobSpec> = {}): Case {
  const dir = tempDir('refusals');
  chmodSync(dir, 0o755);
  const out = join(dir, 'out');
  cpSync(finished, out, { recursive: true });
  return { dir, out, file: writeJob(join(dir, 'job.yaml'), spec(out, extra)) };
}

/**
 * Runs the case's job; the folder must be byte for byte as it was, and hold no lock. Its one
 * change is the run's record in `_runs/`, refused with the code `recorded`, or none (`false`: the
 * job file was at fault, or the record could not be written).
 */
async function refused(
  c: Case,
  options: { env?: Record<string, string>; unprivileged?: boolean; args?: string[]; recorded: string | false },
): Promise<Exit> {
  const before = snapshot(c.out);
  const records = recordsIn(c.out).length;
  const exit = await runCliWith(['run', '--config', c.file, ...(options.args ?? [])], {
    cwd: c.dir,
    env: { SIM_KEY: KEY, ...options.env },
    unprivileged: options.unprivileged ?? false,
  });
  expect(snapshot(c.out), `the folder changed:\n${describeExit(exit)}`).toEqual(before);
  expect(listFiles(c.out)).not.toContain('.lock');
  expect(exit.stderr, 'no stack trace').not.toMatch(/^\s+at /m);
  const added = recordsIn(c.out).slice(records).map(({ record }) => record);
  if (options.recorded === false) {
    expect(added, describeExit(exit)).toEqual([]);
  } else {
    expect(added, describeExit(exit)).toHaveLength(1);
    expect(added[0]).toMatchObject({ state: 'refused', exitCode: exit.code, reason: { code: options.recorded } });
  }
  return exit;
}

const firstShard = (c: Case) => join(c.out, 'events', 'part=1-of-3', '000000.parquet');

describe.concurrent('a refused run changes nothing in the output folder', () => {
  it('settings that differ from the recorded run (drift): exit 2, _SUCCESS kept', async () => {
    const c = copyOfFinished({ streams: [{ ...STREAMS[0], limit: 500 } as StreamSpec, STREAMS[1] as StreamSpec] });
    const exit = await refused(c, { recorded: 'E_CHECKPOINT' });
    expect(exit.code, describeExit(exit)).toBe(2);
    expect(exit.stderr).toContain('settings differ from the run recorded');
    expect(listFiles(c.out)).toContain('_SUCCESS');
  });

  it('a missing shard: exit 2, naming it and `repair`', async () => {
    const c = copyOfFinished();
    unlinkSync(firstShard(c));
    const exit = await refused(c, { recorded: 'E_CHECKPOINT' });
    expect(exit.code, describeExit(exit)).toBe(2);
    expect(exit.stderr).toContain('events/part=1-of-3/000000.parquet: missing');
    expect(exit.stderr).toContain('bulk-extract repair');
  });

  it('a damaged (truncated) shard: exit 2, said to be damaged, not missing', async () => {
    const c = copyOfFinished();
    truncateSync(firstShard(c), 100);
    const exit = await refused(c, { recorded: 'E_CHECKPOINT' });
    expect(exit.code, describeExit(exit)).toBe(2);
    expect(exit.stderr).toMatch(/000000\.parquet: damaged \(truncated: 100 bytes, the manifest records \d+\)/);
    expect(exit.stderr).toContain('(1 damaged: another size than the manifest records)');
    expect(exit.stderr).not.toContain('missing');
    expect(exit.stderr).toContain('bulk-extract repair');
  });

  it('a lock held by a live run: exit 75 (an overlap), and that run\'s lock stays', async () => {
    const c = copyOfFinished();
    writeFileSync(join(c.out, '.lock'), JSON.stringify({ pid: process.pid, host: hostname(), startedAt: new Date().toISOString() }));
    const before = snapshot(c.out);
    const exit = await runCliWith(['run', '--config', c.file], { cwd: c.dir, env: { SIM_KEY: KEY } });
    expect(exit.code, describeExit(exit)).toBe(75);
    expect(exit.stderr).toContain(`in use by another bulk-extract run (pid ${process.pid}`);
    expect(snapshot(c.out)).toEqual(before);
    // The holder's folder gets the refused run's record beside its own, under another name.
    const records = recordsIn(c.out).map(({ record }) => record);
    expect(records.at(-1)).toMatchObject({ state: 'refused', exitCode: 75, reason: { code: 'E_LOCKED' } });
  });

  it('an unreadable (truncated) checkpoint: exit 2', async () => {
    const c = copyOfFinished();
    const path = join(c.out, '_checkpoint.json');
    writeFileSync(path, readFileSync(path, 'utf8').slice(0, 200));
    const exit = await refused(c, { recorded: 'E_CHECKPOINT' });
    expect(exit.code, describeExit(exit)).toBe(2);
    expect(exit.stderr).toContain('is not valid JSON');
  });

  it('a bad config (an unknown key): exit 2', async () => {
    const c = copyOfFinished();
    writeFileSync(c.file, readFileSync(c.file, 'utf8').replace('partitions: 3', 'partitions: 3\n    colour: red'));
    const exit = await refused(c, { recorded: false });
    expect(exit.code, describeExit(exit)).toBe(2);
    expect(exit.stderr).toContain('Unrecognized key: "colour"');
  });

  it('a credential the platform refuses, before the first page: exit 3, one message', async () => {
    // An unfinished export (the assets stream is new), so the run would have work to do.
    const c = copyOfFinished({ streams: [...STREAMS, { resource: 'assets', name: 'more-assets', partitions: 2 }] });
    const exit = await refused(c, { env: { SIM_KEY: 'a-wrong-key-0000' }, recorded: 'E_AUTH' });
    expect(exit.code, describeExit(exit)).toBe(3);
    expect(exit.stderr.match(/refused the api-key credential/g)).toHaveLength(1);
  });

  it('--fresh with a credential the platform refuses: exit 3, the earlier output kept, and no log says it was deleted', async () => {
    const c = copyOfFinished();
    const exit = await refused(c, { env: { SIM_KEY: 'a-wrong-key-0000' }, args: ['--fresh'], recorded: 'E_AUTH' });
    expect(exit.code, describeExit(exit)).toBe(3);
    expect(exit.stderr).not.toContain('deleting earlier output');
  });

  it('an output folder this user may not write (a real EACCES, as nobody): exit 2, E_OUTPUT_ACCESS message', async () => {
    const c = copyOfFinished({ streams: [...STREAMS, { resource: 'assets', name: 'more-assets', partitions: 2 }] });
    const exit = await refused(c, { unprivileged: true, recorded: false });
    expect(exit.code, describeExit(exit)).toBe(2);
    expect(exit.stderr).toContain(`Cannot write to ${c.out}`);
    expect(exit.stderr).toContain('EACCES');
    expect(exit.stderr).toContain('Nothing in the output folder was changed');
  });

  it('a file in it that this user may not replace (a sticky folder, files of another user): exit 2 naming the file', async () => {
    const c = copyOfFinished({ streams: [...STREAMS, { resource: 'assets', name: 'more-assets', partitions: 2 }] });
    // Like a shared /tmp: anyone may add files, only a file's owner may replace it.
    chmodSync(c.out, 0o1777);
    for (const name of ['events', 'assets']) chownDeep(join(c.out, name), NOBODY);
    mkdirSync(join(c.out, 'more-assets'), { mode: 0o777 });
    chmodSync(join(c.out, 'more-assets'), 0o777);
    const exit = await refused(c, { unprivileged: true, recorded: false });
    expect(exit.code, describeExit(exit)).toBe(2);
    expect(exit.stderr).toContain('the run\'s record was not written to _runs/ (the run\'s outcome stands)');
    expect(exit.stderr).toMatch(/Cannot write to \S+\/(_SUCCESS|_manifest\.json) \(EPERM: its folder is sticky/);
  });
});

describe.concurrent('an immutable folder (chattr +i: EPERM even for root)', () => {
  it.for([
    ['the output folder', (c: Case) => c.out],
    ['a stream\'s folder in it', (c: Case) => join(c.out, 'more-assets')],
  ] as const)('%s: exit 2 naming the flag, nothing changed', async ([, folderOf], { skip }) => {
    const c = copyOfFinished({ streams: [...STREAMS, { resource: 'assets', name: 'more-assets', partitions: 2 }] });
    const folder = folderOf(c);
    mkdirSync(folder, { recursive: true });
    if (!chattr('+i', folder)) skip('chattr +i is not available here');
    try {
      // The run's record goes to _runs/, which is not immutable.
      const exit = await refused(c, { recorded: 'E_OUTPUT_ACCESS' });
      expect(exit.code, describeExit(exit)).toBe(2);
      expect(exit.stderr).toContain(`Cannot write to ${folder}`);
      expect(exit.stderr).toContain('(EPERM: the operation is not permitted whatever the permissions: the folder or file is immutable');
      expect(exit.stderr).toContain('Clear the flag (chattr -i or -a)');
    } finally {
      chattr('-i', folder);
    }
  });
});

/** Sets or clears a file attribute; false when this system cannot (no chattr, no CAP_LINUX_IMMUTABLE). */
function chattr(change: string, path: string): boolean {
  try {
    execFileSync('chattr', [change, path], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Gives a folder and everything in it to `uid`. */
function chownDeep(dir: string, uid: number): void {
  chownSync(dir, uid, uid);
  for (const path of listFiles(dir)) chownSync(join(dir, path), uid, uid);
  for (const sub of new Set(listFiles(dir).map((p) => p.split('/').slice(0, -1).join('/')))) {
    if (sub !== '') chownSync(join(dir, sub), uid, uid);
  }
}
