import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBValue } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import type { OutputConfig, Resource } from '../../src/config/job-schema.js';
import { BadItemError } from '../../src/errors.js';
import { ParquetShardWriter } from '../../src/sink/parquet/parquet-writer.js';
import { asNumber, openDuck, parquetAt, parquetItems } from '../support/export-duckdb.js';
import { sha256File, sql, tempDir } from '../support/export-harness.js';
import { parquetSuite } from '../support/parquet-deps.js';

type Item = Record<string, unknown>;

const ZSTD: OutputConfig['parquet'] = { compression: 'zstd', rowGroupRows: 1000 };
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** The encoder threads and learned sizes the file's writers share, as those of one sink; DuckDB. */
const suite = parquetSuite();
const { parquet } = suite;

function event(i: number, fields: Item = {}): Item {
  return {
    id: 1_000_000_000_000 + i,
    externalId: `EV-${i}`,
    type: 'alarm',
    startTime: Date.UTC(2024, 0, 1) + i * 1000,
    assetIds: [i, i + 1],
    source: 'SAP',
    metadata: { site: `site ${i % 7}` },
    createdTime: Date.UTC(2024, 0, 1),
    lastUpdatedTime: Date.UTC(2024, 0, 2),
    ...fields,
  };
}

/** Writes `pages` into one file and commits it. */
async function writeFile(
  pages: readonly (readonly Item[])[],
  options: OutputConfig['parquet'] = ZSTD,
  resource: Resource = 'events',
  dir = tempDir('bulk-extract-parquet-'),
) {
  const path = join(dir, '000000.parquet');
  const writer = await ParquetShardWriter.create(path, resource, options, parquet);
  for (const page of pages) await writer.append(page);
  const committed = await writer.commit();
  return { path, dir, committed, writer };
}

function pagesOf(items: readonly Item[], size: number): Item[][] {
  const pages: Item[][] = [];
  for (let i = 0; i < items.length; i += size) pages.push(items.slice(i, i + size));
  return pages;
}

async function compressions(path: string): Promise<string[]> {
  const rows = await suite.duck.rows(`SELECT DISTINCT compression FROM parquet_metadata(${sql(path)})`);
  return rows.map((row) => String(row.compression));
}

describe('ParquetShardWriter: row groups', () => {
  it('3500 rows in pages of 100 with rowGroupRows 1000 give 4 row groups in one file', async () => {
    const items = Array.from({ length: 3500 }, (_, i) => event(i));
    const { path, committed } = await writeFile(pagesOf(items, 100));
    expect(committed).toMatchObject({ path, format: 'parquet', rows: 3500 });
    const groups = await suite.duck.rows(
      `SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata(${sql(path)}) ORDER BY row_group_id`,
    );
    expect(groups.map((g) => asNumber(g.row_group_num_rows))).toEqual([1000, 1000, 1000, 500]);
    const row = await suite.duck.one(`SELECT count(*) AS c, sum(id) AS s FROM ${parquetAt(path)}`);
    expect(asNumber(row.c)).toBe(3500);
    expect(row.s).toBe(BigInt(3500) * 1_000_000_000_000n + (3499n * 3500n) / 2n);
  });

  it('keeps the rows in order across row groups', async () => {
    const items = Array.from({ length: 2500 }, (_, i) => event(i));
    const { path } = await writeFile(pagesOf(items, 333));
    const read = await parquetItems(suite.duck, 'events', path);
    expect(read.map((item) => item.id)).toEqual(items.map((item) => item.id));
    expect(read).toEqual(items);
  });

  it('commit() reports the bytes and sha256 of the file and leaves no .inprogress', async () => {
    const { path, dir, committed } = await writeFile(pagesOf(Array.from({ length: 1500 }, (_, i) => event(i)), 500));
    expect(readdirSync(dir)).toEqual(['000000.parquet']);
    expect(committed.bytes).toBe(statSync(path).size);
    expect(committed.sha256).toBe(sha256File(path));
  });

  it('commit() of a shard without rows never leaves an unreadable .parquet file (a readable empty one, or an error)', async () => {
    const dir = tempDir('bulk-extract-parquet-');
    const path = join(dir, '000000.parquet');
    const writer = await ParquetShardWriter.create(path, 'events', ZSTD, parquet);
    const outcome = await writer.commit().then(
      (committed) => committed,
      async (error: unknown) => {
        await writer.abort();
        return error;
      },
    );
    if (outcome instanceof Error) {
      expect(readdirSync(dir)).toEqual([]);
    } else {
      expect(outcome).toMatchObject({ rows: 0 });
      const row = await suite.duck.one(`SELECT count(*) AS c FROM ${parquetAt(path)}`);
      expect(asNumber(row.c)).toBe(0);
    }
  });
});

