#!/usr/bin/env node
// What the checkpoint's digest costs: a checkpoint is written after every shard commit, and read
// once when a run starts. For datapoints checkpoints of P partitions with S series in flight each
// (ids of 13 digits, `after` timestamps), the fastest of N rounds of: the file's text without a
// digest (JSON.stringify, as before the digest), the text the committer writes (checkpointText:
// JSON.stringify plus the digest), the digest alone (canonicalJson and SHA-256), and reading the
// file back (JSON.parse, and parseCheckpoint: schema, digest and what bulk-extract never writes).
// Fastest, not median: the machine is shared, and a round only ever gets slower by it.
//
//   npm run build && taskset -c 1 node bench/tools/checkpoint-digest.js [--rounds 50]
import { parseArgs } from 'node:util';
import { checkpointText, commitPart, newCheckpoint, parseCheckpoint } from '../../dist/export/state/checkpoint.js';
import { canonicalJson, digestOf } from '../../dist/export/state/state-digest.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '50' } } });
const ROUNDS = Number(values.rounds);
const T0 = '2026-01-01T00:00:00.000Z';

function checkpointOf(partitions, series) {
  const plan = {
    name: 'points',
    resource: 'datapoints',
    params: [['limit', '1000']],
    partitions,
    formats: ['parquet', 'ndjson'],
    mode: 'full',
    safetyLagMs: 0,
    updatedBetween: {},
    points: { start: { at: 0 }, options: {} },
  };
  let checkpoint = newCheckpoint('https://acme.example.com/api/v1/projects/acme', [plan], T0);
  for (let m = 1; m <= partitions; m++) {
    const inFlight = Array.from({ length: series }, (_, i) => ({
      id: 4_000_000_000_000 + m * 100_000 + i,
      after: 1_700_000_000_000 + i,
    }));
    const points = { listing: 'Y3Vyc29yLW9mLXRoZS1saXN0aW5n', listed: false, series: inFlight, unknown: [] };
    checkpoint = commitPart(checkpoint, 'points', m, { cursor: undefined, rows: 1_234_567, shards: 1, points }, T0);
  }
  return checkpoint;
}

function fastest(task) {
  let best = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now();
    task();
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

const ms = (value) => value.toFixed(2).padStart(7);
console.log('| Partitions x series in flight | File KiB | JSON.stringify ms | checkpointText ms | digest ms | canonical JSON ms | JSON.parse ms | parseCheckpoint ms |');
console.log('|---|---|---|---|---|---|---|---|');
for (const [partitions, series] of [[10, 100], [10, 1000], [1, 5000], [10, 5000]]) {
  const checkpoint = checkpointOf(partitions, series);
  const text = checkpointText(checkpoint);
  const figures = [
    fastest(() => `${JSON.stringify(checkpoint, null, 2)}\n`),
    fastest(() => checkpointText(checkpoint)),
    fastest(() => digestOf(checkpoint)),
    fastest(() => canonicalJson(checkpoint)),
    fastest(() => JSON.parse(text)),
    fastest(() => parseCheckpoint(text, '_checkpoint.json')),
  ];
  console.log(`| ${partitions} x ${series} | ${Math.round(text.length / 1024)} | ${figures.map(ms).join(' | ')} |`);
}
