import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { metadataColumnName } from '../../src/resources/index.js';
import { ParquetShardWriter } from '../../src/sink/parquet/parquet-writer.js';
import { parquetAt } from '../support/export-duckdb.js';
import { tempDir } from '../support/export-harness.js';
import { parquetSuite } from '../support/parquet-deps.js';

/**
 * The Parquet columns `metadataColumns` keys become keep their Unicode letters and digits, and
 * DuckDB reads them back by those names.
 */
const suite = parquetSuite();
const { parquet } = suite;

describe('metadataColumnName', () => {
  it.each([
    ['site', 'metadata_site'],
    ['ключ', 'metadata_ключ'],
    ['温度', 'metadata_温度'],
    ['तापमान', 'metadata_तापमान'],
    ['Température_2', 'metadata_Température_2'],
    ['e\u0301t\u00e9', 'metadata_\u00e9t\u00e9'],
    ['٣ rooms', 'metadata_٣_rooms'],
    ['a b', 'metadata_a_b'],
    ['a.b', 'metadata_a_b'],
    ['"x"', 'metadata__x_'],
    ["it's", 'metadata_it_s'],
    ['a[0]', 'metadata_a_0_'],
    ['a,b;c=d', 'metadata_a_b_c_d'],
    ['line\nbreak\ttab', 'metadata_line_break_tab'],
    ['zero\u200bwidth', 'metadata_zero_width'],
    ['🔥x', 'metadata__x'],
    ['\u2764\ufe0fx', 'metadata__x'],
  ])('%j becomes %s', (key, name) => {
    expect(metadataColumnName(key)).toBe(name);
  });
});

describe('Parquet columns named by Unicode metadata keys', () => {
  it('are written under those names and DuckDB reads each back equal to metadata[key]', async () => {
    const keys = ['ключ', '温度', 'तापमान', 'Température', 'a.b c', 'it\'s "x"'];
    const items = Array.from({ length: 50 }, (_, i) => ({
      id: i + 1,
      metadata: Object.fromEntries(keys.filter((_key, k) => (i + k) % 3 !== 0).map((key, k) => [key, `${key} ${i} ${k}`])),
      createdTime: Date.UTC(2024, 0, 1),
      lastUpdatedTime: Date.UTC(2024, 0, 2),
    }));
    const path = join(tempDir('bulk-extract-metadata-names-'), '000000.parquet');
    const writer = await ParquetShardWriter.create(
      path,
      { resource: 'events', metadataColumns: keys },
      { compression: 'zstd', rowGroupRows: 1000 },
      parquet,
    );
    await writer.append(items);
    await writer.commit();

    const names = (await suite.duck.rows(`DESCRIBE SELECT * FROM ${parquetAt(path)}`)).map((row) => String(row.column_name));
    const added = ['metadata_ключ', 'metadata_温度', 'metadata_तापमान', 'metadata_Température', 'metadata_a_b_c', 'metadata_it_s__x_'];
    expect(names.slice(-keys.length - 1)).toEqual([...added, 'extra']);
    for (const [k, key] of keys.entries()) {
      const literal = `'${key.replaceAll("'", "''")}'`;
      const row = await suite.duck.one(
        `SELECT count(*) FILTER (WHERE "${added[k]}" IS NOT DISTINCT FROM metadata[${literal}]) AS same, count("${added[k]}") AS set FROM ${parquetAt(path)}`,
      );
      expect(Number(row.same), added[k]).toBe(items.length);
      expect(Number(row.set), added[k]).toBe(items.filter((item) => key in item.metadata).length);
    }
  });
});
