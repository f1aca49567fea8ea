import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Manifest } from '../../src/export/state/manifest.js';
import { runJob } from '../../src/export/run/run-job.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { asNumber, type Duck, openDuck } from '../support/export-duckdb.js';
import { type JobSpec, loadJob, removeTempDirs, SIM_KEY, sql, tempDir } from '../support/export-harness.js';
import { createFakeClock } from '../support/fake-clock.js';
import { closedForm, expectExactOutput, readManifest } from '../support/resume-harness.js';

/**
 * bulk-extract is a library too: two exports in one process must not share sink state (encoder
 * threads, learned bytes per row) nor leave threads behind. Real runs against the simulator, the
 * files read back with DuckDB.
 */

let sim: Simulator;
let duck: Duck;

beforeAll(async () => {
  sim = await startSimulator({ assets: 3000, events: 6000, seed: 14, apiKeys: [SIM_KEY] });
  duck = await openDuck();
});

afterAll(async () => {
  duck.close();
  await sim.close();
});

afterEach(removeTempDirs);

/** Runs a job of its own to completion, in this process; the clock is fake, so back-off never sleeps. */
async function exportJob(spec: Omit<JobSpec, 'baseUrl' | 'out'>): Promise<{ out: string; manifest: Manifest }> {
  const dir = tempDir('bulk-extract-two-');
  const out = join(dir, 'out');
  const config = loadJob(dir, { ...spec, baseUrl: sim.baseUrl, out, retry: { baseDelayMs: 1, maxDelayMs: 5 } });
  const result = await runJob({ config, logger: silentLogger, clock: createFakeClock() });
  expect(result.errors).toEqual([]);
  expect(result.state).toBe('complete');
  return { out, manifest: readManifest(out) };
}

/** Encoder threads (every worker thread) started while `run` runs, and those still alive after it. */
async function countingThreads<T>(run: () => Promise<T>): Promise<{ result: T; started: number; alive: number }> {
  const alive = new Set<Worker>();
  let started = 0;
  const onWorker = (message: unknown) => {
    const { worker } = message as { worker: Worker };
    started++;
    alive.add(worker);
    worker.once('exit', () => alive.delete(worker));
  };
  subscribe('worker_threads', onWorker);
  try {
    const result = await run();
    return { result, started, alive: alive.size };
  } finally {
    unsubscribe('worker_threads', onWorker);
  }
}

interface FileLayout {
  codecs: string[];
  groups: number[];
}

/** Per Parquet file of the manifest: its codecs and row group sizes, as the file's footer says. */
async function parquetLayout(out: string, manifest: Manifest): Promise<Map<string, FileLayout>> {
  const files = manifest.files.filter((file) => file.format === 'parquet');
  const layout = new Map<string, FileLayout>();
  for (const file of files) {
    const path = sql(join(out, file.path));
    const groups = await duck.rows(
      `SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata(${path}) ORDER BY row_group_id`,
    );
    const codecs = await duck.rows(`SELECT DISTINCT compression FROM parquet_metadata(${path}) ORDER BY 1`);
    layout.set(file.path, {
      codecs: codecs.map((row) => String(row.compression)),
      groups: groups.map((row) => asNumber(row.row_group_num_rows)),
    });
  }
  return layout;
}

/** The row groups a file of `rows` rows has with `rowGroupRows`: full ones, then the rest. */
function groupsOf(rows: number, rowGroupRows: number): number[] {
  const groups: number[] = [];
  for (let left = rows; left > 0; left -= rowGroupRows) groups.push(Math.min(left, rowGroupRows));
  return groups;
}

const EVENTS_JOB = {
  streams: [{ resource: 'events', partitions: 2, limit: 500 }],
  output: {
    formats: ['parquet', 'ndjson'],
    parquet: { compression: 'zstd', rowGroupRows: 1000 },
    ndjson: { compression: 'gzip' },
    shard: { maxRows: 2500 },
  },
};
const ASSETS_JOB = {
  streams: [{ resource: 'assets', partitions: 1, limit: 250 }],
  output: {
    formats: ['parquet', 'ndjson'],
    parquet: { compression: 'snappy', rowGroupRows: 1500 },
    shard: { maxRows: 2000 },
  },
};

describe('two exports in one process', () => {
  it('run at once with different settings: each output is exactly its own, each file has its run\'s settings, no thread is left', async () => {
    const { result, started, alive } = await countingThreads(() =>
      Promise.all([exportJob(EVENTS_JOB), exportJob(ASSETS_JOB)]),
    );
    const [events, assets] = result;
    const expected: [typeof events, 'assets' | 'events', number, string, number, RegExp][] = [
      [events, 'events', 2, 'ZSTD', 1000, /^events\/part=[12]-of-2\/\d{6}\.(parquet|ndjson\.gz)$/],
      [assets, 'assets', 1, 'SNAPPY', 1500, /^assets\/part=1-of-1\/\d{6}\.(parquet|ndjson)$/],
    ];
    for (const [{ out, manifest }, resource, partitions, codec, rowGroupRows, shardName] of expected) {
      const ids = closedForm(resource, sim.dataset[resource].count);
      await expectExactOutput(out, [{ name: resource, resource, partitions, formats: ['parquet', 'ndjson'], ids }]);
      expect(Object.keys(manifest.streams)).toEqual([resource]);
      for (const file of manifest.files) expect(file.path, `${resource}: ${file.path}`).toMatch(shardName);

      const layout = await parquetLayout(out, manifest);
      expect(layout.size, `${resource}: Parquet files`).toBeGreaterThan(1);
      for (const file of manifest.files.filter((f) => f.format === 'parquet')) {
        expect(layout.get(file.path), `${resource}: ${file.path}`).toEqual({
          codecs: [codec],
          groups: groupsOf(file.rows, rowGroupRows),
        });
      }
    }
    expect(started, 'each run starts encoder threads of its own').toBeGreaterThanOrEqual(2);
    expect(alive, 'encoder threads still running after both runs').toBe(0);
  });

  it('one after the other: the second sizes its first Parquet shard by the first guess, not by what the first learned', async () => {
    // 100 bytes per row before a sink has committed a shard: with shard.maxBytes 50,000 and pages of
    // 100 rows, the first shard closes after 500 rows. Learned from zstd events, it would hold more.
    await exportJob({ streams: [{ resource: 'events', partitions: 1 }], output: { formats: ['parquet'] } });
    const { manifest } = await exportJob({
      streams: [{ resource: 'events', partitions: 1, limit: 100 }],
      output: { formats: ['parquet'], parquet: { compression: 'snappy', rowGroupRows: 1000 }, shard: { maxBytes: 50_000 } },
    });
    const first = manifest.files.find((file) => file.seq === 0);
    expect(first?.rows).toBe(500);
    expect(manifest.files.length).toBeGreaterThan(1);
  });
});
