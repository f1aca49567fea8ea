import { readdirSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Table, tableFromIPC, tableToIPC } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import type { OutputConfig, Resource } from '../../src/config/job-schema.js';
import { collectionEncodings } from '../../src/sink/collections/collection-encodings.js';
import type { EncodeJob } from '../../src/sink/parquet/encode.js';
import { EncoderPool } from '../../src/sink/parquet/encoder-pool.js';
import {
  ParquetShardWriter,
  ROW_GROUP_BYTES,
  rowGroupRowsFor,
  SPILL_BYTES,
  SPILL_ROWS,
} from '../../src/sink/parquet/parquet-writer.js';
import { PageItems, scanPage } from '../../src/page/index.js';
import { RowGroupBuilder } from '../../src/sink/collections/row-group.js';
import { readSpill, SpillFile } from '../../src/sink/parquet/spill.js';
import { asNumber, parquetItems } from '../support/export-duckdb.js';
import { sha256File, sql, tempDir } from '../support/export-harness.js';
import { newParquetDeps, parquetSuite } from '../support/parquet-deps.js';

/**
 * The Parquet path through a spill file: rows go to `<shard>.spill.inprogress` as Arrow IPC
 * batches, and on commit an encoder thread (real worker threads, the build's encoder-thread.js)
 * turns the spill file into the Parquet file. Every file is read back with DuckDB.
 */

type Item = Record<string, unknown>;

const SPILL_SUFFIX = '.spill.inprogress';
const ZSTD_1K: OutputConfig['parquet'] = { compression: 'zstd', rowGroupRows: 1000 };

/** The encoder threads and learned sizes the file's writers share, as those of one sink; DuckDB. */
const suite = parquetSuite();
const { parquet } = suite;

/** An event of writer `w`, row `i`: ids and texts differ per writer, so files cannot be swapped. */
function event(i: number, w = 0): Item {
  const item: Item = {
    id: 1_000_000_000 * (w + 1) + i,
    externalId: `W${w}-EV-${i}`,
    type: ['alarm', 'trip', 'maintenance'][(i + w) % 3],
    startTime: Date.UTC(2024, 0, 1) + i * 1000 + w,
    assetIds: [i, i + w + 1],
    source: `src-${w}`,
    metadata: { site: `site ${i % 7}`, writer: String(w) },
    createdTime: Date.UTC(2024, 0, 1),
    lastUpdatedTime: Date.UTC(2024, 0, 2) + i,
  };
  if (i % 5 === 0) item.description = `row ${i} of writer ${w}: "quoted"\n`;
  return item;
}

function events(count: number, w = 0): Item[] {
  return Array.from({ length: count }, (_, i) => event(i, w));
}

function asset(i: number): Item {
  return { id: 7_000_000 + i, name: `Pump ${i}`, rootId: 7_000_000, createdTime: 1, lastUpdatedTime: 2 + i };
}

function pagesOf(items: readonly Item[], size: number): Item[][] {
  const pages: Item[][] = [];
  for (let i = 0; i < items.length; i += size) pages.push(items.slice(i, i + size));
  return pages;
}

async function rowGroups(path: string): Promise<number[]> {
  const groups = await suite.duck.rows(
    `SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata(${sql(path)}) ORDER BY row_group_id`,
  );
  return groups.map((g) => asNumber(g.row_group_num_rows));
}

/** Rows per record of a spill file, read with readSpill and decoded with apache-arrow. */
async function spillRecordRows(path: string): Promise<number[]> {
  const rows: number[] = [];
  for await (const record of readSpill(path)) rows.push(tableFromIPC(record).numRows);
  return rows;
}

/** Writes a spill file the way ParquetShardWriter does: one Arrow IPC stream record per batch. */
async function writeSpill(path: string, batches: readonly (readonly Item[])[], resource: Resource = 'events') {
  const spill = await SpillFile.create(path);
  const builder = new RowGroupBuilder(resource, 1024);
  let rows = 0;
  for (const items of batches) {
    builder.add(items);
    await spill.append(tableToIPC(new Table(builder.batch()), 'stream'));
    rows += builder.rows;
    builder.reset();
  }
  await spill.close();
  return { path, rows };
}

