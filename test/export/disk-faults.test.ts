import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  describeExit,
  type Exit,
  expectedIds,
  expectExactOutput,
  inspectCrashState,
  newJob,
  newSimulator,
  readCheckpoint,
  runCliWith,
  sha256,
} from '../support/resume-harness.js';

const KEY = 'disk-fault-key-0001';

async function setUp(prefix: string, extra: { checkpoint?: string } = {}) {
  const sim = await newSimulator({ events: 9000, assets: 300, seed: 11, apiKeys: [KEY] });
  const job = newJob(
    sim,
    [
      { resource: 'events', partitions: 3, limit: 1000 },
      { resource: 'assets', partitions: 1, limit: 300 },
    ],
    extra,
    prefix,
  );
  const run = (env: Record<string, string> = {}) =>
    runCliWith(['run', '--config', job.file, '--log-level', 'warn'], { cwd: job.dir, env: { SIM_KEY: KEY, ...env } });
  const expected = [
    { name: 'events', resource: 'events', partitions: 3, formats: ['parquet', 'ndjson'], ids: expectedIds(sim, 'events') },
    { name: 'assets', resource: 'assets', partitions: 1, formats: ['parquet', 'ndjson'], ids: expectedIds(sim, 'assets') },
  ] as const;
  return { sim, job, run, expected: [...expected].map((e) => ({ ...e, formats: [...e.formats] })) };
}

describe('disk faults: a clear error, nothing committed lost, an exact resume after the fix', () => {
  // Write 1 is the checkpoint of the initial save; later ones are shard data, manifests, checkpoints.
  it.each([
    ['ENOSPC', 1],
    ['ENOSPC', 4],
    ['ENOSPC', 9],
    ['ENOSPC', 17],
    ['EIO', 12],
  ])('%s on write %i', async (code, n) => {
    const { job, run, expected } = await setUp(`disk-${code}-${n}`);
    const failed = await run({ BULK_EXTRACT_FAIL_WRITE: `${code}:${n}` });
    expect(failed.code, describeExit(failed)).toBe(1);
    expect(failed.stderr).toContain(`(${code}: ${code === 'ENOSPC' ? 'the disk is full' : ''}`);
    expect(failed.stderr).toContain('Shards committed before this and the checkpoint are intact');
    expect(failed.stderr).not.toMatch(/_SUCCESS/);

    // What is on disk is consistent: no temp file, every checkpointed shard listed and intact.
    const state = await inspectCrashState(job.out);
    expect(state.inprogress, 'temp files left after a failed write').toEqual([]);
    expect(state.pastCheckpoint).toEqual([]);
    for (const file of state.manifest?.files ?? []) {
      expect(sha256(join(job.out, file.path)), file.path).toBe(file.sha256);
    }

    const resumed = await run();
    expect(resumed.code, describeExit(resumed)).toBe(0);
    await expectExactOutput(job.out, expected);
  });

  // Write 1 is in the output folder itself (the checkpoint); 4 and 9 in a partition's folder.
  it.each([
    ['EROFS', 1, 'the file system is read-only'],
    ['EROFS', 4, 'the file system is read-only'],
    ['EPERM', 9, 'the folder or file is immutable or append-only'],
  ])('%s on write %i: not worth retrying as is (exit 2), naming the cause; a run after the fix resumes', async (code, n, cause) => {
    const { job, run, expected } = await setUp(`disk-${code}-${n}`);
    const failed = await run({ BULK_EXTRACT_FAIL_WRITE: `${code}:${n}` });
    expect(failed.code, describeExit(failed)).toBe(2);
    expect(failed.stderr).toContain(`(${code}: `);
    expect(failed.stderr).toContain(cause);
    expect(failed.stderr).toContain('Shards committed before this and the checkpoint are intact');
    expect(failed.stderr).not.toContain('the output folder is not writable');

    const state = await inspectCrashState(job.out);
    expect(state.inprogress, 'temp files left after a failed write').toEqual([]);
    expect(state.pastCheckpoint).toEqual([]);
    const resumed = await run();
    expect(resumed.code, describeExit(resumed)).toBe(0);
    await expectExactOutput(job.out, expected);
  });

  it('a checkpoint that cannot be read stops the run with exit 2 naming it, and writes nothing', async () => {
    const { job, run } = await setUp('disk-unreadable', { checkpoint: 'state/_checkpoint.json' });
    // A folder where the checkpoint file should be: reading it fails with EISDIR (as root, no
    // permission bit can make a file unreadable).
    mkdirSync(join(job.dir, 'state', '_checkpoint.json'), { recursive: true });
    const failed = await run();
    expect(failed.code, describeExit(failed)).toBe(2);
    expect(failed.stderr).toContain('Cannot read');
    expect(failed.stderr).toContain('_checkpoint.json');
    expect(() => readFileSync(join(job.out, '_manifest.json'))).toThrow();
  });
});

