import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pointColumns, type PointsShape } from '../../src/resources/index.js';
import { PointsParquetWriter } from '../../src/sink/datapoints/points-parquet-writer.js';
import { type PointBatch, PointList, type PointValue, type SeriesPoints } from '../../src/sink/index.js';
import { type Duck, openDuck, parquetAt } from '../support/export-duckdb.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';
import { newParquetDeps } from '../support/parquet-deps.js';
import { seededRandom } from '../support/seeded-random.js';

/**
 * A datapoints Parquet shard larger than a run goes to disk as sorted runs and is merged on
 * commit (point-runs.ts, run-merge.ts): the file is the one a shard held whole in memory writes,
 * row for row, read back by DuckDB. Runs of a few rows here, so that a shard has many. (The runs
 * file's ownership: points-parquet-writer.test.ts.)
 */
const OPTIONS = { compression: 'zstd', rowGroupRows: 100 } as const;
const parquet = newParquetDeps();
let duck: Duck;

beforeAll(async () => {
  duck = await openDuck();
});

afterAll(async () => {
  duck.close();
  await parquet.encoders.close();
});

afterEach(removeTempDirs);

interface Series {
  id: number;
  isString: boolean;
  points: PointValue[];
}

/**
 * Answers as a drain appends them: the series' points cut into chunks at random and interleaved,
 * each series' chunks in time order; `windows` series read as two time windows at once (their
 * chunks of the two halves interleaved with each other).
 */
function answers(series: readonly Series[], random: () => number, windows = new Set<number>()): PointBatch[] {
  const queues = series.flatMap((one) => {
    const half = Math.ceil(one.points.length / 2);
    const parts = windows.has(one.id) ? [one.points.slice(0, half), one.points.slice(half)] : [one.points];
    return parts.map((points) => ({ one, points: [...points] }));
  });
  const batches: PointBatch[] = [];
  while (queues.some((queue) => queue.points.length > 0)) {
    const batch: SeriesPoints[] = [];
    for (const queue of queues) {
      if (queue.points.length === 0 || random() < 0.4) continue;
      const chunk = queue.points.splice(0, 1 + Math.floor(random() * 9));
      batch.push({ id: queue.one.id, externalId: `ts-${queue.one.id}`, isString: queue.one.isString, points: PointList.of(chunk) });
    }
    if (batch.length > 0) batches.push(batch);
  }
  return batches;
}

async function write(
  shape: PointsShape,
  batches: readonly PointBatch[],
  runRows: number,
): Promise<{ path: string; rows: unknown[] }> {
  const dir = tempDir('bulk-extract-point-runs-');
  const path = join(dir, '000001.parquet');
  const writer = PointsParquetWriter.create(path, shape, OPTIONS, parquet, { runRows });
  for (const batch of batches) await writer.append(batch);
  const committed = await writer.commit();
  expect(readdirSync(dir), 'no runs or spill file is left').toEqual(['000001.parquet']);
  expect(committed.rows).toBe(batches.reduce((sum, batch) => sum + batch.reduce((n, s) => n + s.points.length, 0), 0));
  const names = pointColumns(shape).map((column) => `"${column.name}"`);
  const rows = await duck.rows(`SELECT ${names.join(', ')} FROM ${parquetAt(path)}`);
  return { path, rows: rows.map((row) => JSON.stringify(row, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v))) };
}

function rawSeries(random: () => number, count: number): Series[] {
  return Array.from({ length: count }, (_, s) => {
    const isString = s % 4 === 3;
    let time = 1_700_000_000_000 + Math.floor(random() * 1000);
    const points = Array.from({ length: 5 + Math.floor(random() * 120) }, (_, k): PointValue => {
      time += 1 + Math.floor(random() * 5000);
      if (isString) return k % 7 === 0 ? { timestamp: time } : { timestamp: time, value: `on ✓ ${k} 温度` };
      const value = k % 11 === 0 ? ['NaN', 'Infinity', '-Infinity'][k % 3]! : random() * 100 - 50;
      return k % 5 === 0 ? { timestamp: time, value, status: { code: 2147483648, symbol: 'Uncertain' } } : { timestamp: time, value };
    });
    // Ids not in the order the series come: the file is sorted by id.
    return { id: 7_000_000_000_000_000 + ((s * 7919) % 1000), isString, points };
  });
}