/** Encodes a spill file in `pool` into `out`; the chunk writer is the test's own. */
async function encodeTo(pool: EncoderPool, job: EncodeJob, out: string): Promise<void> {
  const chunks: Uint8Array[] = [];
  await pool.encode(job, async (chunk) => {
    chunks.push(chunk);
    return Promise.resolve();
  });
  writeFileSync(out, Buffer.concat(chunks));
}

function jobOf(spill: { path: string; rows: number }, rows = spill.rows): EncodeJob {
  return { spillPath: spill.path, columns: collectionEncodings('events'), options: ZSTD_1K, rows };
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(outcome, 'expected a rejection').toBeInstanceOf(Error);
  return outcome as Error;
}

describe('ParquetShardWriter through the spill file', () => {
  it('25,000 rows in pages of 1000, rowGroupRows 10,000: spilled in several batches, 3 row groups, rows in order, spill file gone', async () => {
    const dir = tempDir('bulk-extract-spill-');
    const path = join(dir, '000000.parquet');
    const items = events(25_000);
    const writer = await ParquetShardWriter.create(path, 'events', { compression: 'zstd', rowGroupRows: 10_000 }, parquet);
    for (const page of pagesOf(items, 1000)) await writer.append(page);

    // Before commit: every full batch of SPILL_ROWS is already on disk (cut inside a page where it
    // falls); the rest waits in memory.
    const spilled = await spillRecordRows(`${path}${SPILL_SUFFIX}`);
    expect(spilled).toEqual(Array.from({ length: Math.floor(25_000 / SPILL_ROWS) }, () => SPILL_ROWS));
    expect(readdirSync(dir)).toEqual([`000000.parquet${SPILL_SUFFIX}`]);

    const committed = await writer.commit();
    expect(committed).toMatchObject({ path, format: 'parquet', rows: 25_000 });
    expect(readdirSync(dir), 'only the shard is left: no spill file, no .inprogress').toEqual(['000000.parquet']);
    expect(committed.bytes).toBe(statSync(path).size);
    expect(committed.sha256).toBe(sha256File(path));

    expect(await rowGroups(path)).toEqual([10_000, 10_000, 5000]);
    const read = await parquetItems(suite.duck, 'events', path);
    expect(read.map((item) => item.id)).toEqual(items.map((item) => item.id));
    expect(read.map((item) => [item.externalId, item.startTime, item.description])).toEqual(
      items.map((item) => [item.externalId, item.startTime, item.description]),
    );
    expect(read).toEqual(items);
  });

  it('6 writers committing at once (different data) all produce their own, correct file', async () => {
    const writers = await Promise.all(
      Array.from({ length: 6 }, async (_, w) => {
        const dir = tempDir('bulk-extract-spill-');
        const path = join(dir, '000000.parquet');
        const items = events(2500 + 1700 * w, w);
        const writer = await ParquetShardWriter.create(path, 'events', ZSTD_1K, parquet);
        for (const page of pagesOf(items, 700)) await writer.append(page);
        return { w, dir, path, items, writer };
      }),
    );
    const committed = await Promise.all(writers.map(({ writer }) => writer.commit()));
    for (const [index, { w, dir, path, items }] of writers.entries()) {
      const done = committed[index]!;
      expect(done, `writer ${w}`).toMatchObject({ path, rows: items.length });
      expect(readdirSync(dir), `writer ${w}`).toEqual(['000000.parquet']);
      expect(done.bytes, `writer ${w}`).toBe(statSync(path).size);
      expect(done.sha256, `writer ${w}`).toBe(sha256File(path));
      const groups = await rowGroups(path);
      expect(groups.length, `writer ${w}`).toBe(Math.ceil(items.length / 1000));
      expect(groups.reduce((a, b) => a + b, 0)).toBe(items.length);
      expect(await parquetItems(suite.duck, 'events', path), `writer ${w}`).toEqual(items);
    }
  });

  it('a spill file whose last record is cut short before commit: commit rejects, nothing is left', async () => {
    const dir = tempDir('bulk-extract-spill-');
    const path = join(dir, '000000.parquet');
    const spillPath = `${path}${SPILL_SUFFIX}`;
    const writer = await ParquetShardWriter.create(path, 'events', ZSTD_1K, parquet);
    // Two spill batches' worth of rows, so commit appends nothing more and the cut record stays the last one.
    const rows = 2 * SPILL_ROWS;
    for (const page of pagesOf(events(rows), 1000)) await writer.append(page);
    const records = await spillRecordRows(spillPath);
    expect(records.reduce((a, b) => a + b, 0), 'every row already spilled').toBe(rows);
    truncateSync(spillPath, statSync(spillPath).size - 10);

    // The message's cause is checked on the pool below (it depends on where the cut falls).
    const error = await rejection(writer.commit());
    expect(error.message).toContain(spillPath);
    expect(readdirSync(dir), 'no .parquet, no .inprogress, no spill file').toEqual([]);
    await writer.abort();
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('ParquetShardWriter: batches and row groups bounded by bytes', () => {
  it('a batch goes to the spill file once its items reach SPILL_BYTES as received, long before SPILL_ROWS', async () => {
    const dir = tempDir('bulk-extract-spill-');
    const path = join(dir, '000000.parquet');
    const writer = await ParquetShardWriter.create(path, 'events', ZSTD_1K, parquet);
    // Items of about 200 KB of metadata each, as a page's bytes: 21 of them pass 4 MiB.
    const big = (id: number) => ({ ...events(1)[0], id, metadata: { blob: 'x'.repeat(200_000) } });
    const body = Buffer.from(JSON.stringify({ items: Array.from({ length: 50 }, (_, i) => big(i + 1)) }));
    await writer.append(PageItems.scanned(body, scanPage(body)!));
    const perBatch = Math.ceil(SPILL_BYTES / JSON.stringify(big(1)).length);
    expect(await spillRecordRows(`${path}${SPILL_SUFFIX}`)).toEqual([perBatch, perBatch]);
    expect(await writer.commit()).toMatchObject({ rows: 50 });
  });

  it('row groups hold rowGroupRows rows, or fewer when those would pass ROW_GROUP_BYTES', () => {
    expect(rowGroupRowsFor(100_000, 400 * 100_000, 100_000)).toBe(100_000);
    expect(rowGroupRowsFor(100_000, 100_000 * 5000, 5000)).toBe(Math.floor(ROW_GROUP_BYTES / 100_000));
    expect(rowGroupRowsFor(100_000, 200 * 1024 * 1024, 1)).toBe(1);
    expect(rowGroupRowsFor(10, 0, 0)).toBe(10);
  });
});

describe('ParquetShardWriter: abort and empty shards', () => {
  it('abort() after appends (batches spilled and rows in memory) removes the spill file; a second abort() is safe', async () => {
    const dir = tempDir('bulk-extract-spill-');
    const path = join(dir, '000000.parquet');
    const writer = await ParquetShardWriter.create(path, 'events', ZSTD_1K, parquet);
    for (const page of pagesOf(events(12_345), 1000)) await writer.append(page);
    expect((await spillRecordRows(`${path}${SPILL_SUFFIX}`)).length).toBeGreaterThan(0);
    await writer.abort();
    expect(readdirSync(dir)).toEqual([]);
    await writer.abort();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('commit() without rows throws and writes no .parquet; abort() then removes the spill file', async () => {
    const dir = tempDir('bulk-extract-spill-');
    const writer = await ParquetShardWriter.create(join(dir, '000000.parquet'), 'events', ZSTD_1K, parquet);
    await expect(writer.commit()).rejects.toThrow(/at least one row/);
    expect(readdirSync(dir).filter((f) => !f.endsWith(SPILL_SUFFIX))).toEqual([]);
    await writer.abort();
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('ParquetShardWriter: bytes estimate', () => {
  // The learned bytes per row are per resource and per sink: writers of a sink of its own see the
  // first guess, 100 bytes per row, until their first shard is committed.
  it('is rows * 100 before any commit of the resource, then rows * the bytes/row of the last committed shard', async () => {
    const own = newParquetDeps();
    const first = await ParquetShardWriter.create(join(tempDir('bulk-extract-spill-'), 'a.parquet'), 'assets', ZSTD_1K, own);
    await first.append(Array.from({ length: 1234 }, (_, i) => asset(i)));
    expect(first.bytes).toBe(123_400);
    await first.append(Array.from({ length: 766 }, (_, i) => asset(1234 + i)));
    expect(first.bytes).toBe(200_000);
    const done = await first.commit();
    expect(done.rows).toBe(2000);

    const second = await ParquetShardWriter.create(join(tempDir('bulk-extract-spill-'), 'b.parquet'), 'assets', ZSTD_1K, own);
    for (const n of [1, 333, 1000]) {
      await second.append(Array.from({ length: n }, (_, i) => asset(i)));
      expect(second.bytes, `after ${second.rows} rows`).toBe(Math.round((second.rows * done.bytes) / done.rows));
    }
    expect(second.bytes).not.toBe(second.rows * 100);
    await second.abort();
    await own.encoders.close();
  });
});

describe('EncoderPool', () => {
  it('a pool of one thread queues 6 jobs given at once and runs them one after the other, each file correct', async () => {
    const pool = new EncoderPool({ threads: 1 });
    const dir = tempDir('bulk-extract-spill-');
    const inputs = await Promise.all(
      Array.from({ length: 6 }, async (_, w) => {
        const items = events(1500 + 500 * w, w);
        const spill = await writeSpill(join(dir, `${w}.spill`), pagesOf(items, 1000));
        return { w, items, spill };
      }),
    );
    const log: number[] = [];
    const files = inputs.map(() => [] as Uint8Array[]);
    await Promise.all(
      inputs.map(({ w, spill }) =>
        pool.encode(jobOf(spill), async (chunk) => {
          log.push(w);
          files[w]!.push(chunk);
          return Promise.resolve();
        }),
      ),
    );
    // One thread: the chunks of one job all come before the next job's, in the order given.
    expect(log).toEqual([...log].sort((a, b) => a - b));
    expect(new Set(log)).toEqual(new Set([0, 1, 2, 3, 4, 5]));
    for (const { w, items } of inputs) {
      const out = join(dir, `${w}.parquet`);
      writeFileSync(out, Buffer.concat(files[w]!));
      expect(await parquetItems(suite.duck, 'events', out), `job ${w}`).toEqual(items);
    }
  });

  /** A spill file of `records` batches of 1000 rows, then cut to `cut(size, header of the last record)` bytes. */
  const damaged: [string, number, (size: number, lastAt: number) => number, RegExp][] = [
    ['the last of 3 records cut short', 3, (size) => size - 10, /truncated record at byte [1-9]\d*/],
    ['the header of the last of 3 records cut to 2 bytes', 3, (_, lastAt) => lastAt + 2, /truncated record header at byte [1-9]\d*/],
    // An input error before the first batch reaches the wasm writer: the cause must survive too.
    ['the first and only record cut short', 1, (size) => size - 10, /truncated record at byte 0/],
    ['the header of the first record cut to 2 bytes', 1, () => 2, /truncated record header at byte 0/],
    ['an empty spill file (no record at all)', 1, () => 0, /held 0 rows, expected 1000/],
  ];

  it.each(damaged)('%s: rejects naming the spill file and the cause; no late chunk; the pool then encodes the next job',
    async (_, records, cut, cause) => {
      const pool = new EncoderPool({ threads: 1 });
      const dir = tempDir('bulk-extract-spill-');
      const pages = pagesOf(events(1000 * records), 1000);
      const lastAt = statSync((await writeSpill(join(dir, 'head.spill'), pages.slice(0, -1))).path).size;
      const spill = await writeSpill(join(dir, 'bad.spill'), pages);
      truncateSync(spill.path, cut(statSync(spill.path).size, lastAt));

      let chunks = 0;
      const error = await rejection(
        pool.encode(jobOf(spill), async () => {
          chunks++;
          return Promise.resolve();
        }),
      );
      expect(error.message).toContain(spill.path);
      expect(error.message).toMatch(cause);
      const chunksAtRejection = chunks;

      // The same thread encodes the next job; once it is done, no late chunk of the failed job came.
      const good = await writeSpill(join(dir, 'good.spill'), pagesOf(events(2000, 1), 1000));
      await encodeTo(pool, jobOf(good), join(dir, 'good.parquet'));
      expect(await parquetItems(suite.duck, 'events', join(dir, 'good.parquet'))).toEqual(events(2000, 1));
      expect(chunks, 'a chunk of the failed job after its rejection').toBe(chunksAtRejection);
    },
  );

  it.each([
    ['one more', 1],
    ['one fewer', -1],
  ])('rows expected %s than the spill file holds: rejects naming both counts and the spill file', async (_, delta) => {
    const pool = new EncoderPool({ threads: 1 });
    const dir = tempDir('bulk-extract-spill-');
    const spill = await writeSpill(join(dir, 'a.spill'), pagesOf(events(3000), 1000));
    const error = await rejection(pool.encode(jobOf(spill, 3000 + delta), async () => Promise.resolve()));
    expect(error.message).toContain(spill.path);
    expect(error.message).toContain(`held 3000 rows, expected ${3000 + delta}`);
  });

  it('a chunk write that fails rejects with that error, no later chunk is written, and the pool goes on', async () => {
    const pool = new EncoderPool({ threads: 1 });
    const dir = tempDir('bulk-extract-spill-');
    // 3 row groups: the writer sends several chunks, so some come after the failed one.
    const spill = await writeSpill(join(dir, 'a.spill'), pagesOf(events(3000), 1000));
    const diskGone = new Error('ENOSPC: the disk is full (test)');
    let calls = 0;
    const error = await rejection(
      pool.encode(jobOf(spill), async () => {
        calls++;
        return Promise.reject(diskGone);
      }),
    );
    expect(error).toBe(diskGone);
    expect(calls, 'no chunk is written after the failed one').toBe(1);

    const good = await writeSpill(join(dir, 'b.spill'), pagesOf(events(2500, 2), 1000));
    await encodeTo(pool, jobOf(good), join(dir, 'b.parquet'));
    expect(await parquetItems(suite.duck, 'events', join(dir, 'b.parquet'))).toEqual(events(2500, 2));
  });

  it('a spill file that does not exist rejects naming it and ENOENT, and the pool goes on', async () => {
    const pool = new EncoderPool({ threads: 1 });
    const dir = tempDir('bulk-extract-spill-');
    const missing = join(dir, 'missing.spill');
    const error = await rejection(pool.encode(jobOf({ path: missing, rows: 1 }), async () => Promise.resolve()));
    expect(error.message).toContain(missing);
    expect(error.message).toMatch(/ENOENT/);
    const good = await writeSpill(join(dir, 'c.spill'), [events(10)]);
    await encodeTo(pool, jobOf(good), join(dir, 'c.parquet'));
    expect(await parquetItems(suite.duck, 'events', join(dir, 'c.parquet'))).toEqual(events(10));
  });

  // Not covered: a worker thread that dies mid-job (EncoderPool.onExit). Nothing outside the pool
  // can make its thread exit: the worker catches every error of a job and reports it, and the pool
  // does not expose its threads. Testing it needs a hook in src (see the report).
});