/**
 * A Parquet-only export of one partition writes in a fixed order: write 1 is the initial
 * checkpoint, write 2 the manifest, then the spill appends of shard 0 (one write per spill batch:
 * every 10k rows or fewer during appends, the rest on commit), then its Parquet bytes, manifest,
 * checkpoint, and so on. A run resumed after shard 0 was checkpointed starts the same way, so its
 * write 3 is the first spill append of shard 1.
 */
describe('disk faults: ENOSPC on a spill append of a Parquet-only export', () => {
  async function setUpParquet(prefix: string, maxRows: number) {
    const sim = await newSimulator({ events: 30_000, assets: 10, seed: 11, apiKeys: [KEY] });
    const job = newJob(sim, [{ resource: 'events', partitions: 1, limit: 1000 }], { formats: ['parquet'], maxRows }, prefix);
    const run = (env: Record<string, string> = {}) =>
      runCliWith(['run', '--config', job.file, '--log-level', 'warn'], { cwd: job.dir, env: { SIM_KEY: KEY, ...env } });
    const expected = [
      { name: 'events', resource: 'events' as const, partitions: 1, formats: ['parquet' as const], ids: expectedIds(sim, 'events') },
    ];
    return { job, run, expected };
  }

  /** The run failed on the spill file of `shard`, and left only what the checkpoint covers. */
  async function expectSpillFailure(failed: Exit, out: string, shard: string, committed: number) {
    expect(failed.code, describeExit(failed)).toBe(1);
    expect(failed.stderr).toContain('"code":"E_OUTPUT"');
    expect(failed.stderr).toContain(`Writing ${join(out, 'events', 'part=1-of-1', `${shard}.parquet.spill.inprogress`)} failed (ENOSPC: the disk is full)`);
    expect(failed.stderr).toContain('Shards committed before this and the checkpoint are intact');
    const state = await inspectCrashState(out);
    expect(state.inprogress, 'temp or spill files left after a failed write').toEqual([]);
    expect(state.pastCheckpoint).toEqual([]);
    expect(state.unlisted).toEqual([]);
    expect(state.manifest?.files.map((f) => f.path)).toEqual(
      Array.from({ length: committed }, (_, seq) => `events/part=1-of-1/${String(seq).padStart(6, '0')}.parquet`),
    );
    for (const file of state.manifest?.files ?? []) expect(sha256(join(out, file.path)), file.path).toBe(file.sha256);
    expect(state.checkpoint?.streams.events?.parts['1']).toMatchObject({ nextSeq: committed, done: false });
  }

  it.each([
    ['the first spill append of a 20,000-row shard', 3, 20_000],
    ['the second spill append of a 20,000-row shard (after one went through)', 4, 20_000],
    ['the spill append on commit of a 2500-row shard', 3, 2500],
  ])('%s: write %i', async (_, n, maxRows) => {
    const { job, run, expected } = await setUpParquet(`disk-spill-${maxRows}-${n}`, maxRows);
    const failed = await run({ BULK_EXTRACT_FAIL_WRITE: `ENOSPC:${n}` });
    await expectSpillFailure(failed, job.out, '000000', 0);
    const resumed = await run();
    expect(resumed.code, describeExit(resumed)).toBe(0);
    await expectExactOutput(job.out, expected);
  });

  it('the first spill append of shard 1 in a run resumed after shard 0 was checkpointed', async () => {
    const { job, run, expected } = await setUpParquet('disk-spill-resumed', 20_000);
    // The 1st checkpoint write is the initial save, the 2nd the commit of shard 0.
    const killed = await run({ BULK_EXTRACT_CRASH_AT: 'after-checkpoint-write:2' });
    expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
    const failed = await run({ BULK_EXTRACT_FAIL_WRITE: 'ENOSPC:3' });
    await expectSpillFailure(failed, job.out, '000001', 1);
    expect(readCheckpoint(job.out).streams.events?.parts['1']?.rows).toBe(20_000);
    const resumed = await run();
    expect(resumed.code, describeExit(resumed)).toBe(0);
    await expectExactOutput(job.out, expected);
  });
});
