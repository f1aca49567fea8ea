#!/usr/bin/env node
// What the byte checks of answers (nesting past 256 levels, numbers past a double's range) cost:
// the standalone pass (findJsonProblem, run before a parse) against the scans that read the same
// bytes (scanPage, the datapoints answer's scan), of this build and of another one (--before DIR, a
// checkout built without the checks), and against JSON.parse. Real answers of the simulator (pages
// of 1000 events, time series and instances, a datapoints answer of 10 series), each read many
// times, rounds interleaved, CPU by process.cpuUsage, medians.
//
//   taskset -c 1 node bench/tools/answer-check.js [--rounds 3] [--before /tmp/base]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { scanPage } from '../../dist/page/index.js';
import { readScannedAnswer } from '../../dist/export/kinds/datapoints/points-scan.js';
import { startSimulator } from '../../dist/simulator/index.js';
import { findJsonProblem } from '../../dist/util/json-limits.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, before: { type: 'string' } } });
const rounds = Number(values.rounds);
const fromBefore = async (file) => import(pathToFileURL(resolve(values.before, 'dist', file)).href);
const before = values.before === undefined
  ? undefined
  : {
      scanPage: (await fromBefore('page/index.js')).scanPage,
      // Where the build has it: export/kinds/datapoints/ since the stream kinds, export/run/ before.
      readScannedAnswer: (
        await fromBefore('export/kinds/datapoints/points-scan.js').catch(() => fromBefore('export/run/points-scan.js'))
      ).readScannedAnswer,
    };
const KEY = 'answer-check-key';
const sim = await startSimulator({
  seed: 7,
  apiKeys: [KEY],
  events: 1000,
  timeseries: 1000,
  datapoints: 10_000_000,
  instances: { assets: 1000, activities: 0, timeseries: 0, edges: 0 },
});
const POINTS = 'datapoints (10 series)';
const headers = { 'api-key': KEY, 'content-type': 'application/json' };
async function answer(path, body) {
  const init = body === undefined ? { headers } : { method: 'POST', headers, body: JSON.stringify(body) };
  return Buffer.from(await (await fetch(`${sim.baseUrl}${path}`, init)).arrayBuffer());
}
const series = JSON.parse((await answer('/timeseries?limit=10')).toString()).items.map((s) => ({ id: s.id, start: 0, end: Date.UTC(2030, 0, 1), limit: 10_000 }));
const queries = series.map(({ id, start, end, limit }) => ({ ref: { id }, start, end, limit, last: null }));
const CTX = { method: 'POST', path: '/timeseries/data/list' };
const view = { type: 'view', space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };
const answers = {
  'events page (1000)': await answer('/events?limit=1000'),
  'time series page (1000)': await answer('/timeseries?limit=1000'),
  'instances page (1000)': await answer('/models/instances/list', { instanceType: 'node', limit: 1000, sources: [{ source: view }] }),
  [POINTS]: await answer('/timeseries/data/list', { items: series }),
};
await sim.close();

const scanOf = (build) => (b, name) =>
  (name === POINTS ? build.readScannedAnswer(b, queries, undefined, CTX) : build.scanPage(b));
const ways = {
  'check': (b) => findJsonProblem(b),
  'scan': scanOf({ scanPage, readScannedAnswer }),
  ...(before === undefined ? {} : { 'scan before': scanOf(before) }),
  'JSON.parse': (b) => JSON.parse(b.toString('utf8')),
};

function cpuMs(fn, bytes, times, name) {
  const start = process.cpuUsage();
  for (let k = 0; k < times; k++) fn(bytes, name);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`| Answer | MB | ${Object.keys(ways).map((w) => `${w} µs`).join(' | ')} | check / scan | check / JSON.parse |`);
console.log(`|---|---|${Object.keys(ways).map(() => '---').join('|')}|---|---|`);
for (const [name, bytes] of Object.entries(answers)) {
  const times = Math.max(20, Math.round(200e6 / bytes.length));
  for (const fn of Object.values(ways)) cpuMs(fn, bytes, Math.ceil(times / 10), name);
  const samples = Object.fromEntries(Object.keys(ways).map((w) => [w, []]));
  for (let r = 0; r < rounds; r++) {
    for (const [w, fn] of Object.entries(ways)) samples[w].push((cpuMs(fn, bytes, times, name) * 1000) / times);
  }
  const us = Object.fromEntries(Object.entries(samples).map(([w, xs]) => [w, median(xs)]));
  const cells = Object.values(us).map((x) => x.toFixed(0));
  const ratios = [us.check / us.scan, us.check / us['JSON.parse']].map((x) => x.toFixed(2));
  console.log(`| ${name} | ${(bytes.length / 1e6).toFixed(2)} | ${cells.join(' | ')} | ${ratios.join(' | ')} |`);
}
