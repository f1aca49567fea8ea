import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  describeExit,
  expectedIds,
  expectExactOutput,
  inspectCrashState,
  newJob,
  newSimulator,
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
