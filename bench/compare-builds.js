#!/usr/bin/env node
// Compares builds of bulk-extract lever by lever: each build's CLI exports the same simulator's
// data to NDJSON and to Parquet, builds interleaved round after round so that every build sees
// the same machine conditions. Reports the median over rounds of wall time, CPU (user + sys) per
// million rows and peak RSS, each round's CPU and peak RSS, and the medians' ratios to the first
// build's. A build is a checkout with dist/ built, e.g. a git worktree:
//
//   git worktree add /tmp/wt-abc abc && ln -s "$PWD/node_modules" /tmp/wt-abc/node_modules \
//     && (cd /tmp/wt-abc && npx tsc -p tsconfig.build.json)
//   node bench/compare-builds.js --build before=/tmp/wt-abc --build after=. [--events 1000000] [--rounds 2]
//
// --kind chooses what is exported (the simulator is always this checkout's):
//   events       the default: --events events in --partitions partitions;
//   datapoints   the datapoints scenario's job (bench/scenarios/datapoints.js): raw points of
//                --series series, --points points in all (the Good ones in its window are the rows),
//                --partitions partitions, source.concurrency --concurrency;
//   instances    the instances scenario's job (bench/scenarios/instances.js): --instances nodes of
//                cdf_cdm:CogniteAsset/v1 in 3 spaces, `split: space`, concurrency 3.
//
//   node bench/compare-builds.js --build before=/tmp/wt-abc --build after=. --kind datapoints \
//     [--points 10000000] [--series 1000] [--concurrency 10] [--rounds 3]
//   node bench/compare-builds.js --build before=/tmp/wt-abc --build after=. --kind instances \
//     [--instances 1000000] [--rounds 3]
//
// --budget SIZE (e.g. 512MiB) sets every export's source.maxBufferedBytes (default: the job's
// default, which follows source.concurrency). 10M datapoints need 512MiB today: at the default the
// export mostly stops with exit code 13 (bench/RESULTS.md, issue 45).
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
import { fmt, machine, median, placement, runExport, table, withSimulator } from './lib/harness.js';
import { dataSetFacts, pointsJob, WINDOW } from './scenarios/datapoints.js';
import { instancesJob, nodesOnly, SPACES, VIEW } from './scenarios/instances.js';

const { values } = parseArgs({
  options: {
    build: { type: 'string', multiple: true, default: [] },
    node: { type: 'string', multiple: true, default: [] },
    table: { type: 'string', multiple: true, default: [] },
    formats: { type: 'string', default: 'ndjson,parquet' },
    kind: { type: 'string', default: 'events' },
    events: { type: 'string', default: '1000000' },
    points: { type: 'string', default: '10000000' },
    series: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '10' },
    instances: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '2' },
    partitions: { type: 'string', default: '10' },
    budget: { type: 'string' },
  },
});
const maxBufferedBytes = values.budget;
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
const partitions = Number(values.partitions);
const formats = values.formats.split(',');

/**
 * What --kind exports: the simulator's options, the job of one format (runExport's first argument),
 * the rows every export must hold, and the report's words for them.
 */
function kindOf(name) {
  if (name === 'events') {
    const events = Number(values.events);
    return {
      simulator: { events },
      job: (format) => ({ partitions, formats: [format] }),
      rows: events,
      what: `${fmt.int(events)} events, n = ${partitions}`,
    };
  }
  if (name === 'datapoints') {
    const points = Number(values.points);
    const series = Number(values.series);
    const concurrency = Number(values.concurrency);
    const simulator = { events: 1000, timeseries: series, datapoints: points, startTime: WINDOW.end };
    const { points: rows } = dataSetFacts(simulator);
    const end = new Date(WINDOW.end).toISOString().slice(0, 10);
    return {
      simulator,
      job: (format) => pointsJob({ partitions, concurrency, format }),
      rows,
      what: `${fmt.int(rows)} raw points (the Good ones of ${fmt.int(points)}, window [0, ${end})) in ` +
        `${fmt.int(series)} series, n = ${partitions}, concurrency ${concurrency}`,
    };
  }
  if (name === 'instances') {
    const instances = Number(values.instances);
    return {
      simulator: { events: 1000, instances: nodesOnly(instances) },
      job: (format) => instancesJob({ format }),
      rows: instances,
      what: `${fmt.int(instances)} nodes of ${VIEW.space}:${VIEW.externalId}/${VIEW.version} in ${SPACES.length} ` +
        `spaces, split: space, concurrency ${SPACES.length}`,
    };
  }
  console.error(`Unknown --kind ${name}; choose events, datapoints or instances.`);
  process.exit(2);
}
const kind = kindOf(values.kind);

const samples = new Map();
await withSimulator(kind.simulator, async (sim) => {
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const build of builds) {
      for (const format of formats) {
        const { cli, node, table: tableKind } = build;
        const job = kind.job(format);
        if (tableKind !== undefined) job.extra = { ...job.extra, output: { ...job.extra?.output, table: tableKind } };
        if (maxBufferedBytes !== undefined) {
          job.extra = { ...job.extra, source: { ...job.extra?.source, maxBufferedBytes } };
        }
        const result = await runExport(sim, job, { expectRows: kind.rows, cli, node });
        const key = `${build.name}/${format}`;
        samples.set(key, [...(samples.get(key) ?? []), result]);
        console.error(`${key}: ${result.wallS} s, ${result.cpuS.toFixed(2)} CPU s, ${Math.round(result.peakRssMB)} MB`);
      }
    }
  }
});

const cpuPerM = (r) => (r.cpuS / kind.rows) * 1e6;
const medians = (runs) => ({
  wallS: median(runs.map((r) => r.wallS)),
  cpuPerM: median(runs.map(cpuPerM)),
  rssMB: median(runs.map((r) => r.peakRssMB)),
});
const rows = [];
for (const format of formats) {
  const first = medians(samples.get(`${builds[0].name}/${format}`));
  for (const build of builds) {
    const runs = samples.get(`${build.name}/${format}`);
    const m = medians(runs);
    rows.push([
      format,
      build.name,
      fmt.n(m.wallS),
      fmt.n(m.cpuPerM),
      fmt.int(m.rssMB),
      `${fmt.ratio(m.wallS / first.wallS)} / ${fmt.ratio(m.cpuPerM / first.cpuPerM)} / ${fmt.ratio(m.rssMB / first.rssMB)}`,
      runs.map((r) => `${fmt.n(cpuPerM(r))}/${fmt.int(r.peakRssMB)}`).join(', '),
    ]);
  }
}
const runsOn = builds.map((build) => `${build.name} on ${spawnSync(build.node, ['--version'], { encoding: 'utf8' }).stdout.trim()}`).join(', ');
const budget = maxBufferedBytes === undefined ? '' : `, source.maxBufferedBytes ${maxBufferedBytes}`;
console.log(`${kind.what}${budget}, no added latency, ${values.rounds} rounds (medians), ${placement()}; ${machine()}; ${runsOn}\n`);
const headers = ['Format', 'Build', 'Wall s', 'CPU s per 1M rows', 'Peak RSS MB'];
headers.push(`Wall / CPU / RSS vs ${builds[0].name}`, 'Rounds: CPU s per 1M rows / peak RSS MB');
console.log(table(headers, rows));