describe('ParquetShardWriter: values round-trip', () => {
  it('null vs empty list and null vs empty map are kept apart', async () => {
    const items = [
      event(1, { assetIds: [], metadata: {} }),
      event(2, { assetIds: undefined, metadata: undefined }),
      event(3, { assetIds: [7], metadata: { a: '' } }),
    ];
    delete items[1]!.assetIds;
    delete items[1]!.metadata;
    const { path } = await writeFile([items]);
    const rows = await suite.duck.rows(
      `SELECT id, assetIds IS NULL AS listNull, len(assetIds) AS listLen, metadata IS NULL AS mapNull, cardinality(metadata) AS mapLen FROM ${parquetAt(path)} ORDER BY id`,
    );
    const orNull = (value: DuckDBValue | undefined) => (value === null ? null : asNumber(value));
    expect(rows.map((r) => [r.listNull, orNull(r.listLen), r.mapNull, orNull(r.mapLen)])).toEqual([
      [false, 0, false, 0],
      [true, null, true, null],
      [false, 1, false, 1],
    ]);
    expect(await parquetItems(suite.duck, 'events', path)).toEqual(items);
  });

  it('absent optional fields are NULL, not empty strings or zeros', async () => {
    const item: Item = { id: 42 };
    const { path } = await writeFile([[item]]);
    const row = await suite.duck.one(`SELECT * FROM ${parquetAt(path)}`);
    for (const [key, value] of Object.entries(row)) {
      if (key !== 'id') expect(value, key).toBeNull();
    }
    expect(row.id).toBe(42n);
  });

  it('strings with emoji, CJK, combining marks, newlines, quotes, backslashes and tabs round-trip exactly', async () => {
    const texts = [
      '🛢️🔥 pump 🇳🇴',
      '東京 泵站 温度',
      'Ω-factor e\u0301 naïve',
      'line one\nline two\r\nthree',
      'say "hi" and \'bye\'',
      'back\\slash \\n not a newline',
      'tab\tseparated',
      '',
      '\u2028\u2029 separators',
      'x'.repeat(5000),
    ];
    const items = texts.map((text, i) =>
      event(i, { externalId: text, description: text, metadata: { [text || 'empty']: text, [`k${i} "q"`]: `v\n${text}` } }),
    );
    const { path } = await writeFile([items.slice(0, 4), items.slice(4)]);
    const rows = await suite.duck.rows(`SELECT id, externalId, description, to_json(metadata)::VARCHAR AS m FROM ${parquetAt(path)} ORDER BY id`);
    rows.forEach((row, i) => {
      expect(row.externalId).toBe(texts[i]);
      expect(row.description).toBe(texts[i]);
      expect(JSON.parse(String(row.m))).toEqual(items[i]?.metadata);
    });
    const text = texts[0]!;
    const lookup = await suite.duck.one(`SELECT metadata[${sql(text)}] AS v FROM ${parquetAt(path)} WHERE id = ${String(items[0]?.id)}`);
    expect(lookup.v).toBe(text);
  });

  it('INT64 values near 2^53-1, at 2^32 and 0 round-trip exactly', async () => {
    const values = [0, 1, 4_294_967_295, 4_294_967_296, 4_294_967_297, 2 ** 52, MAX_SAFE - 1, MAX_SAFE];
    const items = values.map((value, i) =>
      event(i, { id: value, dataSetId: value, assetIds: [value, MAX_SAFE - i, 0], startTime: value }),
    );
    const { path } = await writeFile([items]);
    const rows = await suite.duck.rows(
      `SELECT id::VARCHAR AS id, dataSetId::VARCHAR AS ds, array_to_string(assetIds, ',') AS a, epoch_ms(startTime)::VARCHAR AS st FROM ${parquetAt(path)}`,
    );
    expect(rows.map((r) => [r.id, r.ds, r.a, r.st])).toEqual(
      values.map((value, i) => [String(value), String(value), `${value},${MAX_SAFE - i},0`, String(value)]),
    );
  });

  it('negative times (before 1970) round-trip', async () => {
    const { path } = await writeFile([[event(1, { startTime: -1, endTime: -86_400_000 * 365 - 123 })]]);
    const row = await suite.duck.one(`SELECT epoch_ms(startTime) AS s, epoch_ms(endTime) AS e FROM ${parquetAt(path)}`);
    expect([row.s, row.e]).toEqual([-1n, BigInt(-86_400_000 * 365 - 123)]);
  });

  it('timestamps are UTC instants: TIMESTAMP WITH TIME ZONE, isAdjustedToUTC, millis, equal epoch ms', async () => {
    const instant = Date.UTC(2024, 2, 10, 7, 30, 0, 123);
    const { path } = await writeFile([[event(1, { startTime: instant, endTime: instant + 1, createdTime: 0 })]]);
    const local = await openDuck();
    try {
      await local.rows('SET TimeZone = \'America/New_York\'');
      const row = await local.one(
        `SELECT epoch_ms(startTime) AS ms, (startTime AT TIME ZONE 'UTC')::VARCHAR AS utc, epoch_ms(createdTime) AS zero FROM ${parquetAt(path)}`,
      );
      expect(row.ms).toBe(BigInt(instant));
      expect(row.utc).toBe('2024-03-10 07:30:00.123');
      expect(row.zero).toBe(0n);
    } finally {
      local.close();
    }
    const schema = await suite.duck.rows(`SELECT name, type, converted_type, logical_type, duckdb_type FROM parquet_schema(${sql(path)})`);
    for (const name of ['startTime', 'endTime', 'createdTime', 'lastUpdatedTime']) {
      const column = schema.find((c) => c.name === name);
      expect(column?.type, name).toBe('INT64');
      expect(column?.duckdb_type, name).toBe('TIMESTAMP WITH TIME ZONE');
      expect(String(column?.logical_type), name).toContain('isAdjustedToUTC=1');
      expect(String(column?.logical_type), name).toMatch(/MILLIS=MilliSeconds\(\)/);
    }
    // The profile: no INT96, no unsigned types.
    for (const column of schema) {
      expect(column.type, String(column.name)).not.toBe('INT96');
      expect(String(column.converted_type), String(column.name)).not.toMatch(/^UINT/);
    }
  });

  it('asset fields outside the schema (geoLocation, anything new) go to extra as JSON, losslessly; labels has a column', async () => {
    const asset: Item = {
      id: 7,
      name: 'Pump 1',
      rootId: 7,
      createdTime: 1,
      lastUpdatedTime: 2,
      labels: [{ externalId: 'critical' }],
      geoLocation: { type: 'Point', coordinates: [10.5, 59.9] },
      aliases: ['a', 'ü'],
      flag: false,
      nothing: null,
    };
    const plain: Item = { id: 8, name: 'Pump 2', rootId: 7, parentId: 7, createdTime: 1, lastUpdatedTime: 2 };
    const { path } = await writeFile([[asset, plain]], ZSTD, 'assets');
    const rows = await suite.duck.rows(`SELECT id, extra FROM ${parquetAt(path)} ORDER BY id`);
    expect(JSON.parse(String(rows[0]?.extra))).toEqual({
      geoLocation: { type: 'Point', coordinates: [10.5, 59.9] },
      aliases: ['a', 'ü'],
      flag: false,
      nothing: null,
    });
    expect(rows[1]?.extra).toBeNull();
    expect(await parquetItems(suite.duck, 'assets', path)).toEqual([asset, plain]);
  });
});

