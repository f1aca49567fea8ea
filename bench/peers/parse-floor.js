#!/usr/bin/env node
// The CPU floor of the benchmark suite: what it costs to turn the page bodies of an export into
// objects and nothing more, the way src/http/platform-client.ts does (body.toString('utf8') then
// JSON.parse). The bodies come from `bench/peers/raw-drain.js --save-bodies FILE` and are read
// into memory before the clock starts; only the parse loop is measured, with process.cpuUsage()
// (user + sys of the whole process). The loop runs twice: the first pass includes JIT warm-up
// and heap growth, the second (warm) pass is the steady state.
//
//   node bench/peers/parse-floor.js FILE
//
// Prints one JSON line on stdout:
// {rows, bodies, bytes, cpuS, cpuSPerMillionRows, warmCpuS, warmCpuSPerMillionRows}.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { positionals } = parseArgs({ allowPositionals: true });
if (positionals.length !== 1) {
  console.error('usage: node bench/peers/parse-floor.js FILE (bodies saved by raw-drain.js --save-bodies)');
  process.exit(1);
}

/** Splits the file into its records: a 4-byte big-endian length, then that many bytes. */
function readBodies(file) {
  const data = readFileSync(file);
  const bodies = [];
  for (let at = 0; at < data.length;) {
    const length = data.readUInt32BE(at);
    bodies.push(data.subarray(at + 4, at + 4 + length));
    at += 4 + length;
  }
  return bodies;
}

/** Parses every body; returns the items seen (which keeps the results alive) and the CPU seconds. */
function parseAll(bodies) {
  const before = process.cpuUsage();
  let rows = 0;
  for (const body of bodies) rows += JSON.parse(body.toString('utf8')).items.length;
  const used = process.cpuUsage(before);
  return { rows, cpuS: (used.user + used.system) / 1e6 };
}

const bodies = readBodies(positionals[0]);
const cold = parseAll(bodies);
const warm = parseAll(bodies);
const perMillion = (cpuS) => Number((cpuS / cold.rows * 1e6).toFixed(3));
console.log(
  JSON.stringify({
    rows: cold.rows,
    bodies: bodies.length,
    bytes: bodies.reduce((total, body) => total + body.length, 0),
    cpuS: Number(cold.cpuS.toFixed(3)),
    cpuSPerMillionRows: perMillion(cold.cpuS),
    warmCpuS: Number(warm.cpuS.toFixed(3)),
    warmCpuSPerMillionRows: perMillion(warm.cpuS),
  }),
);
