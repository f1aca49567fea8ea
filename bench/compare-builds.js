#!/usr/bin/env node
// Compares builds of bulk-extract lever by lever: each build's CLI exports the same simulator's
// events to NDJSON and to Parquet, builds interleaved round after round so that every build sees
// the same machine conditions. Reports the median over rounds of wall time, CPU (user + sys) per
// million rows and peak RSS. A build is a checkout with dist/ built, e.g. a git worktree:
//
//   git worktree add /tmp/wt-abc abc && ln -s "$PWD/node_modules" /tmp/wt-abc/node_modules \
//     && (cd /tmp/wt-abc && npx tsc -p tsconfig.build.json)
//   node bench/compare-builds.js --build before=/tmp/wt-abc --build after=. [--events 1000000] [--rounds 2]
//
// One build on two Nodes: name it twice and give one name another Node with --node NAME=PATH
// (default: the Node that runs this script); --formats ndjson leaves out Parquet:
//
//   node bench/compare-builds.js --build node20=/tmp/wt-abc --build node24=/tmp/wt-abc \
//     --node node20=/usr/bin/node --node node24=node_modules/.bin/node --formats ndjson --rounds 3
//
// One build writing files and Delta tables: name it twice and give one name --table NAME=delta
// (Parquet only):
//
//   node bench/compare-builds.js --build files=. --build delta=. --table delta=delta --formats parquet --rounds 3
//
// With 2 or more cores the simulator and the exports get a core each (bench/lib/harness.js;
// BENCH_NO_PIN=1 to share them).
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fmt, machine, placement, runExport, table, withSimulator } from './lib/harness.js';

const { values } = parseArgs({
  options: {
    build: { type: 'string', multiple: true, default: [] },
    node: { type: 'string', multiple: true, default: [] },
    table: { type: 'string', multiple: true, default: [] },
    formats: { type: 'string', default: 'ndjson,parquet' },
    events: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '2' },
    partitions: { type: 'string', default: '10' },
  },
});
const nodes = new Map(values.node.map((spec) => [spec.slice(0, spec.indexOf('=')), resolve(spec.slice(spec.indexOf('=') + 1))]));
const tables = new Map(values.table.map((spec) => spec.split('=')));
const builds = values.build.map((spec) => {
  const [name, dir] = spec.includes('=') ? spec.split('=') : [spec, spec];
  const cli = join(resolve(dir), 'bin', 'bulk-extract.js');
  return { name, cli, node: nodes.get(name) ?? process.execPath, table: tables.get(name) };
});
if (builds.length === 0) {
  console.error('Give at least one --build NAME=DIR.');
  process.exit(2);
}
const events = Number(values.events);
const partitions = Number(values.partitions);
const formats = values.formats.split(',');

const samples = new Map();
await withSimulator({ events }, async (sim) => {
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const build of builds) {
      for (const format of formats) {
        const { cli, node, table: kind } = build;
        const extra = kind === undefined ? {} : { output: { table: kind } };
        const job = { partitions, formats: [format], extra };
        const result = await runExport(sim, job, { expectRows: events, cli, node });
        const key = `${build.name}/${format}`;
        samples.set(key, [...(samples.get(key) ?? []), result]);
        console.error(`${key}: ${result.wallS} s, ${result.cpuS.toFixed(2)} CPU s, ${Math.round(result.peakRssMB)} MB`);
      }
    }
  }
});

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const rows = [];
for (const format of formats) {
  for (const build of builds) {
    const runs = samples.get(`${build.name}/${format}`);
    rows.push([
      format,
      build.name,
      fmt.n(median(runs.map((r) => r.wallS))),
      fmt.n(median(runs.map((r) => (r.cpuS / events) * 1e6))),
      fmt.int(median(runs.map((r) => r.peakRssMB))),
    ]);
  }
}
const runsOn = builds.map((build) => `${build.name} on ${spawnSync(build.node, ['--version'], { encoding: 'utf8' }).stdout.trim()}`).join(', ');
console.log(`${fmt.int(events)} events, n = ${partitions}, no added latency, ${values.rounds} rounds (medians), ${placement()}; ${machine()}; ${runsOn}\n`);
console.log(table(['Format', 'Build', 'Wall s', 'CPU s per 1M rows', 'Peak RSS MB'], rows));
