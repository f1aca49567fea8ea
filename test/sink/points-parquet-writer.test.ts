import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { OutputConfig } from '../../src/config/job-schema.js';
import { OutputError } from '../../src/errors.js';
import { pointColumns, type PointsShape } from '../../src/resources/index.js';
import { PointsParquetWriter } from '../../src/sink/datapoints/points-parquet-writer.js';
import { runRowsFor } from '../../src/sink/datapoints/point-table.js';
import { type PointBatch, PointList } from '../../src/sink/index.js';
import { parquetRows, unsortedRows } from '../support/datapoints-export.js';
import { sha256File, sql, tempDir } from '../support/export-harness.js';
import { parquetSuite } from '../support/parquet-deps.js';
import {
  AGGREGATES,
  comparable,
  type PointRow,
  randomBatches,
  type RandomPoints,
  RAW_WITH_STATUS,
  sortedRows,
} from '../support/random-points.js';

/**
 * PointsParquetWriter through its sorted runs: a shard of more rows than `runRows` goes through a
 * runs file beside it (`<shard>.runs.inprogress`) and must come out as the same file, byte for
 * byte, as when it is sorted in memory, read back by DuckDB sorted and complete. The runs file is
 * the writer's own: created exclusively, removed on commit (done or failed) and on abort.
 */

const ZSTD: OutputConfig['parquet'] = { compression: 'zstd', rowGroupRows: 1000 };
const RUNS = '000000.parquet.runs.inprogress';

const suite = parquetSuite();
const { parquet } = suite;

/** Writes `batches` into a shard of a new folder with runs of `runRows` (undefined: the default) and commits it. */
async function writeShard(batches: readonly PointBatch[], shape: PointsShape, runRows?: number) {
  const dir = tempDir('bulk-extract-points-');
  const path = join(dir, '000000.parquet');
  const writer = PointsParquetWriter.create(path, shape, ZSTD, parquet, runRows === undefined ? {} : { runRows });
  let runsFileSeen = false;
  for (const batch of batches) {
    await writer.append(batch);
    runsFileSeen ||= existsSync(join(dir, RUNS));
  }
  const committed = await writer.commit();
  expect(readdirSync(dir), 'only the shard is left').toEqual(['000000.parquet']);
  return { dir, path, committed, runsFileSeen };
}

function series(id: number, timestamps: readonly number[]) {
  return { id, externalId: `ts-${id}`, isString: false, points: PointList.of(timestamps.map((timestamp) => ({ timestamp, value: 1.5 }))) };
}

describe('a shard of data-model series (instanceColumns)', () => {
  it('carries each series\' node key after externalId, null for a series that is no node, through runs too', async () => {
    const shape: PointsShape = { includeStatus: false, instanceColumns: true };
    const node = (id: number) => ({ ...series(id, [id * 10, id * 10 + 1]), instanceId: { space: `sp-${id % 2}`, externalId: `CTS-${id}` } });
    const batches: PointBatch[] = [[node(3), series(2, [5])], [node(1), node(3 + 4)]];
    for (const runRows of [undefined, 2]) {
      const { dir } = await writeShard(batches, shape, runRows);
      const rows = await parquetRows(suite.duck, dir);
      const keys = rows.map((row) => [row.timeseriesId, row.instanceSpace, row.instanceExternalId]);
      expect(keys).toEqual([
        [1, 'sp-1', 'CTS-1'],
        [1, 'sp-1', 'CTS-1'],
        [2, null, null],
        [3, 'sp-1', 'CTS-3'],
        [3, 'sp-1', 'CTS-3'],
        [7, 'sp-1', 'CTS-7'],
        [7, 'sp-1', 'CTS-7'],
      ]);
      expect(Object.keys(rows[0]!).slice(0, 4)).toEqual(['timeseriesId', 'externalId', 'instanceSpace', 'instanceExternalId']);
    }
  });
});

