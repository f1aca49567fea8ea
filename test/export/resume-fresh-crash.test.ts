import { describe, expect, it } from 'vitest';
import {
  describeExit,
  expectedIds,
  expectExactOutput,
  newJob,
  newSimulator,
  runCliWith,
} from '../support/resume-harness.js';

const KEY = 'fresh-crash-key-0001';

/**
 * Found by the crash torture: a --fresh start that died between writing the manifest and the
 * checkpoint left a manifest without the shards the old checkpoint still counted, and the next run
 * was refused. Forgetting shards now writes the checkpoint first.
 */
describe('a --fresh start killed during its first save resumes exactly', () => {
  it.each(['after-checkpoint-write:1', 'after-manifest-write:1'])('killed at %s', async (at) => {
    const sim = await newSimulator({ events: 6000, assets: 100, seed: 9, apiKeys: [KEY] });
    const job = newJob(sim, [{ resource: 'events', partitions: 3, limit: 1000 }], {}, 'fresh-crash');
    const run = (args: string[], env: Record<string, string> = {}) =>
      runCliWith(['run', '--config', job.file, '--log-level', 'warn', ...args], {
        cwd: job.dir,
        env: { SIM_KEY: KEY, ...env },
      });

    const first = await run([]);
    expect(first.code, describeExit(first)).toBe(0);
    const killed = await run(['--fresh'], { BULK_EXTRACT_CRASH_AT: at });
    expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
    const resumed = await run([]);
    expect(resumed.code, describeExit(resumed)).toBe(0);
    await expectExactOutput(job.out, [
      { name: 'events', resource: 'events', partitions: 3, formats: ['parquet', 'ndjson'], ids: expectedIds(sim, 'events') },
    ]);
  });
});
