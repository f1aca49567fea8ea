#!/usr/bin/env node
// CPU per gzip page of the client's body reader (src/http/read-body.ts), two builds side by side:
// this one (each page's bytes taken from a ByteBudget as they are decoded, within the estimate its
// path taught, as a chain's pages are) and another (--before
// DIR, a checkout with dist/ built). Pages are the simulator's own answers, gzipped at its level 1:
// a page of 1000 events (about 390 KB decoded) and one of 1000 instances (about 1 MB, two chunks).
// Each page is read 10 at a time, as partitions read them; rounds interleaved, CPU of the whole
// process (zlib's thread pool included) by process.cpuUsage, medians. Run it pinned:
//
//   taskset -c 1 node bench/tools/gzip-decode.js --before /tmp/base [--pages 2000] [--rounds 3]
import { resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { readBody } from '../../dist/http/read-body.js';
import { ByteBudget } from '../../dist/page/index.js';
import { startSimulator } from '../../dist/simulator/index.js';

const { values } = parseArgs({
  options: { before: { type: 'string' }, pages: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '3' } },
});
const pages = Number(values.pages);
const rounds = Number(values.rounds);
const KEY = 'gzip-decode-key-01';
const instances = { assets: 1000, activities: 0, timeseries: 0, edges: 0 };
const sim = await startSimulator({ seed: 3, apiKeys: [KEY], events: 1000, instances });
const headers = { 'api-key': KEY, 'content-type': 'application/json' };
async function answer(path, body) {
  const init = body === undefined ? { headers } : { method: 'POST', headers, body: JSON.stringify(body) };
  return Buffer.from(await (await fetch(`${sim.baseUrl}${path}`, init)).arrayBuffer());
}
const view = { type: 'view', space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };
const bodies = {
  'events page (1000)': await answer('/events?limit=1000'),
  'instances page (1000)': await answer('/models/instances/list', { instanceType: 'node', limit: 1000, sources: [{ source: view }] }),
};
await sim.close();

// As a chain reads its pages: each holds the estimate its path taught (the page's size) before it is
// read, its bytes taken as they come, then settled and released.
const budget = new ByteBudget(64 * 2 ** 20);
const builds = { after: async (body, ctx, limit) => {
  const hold = await budget.hold(ctx.path);
  try {
    const decoded = await readBody(body, { encoding: 'gzip', length: undefined }, limit, ctx, hold);
    hold.resize(decoded.length);
    return decoded;
  } finally {
    hold.release();
  }
} };
if (values.before !== undefined) {
  const { readBody: before } = await import(pathToFileURL(resolve(values.before, 'dist/http/read-body.js')).href);
  builds.before = (body, ctx, limit) => before(body, { encoding: 'gzip', length: undefined }, limit, ctx);
}

const LIMIT = { bytes: 256 * 2 ** 20, setting: 'source.maxResponseBytes' };
async function cpuMsPerPage(read, gzipped, decodedLength) {
  const ctx = { method: 'GET', path: `/${decodedLength}` };
  const start = process.cpuUsage();
  for (let done = 0; done < pages; done += 10) {
    const batch = Array.from({ length: 10 }, () => read(Readable.from([gzipped]), ctx, LIMIT));
    for (const decoded of await Promise.all(batch)) if (decoded.length !== decodedLength) throw new Error('decoded to another size');
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / pages;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`| Page | KB decoded | KB gzip | ${Object.keys(builds).map((b) => `${b} ms`).join(' | ')} |`);
console.log(`|---|---|---|${Object.keys(builds).map(() => '---').join('|')}|`);
for (const [name, decoded] of Object.entries(bodies)) {
  const gzipped = gzipSync(decoded, { level: 1 });
  for (const read of Object.values(builds)) await cpuMsPerPage(read, gzipped, decoded.length);
  const samples = Object.fromEntries(Object.keys(builds).map((b) => [b, []]));
  for (let r = 0; r < rounds; r++) {
    for (const [b, read] of Object.entries(builds)) samples[b].push(await cpuMsPerPage(read, gzipped, decoded.length));
  }
  const cells = Object.values(samples).map((xs) => median(xs).toFixed(3));
  console.log(`| ${name} | ${(decoded.length / 1000).toFixed(0)} | ${(gzipped.length / 1000).toFixed(0)} | ${cells.join(' | ')} |`);
}
