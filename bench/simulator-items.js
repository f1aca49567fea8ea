#!/usr/bin/env node
// Items per second the simulator's data sets generate and serialize (JSON), one thread, in process:
// two builds interleaved (medians of 5 rounds) for assets and events, and each other collection
// once. Pin it to a core (taskset -c 1) for steadier figures.
//
//   node bench/simulator-items.js --before DIR --after DIR [--items 300000]
//
// DIR is a checkout with a built dist/ (npm run build).
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { before: { type: 'string' }, after: { type: 'string', default: '.' }, items: { type: 'string', default: '300000' } },
});
if (values.before === undefined) {
  console.error('simulator-items: give --before DIR (a checkout with dist/ built)');
  process.exit(2);
}
const load = (dir) => import(pathToFileURL(resolve(dir, 'dist/simulator/index.js')).href);
const [before, after] = await Promise.all([load(values.before), load(values.after)]);
const N = Number(values.items);

/** Items per second for one collection of a build's data set. */
function rate(mod, resource, sizes) {
  const set = mod.createDataset({ seed: 1, assets: 10_000, events: 0, ...sizes })[resource];
  const rounds = Math.max(1, Math.round(N / set.count));
  let bytes = 0;
  const started = performance.now();
  for (let r = 0; r < rounds; r++) for (let i = 0; i < set.count; i++) bytes += JSON.stringify(set.item(i)).length;
  const items = rounds * set.count;
  return { perSecond: items / ((performance.now() - started) / 1000), bytesPerItem: bytes / items };
}

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
for (const resource of ['events', 'assets']) {
  const sizes = resource === 'events' ? { events: N } : {};
  const runs = { before: [], after: [] };
  for (let round = 0; round < 5; round++) {
    runs.before.push(rate(before, resource, sizes).perSecond);
    runs.after.push(rate(after, resource, sizes).perSecond);
  }
  const [b, a] = [median(runs.before), median(runs.after)];
  console.log(`${resource.padEnd(14)} before ${Math.round(b)} items/s, after ${Math.round(a)} items/s, after/before ${(a / b).toFixed(2)}`);
}
for (const resource of ['timeseries', 'files', 'sequences', 'relationships']) {
  const { perSecond, bytesPerItem } = rate(after, resource, { [resource]: N });
  console.log(`${resource.padEnd(14)} after  ${Math.round(perSecond)} items/s, ${Math.round(bytesPerItem)} bytes of JSON per item`);
}
