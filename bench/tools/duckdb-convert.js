#!/usr/bin/env node
// One candidate of the DuckDB lever (bench/parquet-duckdb.js): converts the events NDJSON shards
// an export wrote into Parquet with DuckDB, one file after the other, in one thread and under a
// memory limit, as a conversion at each shard's commit would. Run under /usr/bin/time by the
// benchmark; prints one JSON line: files, rows and bytes written.
//
//   node bench/tools/duckdb-convert.js <typed|extra> <out dir> <file.ndjson>...
import { statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

/** The events columns with the Parquet types bulk-extract writes (src/resources/events.ts). */
const COLUMNS = {
  id: 'BIGINT',
  externalId: 'VARCHAR',
  type: 'VARCHAR',
  subtype: 'VARCHAR',
  description: 'VARCHAR',
  startTime: 'BIGINT',
  endTime: 'BIGINT',
  assetIds: 'BIGINT[]',
  source: 'VARCHAR',
  dataSetId: 'BIGINT',
  metadata: 'MAP(VARCHAR, VARCHAR)',
  createdTime: 'BIGINT',
  lastUpdatedTime: 'BIGINT',
};
const TIMES = ['startTime', 'endTime', 'createdTime', 'lastUpdatedTime'];

/**
 * The SELECT of a candidate. `typed`: read_json with the column list (unknown fields dropped).
 * `extra`: each line read once as JSON, the known fields taken out of it, the rest kept as the
 * `extra` column (a JSON merge patch that sets every known key to null removes them), as
 * bulk-extract keeps unknown fields.
 */
function select(variant, file) {
  // TIMESTAMPTZ is written as TIMESTAMP(MICROS, UTC); TIMESTAMP_MS as TIMESTAMP(MILLIS) not adjusted to UTC.
  const time = (name) => `make_timestamptz(${name} * 1000) AS ${name}`;
  if (variant === 'typed') {
    const columns = Object.entries(COLUMNS).map(([name, type]) => `${name}: '${type}'`).join(', ');
    const list = Object.keys(COLUMNS).map((name) => (TIMES.includes(name) ? time(name) : name)).join(', ');
    return `SELECT ${list} FROM read_json('${file}', format = 'newline_delimited', columns = {${columns}})`;
  }
  const known = JSON.stringify(Object.fromEntries(Object.keys(COLUMNS).map((name) => [name, null])));
  const fields = Object.entries(COLUMNS).map(([name, type]) => {
    // ->> gives a string's text; -> gives JSON, which casts to numbers, lists and maps.
    const value = type === 'VARCHAR' ? `(json ->> '$.${name}')` : `CAST(json -> '$.${name}' AS ${type})`;
    return TIMES.includes(name) ? `make_timestamptz(${value} * 1000) AS ${name}` : `${value} AS ${name}`;
  });
  const rest = `json_merge_patch(json, '${known}')`;
  fields.push(`CASE WHEN ${rest} = '{}' THEN NULL ELSE ${rest}::VARCHAR END AS extra`);
  return `SELECT ${fields.join(', ')} FROM read_ndjson_objects('${file}')`;
}

const [variant, outDir, ...files] = process.argv.slice(2);
if (!['typed', 'extra'].includes(variant ?? '') || outDir === undefined || files.length === 0) {
  console.error('usage: duckdb-convert.js <typed|extra> <out dir> <file.ndjson>...');
  process.exit(2);
}
const db = await DuckDBInstance.create(':memory:', { threads: '1', memory_limit: '256MB', preserve_insertion_order: 'true' });
const connection = await db.connect();
let rows = 0;
let bytes = 0;
for (const file of files) {
  const out = join(outDir, `${basename(dirname(file))}-${basename(file, '.ndjson')}.parquet`);
  const copy = `COPY (${select(variant, file)}) TO '${out}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 100000)`;
  const result = await connection.runAndReadAll(copy);
  rows += Number(result.getRows()[0]?.[0] ?? 0);
  bytes += statSync(out).size;
}
console.log(JSON.stringify({ files: files.length, rows, bytes }));