describe('a datapoints Parquet shard through sorted runs on disk', () => {
  it('is the file a shard held in memory writes: raw numeric and string series, statuses, windows (seeded)', async () => {
    const shape: PointsShape = { includeStatus: true };
    for (const seed of [1, 2, 3]) {
      const random = seededRandom(seed);
      const series = rawSeries(random, 40);
      const batches = answers(series, random, new Set([series[0]!.id, series[5]!.id]));
      const whole = await write(shape, batches, Number.MAX_SAFE_INTEGER);
      for (const runRows of [7, 100, 1000]) {
        const merged = await write(shape, batches, runRows);
        expect(merged.rows, `seed ${seed}, runs of ${runRows}`).toEqual(whole.rows);
      }
    }
  });

  it('reads runs of many blocks back whole (a series of 30,000 points, runs of 12,000 rows)', async () => {
    const shape: PointsShape = { includeStatus: true };
    const random = seededRandom(4);
    const series: Series[] = [...rawSeries(random, 6), {
      id: 42,
      isString: false,
      points: Array.from({ length: 30_000 }, (_, k) => ({ timestamp: 1_600_000_000_000 + 7 * k, value: k % 13 === 0 ? 'NaN' : k })),
    }];
    const batches = answers(series, random, new Set([42]));
    const whole = await write(shape, batches, Number.MAX_SAFE_INTEGER);
    expect((await write(shape, batches, 12_000)).rows).toEqual(whole.rows);
  });

  it('keeps aggregates (integer and double columns) and the fields outside the columns', async () => {
    const shape: PointsShape = { aggregates: ['count', 'average', 'max'], granularity: '1h', includeStatus: false };
    const series: Series[] = [3, 1, 2].map((id) => ({
      id,
      isString: false,
      points: Array.from({ length: 50 }, (_, k) => ({
        timestamp: k * 3_600_000,
        count: k,
        ...(k % 4 === 0 ? {} : { average: k / 3 }),
        max: k === 7 ? 'Infinity' : k,
        ...(k % 9 === 0 ? { note: `k${k}` } : {}),
      })),
    }));
    const batches = answers(series, seededRandom(9));
    const whole = await write(shape, batches, Number.MAX_SAFE_INTEGER);
    expect((await write(shape, batches, 13)).rows).toEqual(whole.rows);
  });

  it('writes a runs file only past a run, and at exactly a run or one more row the same file', async () => {
    const shape: PointsShape = { includeStatus: false };
    const points = (n: number) => Array.from({ length: n }, (_, k) => ({ timestamp: 1000 + k, value: k }));
    const one = (n: number): PointBatch[] => [[{ id: 5, externalId: 'a', isString: false, points: PointList.of(points(n)) }]];
    const dir = tempDir('bulk-extract-point-runs-');
    const path = join(dir, '000001.parquet');
    const writer = PointsParquetWriter.create(path, shape, OPTIONS, parquet, { runRows: 10 });
    await writer.append(one(9)[0]!);
    expect(readdirSync(dir)).toEqual([]);
    await writer.append([{ id: 6, externalId: 'b', isString: false, points: PointList.of(points(1)) }]);
    expect(readdirSync(dir)).toEqual(['000001.parquet.runs.inprogress']);
    await writer.abort();
    expect(readdirSync(dir), 'abort removes the runs file').toEqual([]);
    for (const n of [1, 10, 11]) {
      expect((await write(shape, one(n), 10)).rows).toEqual((await write(shape, one(n), 1000)).rows);
    }
  });

  it('refuses two points of a series at one time, writing no file', async () => {
    const dir = tempDir('bulk-extract-point-runs-');
    const path = join(dir, '000001.parquet');
    const writer = PointsParquetWriter.create(path, { includeStatus: false }, OPTIONS, parquet, { runRows: 2 });
    const at = (timestamp: number) => [{ id: 5, externalId: 'a', isString: false, points: PointList.of([{ timestamp, value: 1 }]) }];
    for (const timestamp of [1, 2, 3, 2]) await writer.append(at(timestamp));
    await expect(writer.commit()).rejects.toThrow(/series 5 has two points at 2 in one shard/i);
    expect(readdirSync(dir)).toEqual([]);
  });
});
