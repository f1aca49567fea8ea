import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import * as wasm from 'parquet-wasm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type OutputConfig, outputSchema } from '../../src/config/job-schema.js';
import { PageItems, scanPage } from '../../src/page/index.js';
import type { InstanceColumn, InstanceColumnKind, PointsShape } from '../../src/resources/index.js';
import { PointsParquetWriter } from '../../src/sink/datapoints/points-parquet-writer.js';
import { deltaStats, deltaStatsJson } from '../../src/sink/delta/index.js';
import {
  type CommittedShard,
  createShardSink,
  type PointBatch,
  type ShardSink,
  type StreamShape,
} from '../../src/sink/index.js';
import type { TableKind } from '../../src/config/job-schema.js';
import { SPILL_ROWS } from '../../src/sink/parquet/parquet-writer.js';
import { type Duck, openDuck, type Row } from '../support/export-duckdb.js';
import { removeTempDirs, sha256File, sql, tempDir } from '../support/export-harness.js';
import { newParquetDeps } from '../support/parquet-deps.js';
import { AGGREGATES, randomBatches, RAW_WITH_STATUS } from '../support/random-points.js';

/**
 * A Delta table stream's Parquet shards, written by the sink as files on disk and read back: the
 * same rows as a plain files shard, every timestamp (nested ones too) in microseconds, UTC, which
 * DuckDB reads as TIMESTAMP WITH TIME ZONE at the same instants; each column encoded as in the
 * plain file; and the `add` stats the commit returns equal to those computed anew from the file as
 * parquet-wasm reads it. Collections (with metadata columns, and sequences' nested times),
 * datapoints raw and aggregated, and instances; shards of several spill batches, several datapoints
 * batches and merged runs, so that the stats gather across batches.
 */

let duck: Duck;
beforeAll(async () => {
  duck = await openDuck();
});
afterAll(() => duck.close());

const sinks: ShardSink[] = [];
afterEach(async () => {
  await Promise.all(sinks.splice(0).map((sink) => sink.close()));
  removeTempDirs();
});

/** Row groups of 1000 rows: the file read back comes in batches other than those the writer spilled. */
const PARQUET: OutputConfig['parquet'] = { compression: 'zstd', rowGroupRows: 1000 };

/** A sink of its own (closed after the test) staging its shards in place under a new temp folder. */
function newSink(): ShardSink {
  const out = tempDir('bulk-extract-delta-shards-');
  const stage = async (key: string) => {
    const path = join(out, ...key.split('/'));
    await mkdir(dirname(path), { recursive: true });
    return path;
  };
  const sink = createShardSink(stage, outputSchema.parse({ dir: out, parquet: PARQUET }));
  sinks.push(sink);
  return sink;
}

/** What a test writes: the same rows once per table kind, into shard 0 of a partition of each. */
type Write = (sink: ShardSink, stream: StreamShape, dir: string) => Promise<CommittedShard>;

/** One shard's rows committed as a Delta data file and as a plain file. */
interface BothShards {
  delta: CommittedShard;
  files: CommittedShard;
}

/**
 * The shard of `stream` as a Delta data file and as a plain file, from the same sink; a stream
 * without a table kind writes the plain file, byte for byte.
 */
async function bothShards(stream: StreamShape, write: Write): Promise<BothShards> {
  const sink = newSink();
  const delta = await write(sink, { ...stream, table: 'delta' }, 'delta/part=1-of-1');
  const files = await write(sink, { ...stream, table: 'files' }, 'files/part=1-of-1');
  const unsaid = await write(sink, { ...stream, table: undefined }, 'unsaid/part=1-of-1');
  expect(unsaid).not.toHaveProperty('deltaStats');
  expect(sha256File(unsaid.path)).toBe(sha256File(files.path));
  return { delta, files };
}

const writeItems = (pages: readonly (PageItems | readonly unknown[])[]): Write => async (sink, stream, dir) => {
  const [writer, ...rest] = await sink.open({ dir, stream }, 0);
  if (writer === undefined || rest.length > 0) throw new Error('expected one writer');
  for (const page of pages) await writer.append(page);
  return writer.commit();
};

const writePoints = (batches: readonly PointBatch[]): Write => async (sink, stream, dir) => {
  const [writer, ...rest] = await sink.openPoints({ dir, stream }, 0);
  if (writer === undefined || rest.length > 0) throw new Error('expected one writer');
  for (const batch of batches) await writer.append(batch);
  return writer.commit();
};

/** The stats of a data file computed anew: the file read by parquet-wasm, each of its batches counted. */
function statsOfFile(path: string): string {
  const table = tableFromIPC(wasm.readParquet(readFileSync(path)).intoIPCStream());
  return deltaStatsJson(deltaStats(table.schema, table.batches));
}

