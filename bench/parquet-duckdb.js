#!/usr/bin/env node
// The DuckDB lever for Parquet, measured: what converting the NDJSON an export writes into Parquet
// with DuckDB costs, next to the export's own NDJSON and Parquet paths, in one run. Each round runs
// an NDJSON export and a Parquet export of the same events through the CLI, then converts the
// NDJSON shards with bench/tools/duckdb-convert.js (one thread, memory_limit 256MB) in two
// variants: `typed` (read_json with a column list, unknown fields dropped) and `extra` (the rest of
// each item kept as the `extra` column, as bulk-extract does). Every program runs in its own process
// under /usr/bin/time, pinned to core 1 (the simulator on core 0). Then the converted files are read
// back with DuckDB against the export's Parquet, value for value, and their Parquet types listed.
//
//   node bench/parquet-duckdb.js [--events 1000000] [--rounds 3]
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { CLI, machine, placement, ROOT, startSimulator, timed, writeJob } from './lib/harness.js';

const { values } = parseArgs({
  options: { events: { type: 'string', default: '1000000' }, rounds: { type: 'string', default: '3' } },
});
const events = Number(values.events);
const rounds = Number(values.rounds);
const partitions = 10;
/** One shard per partition: the conversion reads whole partitions, as a commit would read a shard. */
const shard = { maxRows: 1_000_000, maxBytes: '4GiB' };

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const files = (dir, ext) =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith(ext)).map((name) => join(dir, name));

/** Runs an export into a kept folder; the caller removes it. */
async function exportTo(sim, formats) {
  const job = writeJob(sim, { partitions, formats, extra: { output: { shard } } });
  const result = await timed([CLI, 'run', '--config', job.file, '--log-level', 'warn'], {
    env: { BENCH_SECRET: 'demo-secret' },
    sim,
  });
  return { ...result, job };
}

async function convert(variant, ndjson) {
  const out = mkdtempSync(join(tmpdir(), `bench-duckdb-${variant}-`));
  const result = await timed([join(ROOT, 'bench/tools/duckdb-convert.js'), variant, out, ...ndjson]);
  const { rows, bytes } = JSON.parse(result.stdout.trim().split('\n').at(-1));
  if (rows !== events) throw new Error(`${variant}: ${rows} rows converted, expected ${events}`);
  return { ...result, bytes, out };
}

/** Rows of `a` not in `b` and of `b` not in `a` (timestamps compared as instants), and the converted file's types. */
async function compare(exported, converted) {
  const db = await DuckDBInstance.create(':memory:');
  const connection = await db.connect();
  const rows = async (sql) => (await connection.runAndReadAll(sql)).getRowObjectsJson();
  const a = `(SELECT * EXCLUDE (part) FROM read_parquet('${exported}/events/*/*.parquet'))`;
  const b = `(SELECT * FROM read_parquet('${converted}/*.parquet'))`;
  const [onlyA] = await rows(`SELECT count(*) AS n FROM (SELECT * FROM ${a} EXCEPT ALL SELECT * FROM ${b})`);
  const [onlyB] = await rows(`SELECT count(*) AS n FROM (SELECT * FROM ${b} EXCEPT ALL SELECT * FROM ${a})`);
  const [file] = files(converted, '.parquet');
  const types = await rows(
    `SELECT name, logical_type FROM parquet_schema('${file}') WHERE name IN ('startTime', 'extra')`,
  );
  return { onlyExported: Number(onlyA?.n), onlyConverted: Number(onlyB?.n), types };
}

const sim = await startSimulator({ events });
const samples = { ndjson: [], parquet: [], typed: [], extra: [] };
const sizes = {};
let check;
try {
  for (let round = 0; round < rounds; round++) {
    const ndjson = await exportTo(sim, ['ndjson']);
    const parquet = await exportTo(sim, ['parquet']);
    samples.ndjson.push(ndjson);
    samples.parquet.push(parquet);
    const ndjsonFiles = files(ndjson.job.out, '.ndjson');
    for (const variant of ['typed', 'extra']) {
      const result = await convert(variant, ndjsonFiles);
      samples[variant].push(result);
      sizes[variant] = result.bytes;
      if (variant === 'extra' && round === rounds - 1) check = await compare(parquet.job.out, result.out);
      rmSync(result.out, { recursive: true, force: true });
    }
    sizes.parquet = files(parquet.job.out, '.parquet').reduce((sum, f) => sum + statSync(f).size, 0);
    for (const run of [ndjson, parquet]) run.job.cleanup();
    console.log(
      `round ${round + 1}: ndjson ${ndjson.cpuS.toFixed(2)} CPU s, parquet ${parquet.cpuS.toFixed(2)}, ` +
      `typed ${samples.typed.at(-1).cpuS.toFixed(2)}, extra ${samples.extra.at(-1).cpuS.toFixed(2)}`,
    );
  }
} finally {
  await sim.stop();
}

const perMillion = (s) => (s * 1_000_000) / events;
const row = (name, list, bytes) => {
  const cpu = perMillion(median(list.map((r) => r.cpuS)));
  const rss = median(list.map((r) => r.peakRssMB));
  const wall = median(list.map((r) => r.wallS));
  return { name, cpu, rss, wall, bytes };
};
const table = [
  row('export to NDJSON', samples.ndjson),
  row('export to Parquet (today)', samples.parquet, sizes.parquet),
  row('DuckDB: NDJSON to Parquet, typed columns only', samples.typed, sizes.typed),
  row('DuckDB: NDJSON to Parquet, with extra', samples.extra, sizes.extra),
];
const ndjsonCpu = table[0].cpu;
console.log(`\n${events.toLocaleString('en-US')} events, n = ${partitions}, ${rounds} rounds (medians), ${placement()}; ${machine()}\n`);
console.log('| Program | CPU s per 1M rows | x NDJSON export | Peak RSS MB | Wall s | Parquet MB |');
console.log('|---|---|---|---|---|---|');
for (const r of table) {
  const mb = r.bytes === undefined ? '' : (r.bytes / 1024 / 1024).toFixed(1);
  console.log(`| ${r.name} | ${r.cpu.toFixed(2)} | ${(r.cpu / ndjsonCpu).toFixed(2)}x | ${r.rss.toFixed(0)} | ${r.wall.toFixed(2)} | ${mb} |`);
}
const withExtra = ndjsonCpu + table[3].cpu;
console.log(`\nNDJSON export + conversion with extra: ${withExtra.toFixed(2)} CPU s (${(withExtra / ndjsonCpu).toFixed(2)}x the NDJSON export, ${(withExtra / table[1].cpu).toFixed(2)}x today's Parquet export)`);
console.log(`read back: ${check.onlyExported} rows only in the export's Parquet, ${check.onlyConverted} only in the converted; types: ${JSON.stringify(check.types)}`);
