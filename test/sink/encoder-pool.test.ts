import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it, vi } from 'vitest';
import { collectionEncodings } from '../../src/sink/collections/collection-encodings.js';
import type { EncodeJob } from '../../src/sink/parquet/encode.js';
import { defaultEncoderThreads, EncoderPool } from '../../src/sink/parquet/encoder-pool.js';
import type { CpuLimit } from '../../src/util/cpu-limit.js';
import { captureLogger } from '../support/log-capture.js';

/** More EncoderPool cases, with real threads, are in parquet-spill.test.ts. */

/** A job whose spill file does not exist: it fails in the thread, without writing anything. */
function missingJob(name: string): EncodeJob {
  return {
    spillPath: join(tmpdir(), 'bulk-extract-no-such-folder', name),
    columns: collectionEncodings('events'),
    options: { compression: 'zstd', rowGroupRows: 1000 },
    rows: 1,
  };
}

async function settled(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => 'resolved',
    (error: unknown) => error,
  );
}

describe('EncoderPool: threads and close()', () => {
  it('starts no thread before the first job, at most `size` threads, and close() ends them all', async () => {
    const pool = new EncoderPool({ threads: 2 });
    expect(pool.threads).toBe(0);
    const jobs = ['a', 'b', 'c'].map((name) => settled(pool.encode(missingJob(name), () => Promise.resolve())));
    expect(pool.threads).toBe(2);
    for (const outcome of await Promise.all(jobs)) expect(String(outcome)).toMatch(/ENOENT/);
    expect(pool.threads, 'idle threads stay for the next job').toBe(2);
    await pool.close();
    expect(pool.threads).toBe(0);
  });

  it('close() lets idle threads end themselves, without terminate() (nodejs/node#47748)', async () => {
    const terminate = vi.spyOn(Worker.prototype, 'terminate');
    try {
      const pool = new EncoderPool({ threads: 2 });
      const jobs = ['a', 'b'].map((name) => settled(pool.encode(missingJob(name), () => Promise.resolve())));
      await Promise.all(jobs);
      expect(pool.threads).toBe(2);
      await pool.close();
      expect(pool.threads).toBe(0);
      expect(terminate).not.toHaveBeenCalled();
    } finally {
      terminate.mockRestore();
    }
  });

  it('close() rejects the queued jobs, ends the running one, and refuses later jobs', async () => {
    const pool = new EncoderPool({ threads: 1 });
    const running = settled(pool.encode(missingJob('running'), () => Promise.resolve()));
    const queued = settled(pool.encode(missingJob('queued'), () => Promise.resolve()));
    await pool.close();
    expect(pool.threads).toBe(0);
    expect(String(await queued)).toMatch(/queued.*the encoder pool was closed/);
    // Whether its thread reported ENOENT or was stopped first, the running job fails.
    expect(await running).toBeInstanceOf(Error);
    await expect(pool.encode(missingJob('late'), () => Promise.resolve())).rejects.toThrow(/late.*is closed/);
    expect(pool.threads).toBe(0);
    await pool.close();
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses threads: %s', (size) => {
    expect(() => new EncoderPool({ threads: size })).toThrow(RangeError);
  });
});

describe('EncoderPool: as many threads as the CPUs the process may use allow', () => {
  it.each([
    [1, 1],
    [2, 1],
    [3, 2],
    [5, 4],
    [64, 4],
  ])('defaultEncoderThreads of %s CPUs: %s (one fewer, at least 1, at most 4)', (cpus, threads) => {
    expect(defaultEncoderThreads({ cpus, available: 64, ignored: [] })).toBe(threads);
  });

  it('sizes itself by the cgroup limit, not the CPUs there are: 1 thread in a 2-CPU pod on a 16-CPU node', async () => {
    const limit: CpuLimit = { cpus: 2, available: 16, quota: { cpus: 2, file: '/sys/fs/cgroup/cpu.max' }, ignored: [] };
    const reads = vi.fn(() => limit);
    const captured = captureLogger();
    const pool = new EncoderPool({ logger: captured.logger, cpuLimit: reads });
    try {
      const jobs = ['a', 'b', 'c'].map((name) => settled(pool.encode(missingJob(name), () => Promise.resolve())));
      expect(pool.threads).toBe(1);
      await Promise.all(jobs);
      await settled(pool.encode(missingJob('d'), () => Promise.resolve()));
      expect(pool.threads).toBe(1);
    } finally {
      await pool.close();
    }
    expect(reads, 'read once, when the first thread was needed').toHaveBeenCalledTimes(1);
    const logged = captured.records().filter((record) => String(record.msg).startsWith('Parquet encoder threads'));
    expect(logged).toEqual([
      expect.objectContaining({
        level: 20,
        encoderThreads: 1,
        cpus: 2,
        availableCpus: 16,
        cpuQuota: 2,
        msg: 'Parquet encoder threads: at most 1, for 2 CPUs: the cgroup CPU limit of 2 in /sys/fs/cgroup/cpu.max; os.availableParallelism() sees 16',
      }),
    ]);
  });

  it('reads no cgroup file before a job, nor when its number of threads is given', async () => {
    const reads = vi.fn((): CpuLimit => ({ cpus: 8, available: 8, ignored: [] }));
    const idle = new EncoderPool({ cpuLimit: reads });
    await idle.close();
    const given = new EncoderPool({ threads: 2, cpuLimit: reads });
    await settled(given.encode(missingJob('a'), () => Promise.resolve()));
    await given.close();
    expect(reads).not.toHaveBeenCalled();
  });
});