describe('a shard through sorted runs', () => {
  const cases: [string, RandomPoints, PointsShape][] = [
    ['raw with status: numbers, bad values, strings, statuses, extra; a series in 8 windows', { seed: 11, series: 250, points: 20_000, kind: 'raw', windows: 8 }, RAW_WITH_STATUS],
    ['aggregates: int64 counts, doubles, granularity, extra; a series in 4 windows', { seed: 12, series: 150, points: 12_000, kind: 'aggregates', windows: 4 }, AGGREGATES],
  ];

  it.each(cases)('%s: runs of 7 and of 500 rows give the file sorted in memory, byte for byte; DuckDB reads it sorted and complete', async (_, options, shape) => {
    const batches = randomBatches(options);
    const inMemory = await writeShard(batches, shape);
    expect(inMemory.runsFileSeen, 'the default runRows holds this shard').toBe(false);
    expect(runRowsFor(pointColumns(shape))).toBeGreaterThan(inMemory.committed.rows);
    for (const runRows of [7, 500]) {
      const runs = await writeShard(batches, shape, runRows);
      expect(runs.runsFileSeen, `runs of ${runRows}: a runs file while appending`).toBe(true);
      expect(runs.committed.rows).toBe(inMemory.committed.rows);
      expect(sha256File(runs.path), `runs of ${runRows}`).toBe(sha256File(inMemory.path));
    }

    const { granularity } = shape;
    const withGranularity = (row: PointRow) => (granularity === undefined ? row : { ...row, granularity });
    const expected = sortedRows(batches, shape).map(withGranularity);
    const rows = await parquetRows(suite.duck, inMemory.dir);
    expect(rows.length).toBe(expected.length);
    expect(comparable(rows)).toEqual(comparable(expected));
    expect(await unsortedRows(suite.duck, inMemory.dir)).toBe(0);
  });

  it('keeps the Parquet schema: types, required columns, delta-encoded ids, times and counts, plain doubles', async () => {
    const { path } = await writeShard(randomBatches({ seed: 13, series: 20, points: 300, kind: 'aggregates' }), AGGREGATES, 7);
    const schema = await suite.duck.rows(`SELECT name, type, repetition_type, converted_type FROM parquet_schema(${sql(path)}) WHERE type IS NOT NULL`);
    expect(schema.map((column) => Object.values(column))).toEqual([
      ['timeseriesId', 'INT64', 'REQUIRED', null],
      ['externalId', 'BYTE_ARRAY', 'OPTIONAL', 'UTF8'],
      ['granularity', 'BYTE_ARRAY', 'REQUIRED', 'UTF8'],
      ['timestamp', 'INT64', 'REQUIRED', 'TIMESTAMP_MILLIS'],
      ['count', 'INT64', 'OPTIONAL', null],
      ['average', 'DOUBLE', 'OPTIONAL', null],
      ['extra', 'BYTE_ARRAY', 'OPTIONAL', 'UTF8'],
    ]);
    const encodings = await suite.duck.rows(`SELECT DISTINCT path_in_schema AS name, encodings FROM parquet_metadata(${sql(path)})`);
    const of = (name: string) => encodings.filter((column) => column.name === name).map((column) => column.encodings);
    for (const name of ['timeseriesId', 'timestamp', 'count']) expect(of(name), name).toEqual(['RLE, DELTA_BINARY_PACKED']);
    expect(of('average')).toEqual(['PLAIN, RLE']);
  });
});

describe('the runs file is the writer\'s own', () => {
  /** A writer of runs of 3 rows in a new folder, and a batch that makes it write its first run. */
  function newWriter(dir = tempDir('bulk-extract-points-')) {
    const writer = PointsParquetWriter.create(join(dir, '000000.parquet'), RAW_WITH_STATUS, ZSTD, parquet, { runRows: 3 });
    return { dir, writer, pastOneRun: [series(5, [1, 2, 3, 4, 5])] };
  }

  it('a file already at its name: the append that needs it fails naming it (EEXIST), the file is left as it was', async () => {
    const { dir, writer, pastOneRun } = newWriter();
    writeFileSync(join(dir, RUNS), 'not bulk-extract\'s\n');
    const error = await writer.append(pastOneRun).then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(OutputError);
    expect((error as OutputError).code).toBe('E_OUTPUT');
    expect((error as Error).message).toContain(`Creating ${join(dir, RUNS)} failed (EEXIST: a file or link is already there`);
    await writer.abort();
    expect(readdirSync(dir)).toEqual([RUNS]);
    expect(readFileSync(join(dir, RUNS), 'utf8')).toBe('not bulk-extract\'s\n');
  });

  it('a symbolic link at its name: refused, the link and its target are left as they were', async () => {
    const { dir, writer, pastOneRun } = newWriter();
    const victim = join(tempDir('bulk-extract-victim-'), 'precious.txt');
    writeFileSync(victim, 'precious\n');
    symlinkSync(victim, join(dir, RUNS));
    await expect(writer.append(pastOneRun)).rejects.toThrow(/EEXIST/);
    await writer.abort();
    expect(lstatSync(join(dir, RUNS)).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(dir, RUNS))).toBe(victim);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
  });

  it('abort() removes the runs file it created; a second abort() is safe', async () => {
    const { dir, writer, pastOneRun } = newWriter();
    await writer.append(pastOneRun);
    expect(readdirSync(dir)).toEqual([RUNS]);
    await writer.abort();
    expect(readdirSync(dir)).toEqual([]);
    await writer.abort();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a commit that fails in the encoder removes the runs file and the spill file, and writes no shard', async () => {
    const dir = tempDir('bulk-extract-points-');
    const failing = { ...parquet, encoders: { encode: () => Promise.reject(new Error('the encoder failed (test)')) } };
    const writer = PointsParquetWriter.create(join(dir, '000000.parquet'), RAW_WITH_STATUS, ZSTD, failing, { runRows: 3 });
    await writer.append([series(5, [1, 2, 3, 4, 5])]);
    expect(readdirSync(dir)).toEqual([RUNS]);
    await expect(writer.commit()).rejects.toThrow('the encoder failed (test)');
    expect(readdirSync(dir)).toEqual([]);
    await writer.abort();
  });

  it('any other failure to create it is an E_OUTPUT naming it (here: its folder is gone)', async () => {
    const { writer, pastOneRun } = newWriter(join(tempDir('bulk-extract-points-'), 'gone'));
    const error = await writer.append(pastOneRun).then(() => undefined, (caught: unknown) => caught);
    expect((error as OutputError).code).toBe('E_OUTPUT');
    expect((error as Error).message).toMatch(/Creating .*gone.*runs\.inprogress failed \(ENOENT/);
    await writer.abort();
  });
});
