#!/usr/bin/env node
// InstanceWalk measured on its own: the CPU of InstanceRowBuilder filling its Arrow columns from
// scanned pages of CogniteAsset nodes, the walk on (instances read from their bytes) and forced off
// (each instance parsed, as before), in one process, rounds interleaved (process.cpuUsage, medians),
// batches of SPILL_ROWS rows as the Parquet writer makes them. The pages come from the simulator
// (in process, fetched over loopback, scanned as the export scans them); neither the fetch nor the
// scan is timed. Afterwards (not timed) the batches of both ways are compared buffer for buffer.
//
//   npm run build && node bench/tools/instance-walk.js [--nodes 100000] [--rounds 5]
import { parseArgs } from 'node:util';
import { Table, tableToIPC } from 'apache-arrow';
import { PageItems, scanPage } from '../../dist/page/index.js';
import { instanceColumns } from '../../dist/resources/index.js';
import { InstanceRowBuilder } from '../../dist/sink/instances/instance-rows.js';
import { SPILL_ROWS } from '../../dist/sink/parquet/parquet-writer.js';
import { startSimulator } from '../../dist/simulator/index.js';

const { values } = parseArgs({
  options: { nodes: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '5' } },
});
const KEY = 'instance-walk-bench-key';
const VIEW = { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };

const sim = await startSimulator({
  seed: 29,
  apiKeys: [KEY],
  instances: { assets: Number(values.nodes), activities: 10, timeseries: 10, edges: 10 },
});
const post = async (path, body) => {
  const headers = { 'api-key': KEY, 'content-type': 'application/json' };
  const response = await fetch(`${sim.baseUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${path} answered ${response.status}`);
  return Buffer.from(await response.arrayBuffer());
};
const byIds = await post('/models/views/byids', { items: [VIEW], includeInheritedProperties: true });
const { columns } = instanceColumns(JSON.parse(byIds.toString()).items[0], 'node');
const pages = [];
let cursor;
do {
  const body = await post('/models/instances/list', {
    instanceType: 'node',
    sources: [{ source: { type: 'view', ...VIEW } }],
    limit: 1000,
    ...(cursor === undefined ? {} : { cursor }),
  });
  const scan = scanPage(body);
  pages.push(PageItems.scanned(body, scan));
  cursor = scan.nextCursor;
} while (cursor !== undefined);
await sim.close();
const rows = pages.reduce((sum, page) => sum + page.length, 0);
const bytes = pages.reduce((sum, page) => sum + page.lines().length, 0);

/** One pass over every page into a builder; `batch` gets each full batch. */
function fill(walk, batch = () => {}) {
  const builder = new InstanceRowBuilder(VIEW, columns, SPILL_ROWS, { walk });
  for (const page of pages) {
    for (let i = 0; i < page.length; i++) {
      builder.addItem(page, i);
      if (builder.rows >= SPILL_ROWS) {
        batch(builder.batch());
        builder.reset();
      }
    }
  }
  batch(builder.batch());
  return builder.walked;
}

function timed(walk) {
  const before = process.cpuUsage();
  const walked = fill(walk, () => {});
  const used = process.cpuUsage(before);
  return { cpu: (used.user + used.system) / 1e6, walked };
}

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
timed(true);
timed(false);
const cpu = { walk: [], parse: [] };
let walked = 0;
for (let round = 0; round < Number(values.rounds); round++) {
  for (const walk of round % 2 === 0 ? [true, false] : [false, true]) {
    const result = timed(walk);
    cpu[walk ? 'walk' : 'parse'].push(result.cpu);
    if (walk) walked = result.walked;
  }
}

const ipc = (walk) => {
  const parts = [];
  fill(walk, (batch) => parts.push(Buffer.from(tableToIPC(new Table([batch]), 'stream'))));
  return Buffer.concat(parts);
};
const perMillion = (list) => Number(((median(list) / rows) * 1e6).toFixed(2));
console.log(JSON.stringify({
  rows,
  megabytes: Number((bytes / 1e6).toFixed(1)),
  columns: columns.length,
  walked,
  cpuSecondsPerMillion: { walk: perMillion(cpu.walk), parse: perMillion(cpu.parse) },
  ratio: Number((median(cpu.walk) / median(cpu.parse)).toFixed(3)),
  rounds: { walk: cpu.walk.map((s) => Number(s.toFixed(3))), parse: cpu.parse.map((s) => Number(s.toFixed(3))) },
  sameBatches: ipc(true).equals(ipc(false)),
  node: process.version,
}));
