#!/usr/bin/env node
// Measures how fast the simulator serves pages: it runs in its own process (one JS thread), a client
// here drains n partitions concurrently and discards the bodies. Reports wall-clock throughput and
// the simulator process's own CPU time (user + sys from /proc), so the figure is per core.
//
//   node bench/simulator-throughput.js [--events 1000000] [--partitions 10] [--limit 1000] [--gzip]
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '1000000' },
    partitions: { type: 'string', default: '10' },
    limit: { type: 'string', default: '1000' },
    gzip: { type: 'boolean', default: false },
  },
});
const events = Number(values.events);
const n = Number(values.partitions);
const limit = Number(values.limit);

const spawnedAt = performance.now();
const child = spawn(
  process.execPath,
  ['bin/bulk-extract.js', 'simulate', '--events', String(events), '--assets', '10000', '--log-level', 'warn'],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const firstLine = await new Promise((resolve) =>
  createInterface({ input: child.stdout }).once('line', resolve),
);
const { baseUrl } = JSON.parse(firstLine);
const readyMs = performance.now() - spawnedAt;

/** CPU seconds (user + sys) the simulator process has used so far, from /proc/PID/stat. */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const dispatcher = new Agent({ connections: n, pipelining: 1 });
const headers = { 'api-key': 'demo-api-key', ...(values.gzip ? { 'accept-encoding': 'gzip' } : {}) };

async function drainPartition(m) {
  let cursor;
  let pages = 0;
  let bytes = 0;
  do {
    const params = new URLSearchParams({ limit: String(limit), partition: `${m}/${n}` });
    if (cursor) params.set('cursor', cursor);
    const response = await request(`${baseUrl}/events?${params}`, { headers, dispatcher });
    if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}`);
    const buffer = Buffer.from(await response.body.arrayBuffer());
    bytes += buffer.length;
    pages++;
    // Cursor extraction without parsing the page: the client must not be the bottleneck.
    const text = values.gzip ? (await import('node:zlib')).gunzipSync(buffer).toString() : buffer.toString();
    const at = text.lastIndexOf('"nextCursor":"');
    cursor = at < 0 ? undefined : text.slice(at + 14, text.indexOf('"', at + 14));
  } while (cursor);
  return { pages, bytes };
}

// Warm-up: one page per partition, so JIT compilation is not in the measured window. The first of
// them also gives the start-up figure: process spawn to a served page, as a user's curl would see.
await request(`${baseUrl}/events?limit=${limit}&partition=${n}/${n}`, { headers, dispatcher }).then((r) =>
  r.body.dump(),
);
const firstPageMs = performance.now() - spawnedAt;
await Promise.all(
  Array.from({ length: n }, (_, i) =>
    request(`${baseUrl}/events?limit=${limit}&partition=${i + 1}/${n}`, { headers, dispatcher }).then((r) =>
      r.body.dump(),
    ),
  ),
);

const cpuBefore = cpuSeconds(child.pid);
const started = performance.now();
const results = await Promise.all(Array.from({ length: n }, (_, i) => drainPartition(i + 1)));
const seconds = (performance.now() - started) / 1000;
const cpu = cpuSeconds(child.pid) - cpuBefore;
child.kill('SIGTERM');
await dispatcher.close();

const pages = results.reduce((sum, r) => sum + r.pages, 0);
const bytes = results.reduce((sum, r) => sum + r.bytes, 0);
console.log(
  JSON.stringify({
    scenario: `simulator serving ${events} events, n=${n}, limit=${limit}, gzip=${values.gzip}`,
    readyMs: Math.round(readyMs),
    firstPageMs: Math.round(firstPageMs),
    seconds: Number(seconds.toFixed(2)),
    pagesPerSecond: Math.round(pages / seconds),
    eventsPerSecond: Math.round(events / seconds),
    simulatorCpuSeconds: Number(cpu.toFixed(2)),
    eventsPerSimulatorCpuSecond: Math.round(events / cpu),
    megabytesPerSecond: Number((bytes / seconds / 1e6).toFixed(1)),
    bytesPerEvent: Math.round(bytes / events),
  }),
);