describe('ParquetShardWriter: a field of the wrong type', () => {
  const cases: [string, Item, string][] = [
    ['startTime "2024-01-01"', event(5, { startTime: '2024-01-01' }), 'startTime'],
    ['assetIds "x"', event(5, { assetIds: 'x' }), 'assetIds'],
    ['assetIds ["x"]', event(5, { assetIds: ['x'] }), 'assetIds'],
    ['metadata value 5', event(5, { metadata: { site: 5 } }), 'metadata'],
    ['metadata a list', event(5, { metadata: ['a'] }), 'metadata'],
    ['type 5', event(5, { type: 5 }), 'type'],
    ['dataSetId 1.5', event(5, { dataSetId: 1.5 }), 'dataSetId'],
  ];

  it.each(cases)('%s: BadItemError (E_BAD_ITEM) naming the field and the item id', async (_, item, field) => {
    const dir = tempDir('bulk-extract-parquet-');
    const writer = await ParquetShardWriter.create(join(dir, '000000.parquet'), 'events', ZSTD, parquet);
    await writer.append([event(1), event(2)]);
    const error = await writer.append([event(3), item]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BadItemError);
    expect(error).toMatchObject({ code: 'E_BAD_ITEM' });
    const message = (error as BadItemError).message;
    expect(message).toContain(`'${field}'`);
    expect(message).toContain(String(item.id));
    await writer.abort();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('id missing: BadItemError naming id and showing the item', async () => {
    const item = event(9);
    delete item.id;
    const writer = await ParquetShardWriter.create(join(tempDir('bulk-extract-parquet-'), 'x.parquet'), 'events', ZSTD, parquet);
    const error = await writer.append([item]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BadItemError);
    expect((error as BadItemError).message).toContain('\'id\'');
    expect((error as BadItemError).message).toContain('EV-9');
    await writer.abort();
  });

  it('an id beyond 2^53 (already rounded by JSON.parse) is refused, not written rounded', async () => {
    const writer = await ParquetShardWriter.create(join(tempDir('bulk-extract-parquet-'), 'x.parquet'), 'events', ZSTD, parquet);
    await expect(writer.append([event(1, { id: 2 ** 53 + 2 })])).rejects.toThrow(/'id'/);
    await writer.abort();
  });

  it('an item that is not an object is a BadItemError', async () => {
    const writer = await ParquetShardWriter.create(join(tempDir('bulk-extract-parquet-'), 'x.parquet'), 'events', ZSTD, parquet);
    await expect(writer.append([[1, 2]])).rejects.toBeInstanceOf(BadItemError);
    await expect(writer.append([null])).rejects.toBeInstanceOf(BadItemError);
    await writer.abort();
  });
});

describe('ParquetShardWriter: abort', () => {
  it('before any row group is flushed: no file, no .inprogress', async () => {
    const dir = tempDir('bulk-extract-parquet-');
    const writer = await ParquetShardWriter.create(join(dir, '000000.parquet'), 'events', ZSTD, parquet);
    await writer.append([event(1)]);
    // Rows wait in the spill file, a temp file that a resume removes; no .parquet before commit.
    expect(readdirSync(dir)).toEqual(['000000.parquet.spill.inprogress']);
    await writer.abort();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('after batches went to the spill file: no file, no .inprogress', async () => {
    const dir = tempDir('bulk-extract-parquet-');
    const writer = await ParquetShardWriter.create(join(dir, '000000.parquet'), 'events', ZSTD, parquet);
    for (const page of pagesOf(Array.from({ length: 2500 }, (_, i) => event(i)), 250)) await writer.append(page);
    await writer.abort();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('right after creation: no file', async () => {
    const dir = tempDir('bulk-extract-parquet-');
    const writer = await ParquetShardWriter.create(join(dir, '000000.parquet'), 'events', ZSTD, parquet);
    await writer.abort();
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('ParquetShardWriter: compression', () => {
  const items = Array.from({ length: 1200 }, (_, i) => event(i));

  it('two consecutive writers are both ZSTD', async () => {
    const dir = tempDir('bulk-extract-parquet-');
    const first = await writeFile(pagesOf(items, 400), ZSTD, 'events', join(dir));
    const secondDir = tempDir('bulk-extract-parquet-');
    const second = await writeFile(pagesOf(items, 400), ZSTD, 'events', secondDir);
    expect(await compressions(first.path)).toEqual(['ZSTD']);
    expect(await compressions(second.path)).toEqual(['ZSTD']);
  });

  it('snappy when configured, and zstd again for the next writer; none is UNCOMPRESSED', async () => {
    const snappy = await writeFile(pagesOf(items, 400), { compression: 'snappy', rowGroupRows: 1000 });
    const zstd = await writeFile(pagesOf(items, 400), ZSTD);
    const none = await writeFile(pagesOf(items, 400), { compression: 'none', rowGroupRows: 1000 });
    expect(await compressions(snappy.path)).toEqual(['SNAPPY']);
    expect(await compressions(zstd.path)).toEqual(['ZSTD']);
    expect(await compressions(none.path)).toEqual(['UNCOMPRESSED']);
  });

  it('writers open at the same time keep their own compression', async () => {
    const a = await ParquetShardWriter.create(join(tempDir('bulk-extract-parquet-'), 'a.parquet'), 'events', ZSTD, parquet);
    const b = await ParquetShardWriter.create(
      join(tempDir('bulk-extract-parquet-'), 'b.parquet'),
      'events',
      { compression: 'snappy', rowGroupRows: 1000 },
      parquet,
    );
    for (const page of pagesOf(items, 300)) await Promise.all([a.append(page), b.append(page)]);
    const [ca, cb] = await Promise.all([a.commit(), b.commit()]);
    expect(await compressions(ca.path)).toEqual(['ZSTD']);
    expect(await compressions(cb.path)).toEqual(['SNAPPY']);
    expect(await parquetItems(suite.duck, 'events', cb.path)).toEqual(items);
  });

  it('ids and times are delta encoded, and externalId (unique) has no dictionary; other strings do', async () => {
    const { path } = await writeFile(pagesOf(items, 400));
    const rows = await suite.duck.rows(
      `SELECT path_in_schema AS col, string_agg(DISTINCT encodings, ',') AS encodings FROM parquet_metadata(${sql(path)}) ` +
      'WHERE path_in_schema IN (\'id\', \'startTime\', \'externalId\', \'type\') GROUP BY col ORDER BY col',
    );
    const encodings = Object.fromEntries(rows.map((row) => [String(row.col), String(row.encodings)]));
    expect(encodings.id).toContain('DELTA_BINARY_PACKED');
    expect(encodings.startTime).toContain('DELTA_BINARY_PACKED');
    expect(encodings.externalId).not.toContain('DICTIONARY');
    expect(encodings.type).toContain('DICTIONARY');
  });
});
