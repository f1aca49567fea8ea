#!/usr/bin/env node
// Are two exports' Parquet files the same data? Reads the .parquet files under each folder with
// DuckDB and prints, as JSON:
// rows and bytes of each, rows of each that the other lacks (EXCEPT ALL, both ways: 0 and 0 means
// the same rows, value for value, duplicates counted), and whether the Parquet schemas (column
// names, physical, logical and DuckDB types) are equal.
//
//   node bench/tools/compare-parquet.js before/events after/events
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

const [a, b] = process.argv.slice(2);
if (a === undefined || b === undefined) {
  console.error('Give two folders of Parquet files.');
  process.exit(2);
}
const connection = await (await DuckDBInstance.create(':memory:')).connect();
const rows = async (sql) => (await connection.runAndReadAll(sql)).getRowObjectsJson();
const quoted = (text) => `'${text.replaceAll("'", "''")}'`;
/** The .parquet files under a folder, in name order. */
const files = (dir) =>
  readdirSync(dir, { recursive: true })
    .filter((name) => String(name).endsWith('.parquet'))
    .map((name) => join(dir, String(name)))
    .sort();
const count = async (sql) => Number((await rows(`SELECT count(*) AS n FROM (${sql})`))[0].n);
const schema = async (dir) => {
  const first = files(dir)[0] ?? '';
  return JSON.stringify(
    await rows(`SELECT name, type, converted_type, logical_type, duckdb_type FROM parquet_schema(${quoted(first)})`),
  );
};
const bytes = (dir) => files(dir).reduce((sum, file) => sum + statSync(file).size, 0);
const table = (dir) => `read_parquet([${files(dir).map(quoted).join(', ')}])`;

console.log(
  JSON.stringify({
    rows: [await count(`SELECT * FROM ${table(a)}`), await count(`SELECT * FROM ${table(b)}`)],
    megabytes: [bytes(a) / 1e6, bytes(b) / 1e6].map((mb) => Number(mb.toFixed(2))),
    onlyInFirst: await count(`SELECT * FROM ${table(a)} EXCEPT ALL SELECT * FROM ${table(b)}`),
    onlyInSecond: await count(`SELECT * FROM ${table(b)} EXCEPT ALL SELECT * FROM ${table(a)}`),
    sameSchema: (await schema(a)) === (await schema(b)),
  }),
);
