import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it, vi } from 'vitest';
import { collectionEncodings, type EncodeJob } from '../../src/sink/parquet/encode.js';
import { EncoderPool } from '../../src/sink/parquet/encoder-pool.js';

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
    const pool = new EncoderPool(2);
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
      const pool = new EncoderPool(2);
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
    const pool = new EncoderPool(1);
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

  it.each([0, -1, 1.5, Number.NaN])('refuses size %s', (size) => {
    expect(() => new EncoderPool(size)).toThrow(RangeError);
  });
});