const at = (path: string) => `read_parquet(${sql(path)})`;
const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

async function columnTypes(path: string): Promise<[string, string][]> {
  const rows = await duck.rows(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM ${at(path)})`);
  return rows.map((row) => [String(row.column_name), String(row.column_type)]);
}

/** Each timestamp of the file's schema, nested ones by their leaf name, with its Parquet logical type. */
async function timestampLeaves(path: string): Promise<[string, string][]> {
  const rows = await duck.rows(
    `SELECT name, logical_type::VARCHAR AS logical FROM parquet_schema(${sql(path)}) WHERE logical_type::VARCHAR LIKE '%Timestamp%'`,
  );
  return rows.map((row) => [String(row.name), String(row.logical)]);
}

/** Each column chunk's encodings, by column path and row group. */
async function encodings(path: string): Promise<Row[]> {
  return duck.rows(
    `SELECT row_group_id, path_in_schema, encodings FROM parquet_metadata(${sql(path)}) ORDER BY row_group_id, column_id`,
  );
}

/**
 * The Delta data file against the plain file of the same rows: the same columns and types, the
 * timestamps (`times`, the top-level ones) at the same milliseconds, every other value equal, each
 * timestamp leaf in microseconds where the plain file has milliseconds, the same encodings; its
 * stats as computed anew from the file, numRecords its rows; the plain shard has no stats.
 */
async function expectDeltaFile(
  { delta, files }: BothShards,
  times: readonly string[],
  orderBy: string,
): Promise<void> {
  expect(files).not.toHaveProperty('deltaStats');
  expect(delta.rows).toBe(files.rows);

  const types = await columnTypes(delta.path);
  expect(types).toEqual(await columnTypes(files.path));
  expect(types.filter(([, type]) => type === 'TIMESTAMP WITH TIME ZONE').map(([name]) => name)).toEqual(times);

  const epochMs = times.map((name) => `epoch_ms(${quote(name)}) AS ${quote(name)}`).join(', ');
  const millis = (path: string) => duck.rows(`SELECT ${epochMs} FROM ${at(path)} ORDER BY ${orderBy}`);
  const deltaMillis = await millis(delta.path);
  expect(deltaMillis).toEqual(await millis(files.path));
  expect(deltaMillis.length).toBe(delta.rows);
  const all = (path: string) => duck.rows(`SELECT * FROM ${at(path)} ORDER BY ${orderBy}`);
  expect(await all(delta.path)).toEqual(await all(files.path));

  const leaves = await timestampLeaves(delta.path);
  expect(leaves.map(([name]) => name)).toEqual((await timestampLeaves(files.path)).map(([name]) => name));
  for (const [name, logical] of leaves) expect(logical, name).toMatch(/isAdjustedToUTC=1.*MICROS/);
  for (const [name, logical] of await timestampLeaves(files.path)) expect(logical, name).toMatch(/MILLIS/);
  expect(await encodings(delta.path)).toEqual(await encodings(files.path));

  expect(delta.deltaStats).toBe(statsOfFile(delta.path));
  expect((JSON.parse(delta.deltaStats!) as { numRecords: number }).numRecords).toBe(delta.rows);
}

/** Whether every column chunk of `column` (a top-level one) is DELTA_BINARY_PACKED, without a dictionary. */
async function deltaEncoded(path: string, column: string): Promise<boolean> {
  const chunks = (await encodings(path)).filter((row) => row.path_in_schema === column);
  const texts = chunks.map((row) => String(row.encodings));
  return texts.length > 0 && texts.every((text) => text.includes('DELTA_BINARY_PACKED') && !text.includes('DICTIONARY'));
}

const T0 = Date.UTC(2024, 0, 1);

function events(count: number): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, k) => ({
    id: 1_000_000 + k,
    externalId: `EV-${k}`,
    type: k % 3 === 0 ? 'alarm' : 'info',
    // A time before 1970 in the middle, so that the least is in neither the first nor the last batch.
    startTime: k === Math.floor(count / 2) ? -86_400_001 : T0 + k * 1000,
    ...(k % 4 === 0 ? {} : { endTime: T0 + k * 1000 + 500 }),
    assetIds: [k, k + 1],
    metadata: { site: `site ${k % 5}`, ...(k % 2 === 0 ? { line: `L${k % 3}` } : {}) },
    createdTime: T0 - 1,
    lastUpdatedTime: T0 + k,
    ...(k % 7 === 0 ? { note: 'goes to extra' } : {}),
  }));
}

function pagesOf<T>(items: readonly T[], size: number): T[][] {
  const pages: T[][] = [];
  for (let i = 0; i < items.length; i += size) pages.push(items.slice(i, i + size));
  return pages;
}

const EVENT_TIMES = ['startTime', 'endTime', 'createdTime', 'lastUpdatedTime'];

describe('a collection stream as a Delta table', () => {
  it('writes events with metadata columns as the plain file holds them, timestamps in microseconds', async () => {
    const stream: StreamShape = { resource: 'events', formats: ['parquet'], metadataColumns: ['site', 'line'] };
    const shards = await bothShards(stream, writeItems(pagesOf(events(50), 20)));
    await expectDeltaFile(shards, EVENT_TIMES, 'id');
    const stats = JSON.parse(shards.delta.deltaStats!) as Record<string, Record<string, unknown>>;
    expect(stats.minValues).toMatchObject({ startTime: '1969-12-30T23:59:59.999Z', metadata_site: 'site 0', id: 1_000_000 });
    expect(stats.nullCount).toMatchObject({ endTime: 13, metadata_line: 25, metadata: 0, assetIds: 0 });
  });

  it('gathers the stats of a shard of several spill batches, and keeps the times DELTA_BINARY_PACKED', async () => {
    const rows = 2 * SPILL_ROWS + 1000;
    const stream: StreamShape = { resource: 'events', formats: ['parquet'], metadataColumns: ['site'] };
    const shards = await bothShards(stream, writeItems(pagesOf(events(rows), 1000)));
    await expectDeltaFile(shards, EVENT_TIMES, 'id');
    const stats = JSON.parse(shards.delta.deltaStats!) as Record<string, Record<string, unknown>>;
    expect(stats.minValues).toMatchObject({ id: 1_000_000, startTime: '1969-12-30T23:59:59.999Z' });
    expect(stats.maxValues).toMatchObject({ id: 1_000_000 + rows - 1, externalId: 'EV-999' });
    expect(stats.maxValues!.startTime).toBe(new Date(T0 + (rows - 1) * 1000).toISOString());
    for (const time of EVENT_TIMES) expect(await deltaEncoded(shards.delta.path, time), time).toBe(true);
  });

  it('converts sequences\' nested times (a list of structs) as well', async () => {
    const sequences = Array.from({ length: 30 }, (_, k) => ({
      id: k + 1,
      externalId: `SEQ-${k}`,
      name: `sequence ${k}`,
      createdTime: T0 - k * 86_400_000 * 20_000,
      lastUpdatedTime: T0 + k,
      columns: [
        { externalId: 'a', valueType: 'DOUBLE', createdTime: -k * 1000, lastUpdatedTime: T0 + k },
        { externalId: 'b', valueType: 'STRING', ...(k % 2 === 0 ? {} : { createdTime: T0 }) },
      ],
    }));
    const shards = await bothShards({ resource: 'sequences', formats: ['parquet'] }, writeItems([sequences]));
    await expectDeltaFile(shards, ['createdTime', 'lastUpdatedTime'], 'id');
    const leaves = (await timestampLeaves(shards.delta.path)).map(([name]) => name);
    expect(leaves.length, 'the columns\' own createdTime and lastUpdatedTime too').toBe(4);
  });
});

describe('a datapoints stream as a Delta table', () => {
  const cases: [string, PointsShape, Parameters<typeof randomBatches>[0]][] = [
    ['raw points with status (NaN, infinities, strings, extra; a series in windows before 1970)', RAW_WITH_STATUS, {
      seed: 31, series: 60, points: 6000, kind: 'raw', windows: 3,
    }],
    ['hourly aggregates', AGGREGATES, { seed: 32, series: 40, points: 5000, kind: 'aggregates', windows: 2 }],
  ];

  it.each(cases)('%s: as the plain file, timestamps in microseconds', async (_, shape, options) => {
    const stream: StreamShape = { resource: 'datapoints', formats: ['parquet'], shape };
    const shards = await bothShards(stream, writePoints(randomBatches(options)));
    await expectDeltaFile(shards, ['timestamp'], 'timeseriesId, timestamp');
    expect(await deltaEncoded(shards.delta.path, 'timestamp')).toBe(true);
  });

  it('gathers the stats of a shard of more than one batch of 65,536 rows', async () => {
    const batches = randomBatches({ seed: 33, series: 80, points: 70_000, kind: 'raw', strings: 0.1 });
    const stream: StreamShape = { resource: 'datapoints', formats: ['parquet'], shape: RAW_WITH_STATUS };
    const shards = await bothShards(stream, writePoints(batches));
    expect(shards.delta.rows).toBeGreaterThan(65_536);
    await expectDeltaFile(shards, ['timestamp'], 'timeseriesId, timestamp');
  });

  it('gathers the same stats, and writes the same file, when the shard goes through merged runs', async () => {
    const parquet = newParquetDeps();
    try {
      const batches = randomBatches({ seed: 34, series: 50, points: 8000, kind: 'aggregates', windows: 3 });
      const write = async (runRows?: number, table: TableKind = 'delta') => {
        const path = join(tempDir('bulk-extract-delta-runs-'), '000000.parquet');
        const options = { table, ...(runRows === undefined ? {} : { runRows }) };
        const writer = PointsParquetWriter.create(path, AGGREGATES, PARQUET, parquet, options);
        for (const batch of batches) await writer.append(batch);
        return writer.commit();
      };
      const inMemory = await write();
      const merged = await write(500);
      expect(merged.deltaStats).toBe(inMemory.deltaStats);
      expect(sha256File(merged.path)).toBe(sha256File(inMemory.path));
      await expectDeltaFile({ delta: merged, files: await write(500, 'files') }, ['timestamp'], 'timeseriesId, timestamp');
    } finally {
      await parquet.encoders.close();
    }
  });
});

const VIEW = { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };

const field = (name: string, kind: InstanceColumnKind, required = false): InstanceColumn => ({
  name, kind, list: false, from: { field: name }, required,
});
const prop = (name: string, kind: InstanceColumnKind, list = false): InstanceColumn => ({
  name, kind, list, from: { property: name, type: kind }, required: false,
});

/** A view's columns of every kind, a list of timestamps among them. */
const COLUMNS: InstanceColumn[] = [
  field('space', 'string', true),
  field('externalId', 'string', true),
  field('instanceType', 'string', true),
  field('version', 'int64', true),
  field('createdTime', 'timestamp', true),
  field('lastUpdatedTime', 'timestamp', true),
  field('deletedTime', 'timestamp'),
  prop('name', 'string'),
  prop('tags', 'string', true),
  prop('parent', 'node-ref'),
  prop('serial', 'int64'),
  prop('rank', 'int32'),
  prop('ratio', 'float'),
  prop('weight', 'double'),
  prop('active', 'boolean'),
  prop('commissioned', 'date'),
  prop('lastSeen', 'timestamp'),
  prop('seen', 'timestamp', true),
  prop('spec', 'json'),
  { name: 'extra', kind: 'extra-json', list: false, required: false, from: { extra: true } },
];

function asset(i: number): Record<string, unknown> {
  const props: Record<string, unknown> = {
    name: `Asset ${i}`,
    tags: i % 2 === 0 ? ['even'] : [],
    serial: i * 1000,
    rank: i % 100,
    ratio: i / 8,
    weight: i * 1.5,
    active: i % 3 === 0,
    commissioned: '2020-01-01',
    seen: [new Date(T0 + i).toISOString(), new Date(-i * 1000).toISOString()],
    spec: { i },
  };
  if (i % 5 !== 0) props.lastSeen = new Date(T0 + i * 60_000).toISOString();
  if (i > 0) props.parent = { space: 'site_a', externalId: `a-${i - 1}` };
  return {
    instanceType: 'node',
    space: 'site_a',
    externalId: `a-${i}`,
    version: 3,
    createdTime: 1_700_000_000_000 + i,
    lastUpdatedTime: 1_700_000_100_000,
    properties: { cdf_cdm: { 'CogniteAsset/v1': props } },
  };
}

/** A page's bytes as the platform sends them, scanned as the export scans a page. */
function page(items: readonly unknown[]): PageItems {
  const body = Buffer.from(JSON.stringify({ items }));
  return PageItems.scanned(body, scanPage(body)!);
}

describe('an instances stream as a Delta table', () => {
  it('writes every column kind as the plain file holds it, timestamps in microseconds, over several spill batches', async () => {
    const stream: StreamShape = {
      name: 'assets', resource: 'instances', formats: ['parquet'], instances: { view: VIEW, columns: COLUMNS },
    };
    const all = Array.from({ length: SPILL_ROWS + 500 }, (_, i) => asset(i));
    const shards = await bothShards(stream, writeItems(pagesOf(all, 1000).map(page)));
    await expectDeltaFile(shards, ['createdTime', 'lastUpdatedTime', 'deletedTime', 'lastSeen'], 'space, externalId');
    const stats = JSON.parse(shards.delta.deltaStats!) as Record<string, Record<string, unknown>>;
    expect(stats.nullCount).toMatchObject({ deletedTime: all.length, parent: { space: 1, externalId: 1 } });
    expect(stats.minValues).toMatchObject({ commissioned: '2020-01-01', rank: 0 });
    expect(stats.maxValues).toMatchObject({ serial: (all.length - 1) * 1000 });
  });
});
