#!/usr/bin/env node
// The peer for datapoints (issue 28): the platform's official JavaScript SDK (@cognite/sdk)
// draining every time series' points into one NDJSON file, the way its users do:
// `client.timeseries.list().autoPagingToArray()` for the series, then `client.datapoints.retrieve`
// with up to 100 series a call, each call repeating the series not yet done with the nextCursor
// the SDK handed back, until no series has one. `--concurrency` such calls run at once, each on
// its own group of 100 series. One NDJSON line per point: the series' id and externalId, the
// timestamp in epoch ms and the value (and status, if any), as bulk-extract's NDJSON will hold.
// It runs in its own process so that a parent can measure its CPU time and peak RSS.
//
//   node bench/peers/sdk-datapoints.js --origin URL --project P --token-url URL --out FILE
//     [--client-id demo] [--client-secret S | env SDK_CLIENT_SECRET] [--end MS]
//     [--per-series 1000] [--concurrency 10]
//
// `--per-series` is each series' limit; 100 series of 1000 points fill the platform's total of
// 100,000 raw points a request. `--end` defaults to now, fixed when the program starts; `start` is
// the platform's default (0). Prints one JSON line on stdout: {series, points, calls, wallS}.
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { failWith, sdkClient } from './sdk-client.js';

const SERIES_PER_CALL = 100;

const { values } = parseArgs({
  options: {
    'origin': { type: 'string' },
    'project': { type: 'string' },
    'token-url': { type: 'string' },
    'client-id': { type: 'string', default: 'demo' },
    'client-secret': { type: 'string' },
    'out': { type: 'string' },
    'end': { type: 'string' },
    'per-series': { type: 'string', default: '1000' },
    'concurrency': { type: 'string', default: '10' },
  },
});

const fail = failWith('sdk-datapoints');

for (const name of ['origin', 'project', 'token-url', 'out']) {
  if (values[name] === undefined) fail(`--${name} is required`);
}
const clientSecret = values['client-secret'] ?? process.env.SDK_CLIENT_SECRET;
if (clientSecret === undefined) fail('give --client-secret or set SDK_CLIENT_SECRET');
const end = Number(values.end ?? Date.now());
const perSeries = Number(values['per-series']);

const client = sdkClient({
  origin: values.origin,
  project: values.project,
  tokenUrl: values['token-url'],
  clientId: values['client-id'],
  clientSecret,
  fail,
});
const out = createWriteStream(values.out);

/** One series' points of one answer as NDJSON lines, waiting for 'drain' when the buffer is full. */
async function writePoints(series) {
  if (series.datapoints.length === 0) return;
  let lines = '';
  for (const point of series.datapoints) {
    const { id, externalId } = series;
    const line = { id, externalId, timestamp: point.timestamp.getTime(), value: point.value };
    if (point.status !== undefined) line.status = point.status;
    lines += `${JSON.stringify(line)}\n`;
  }
  if (!out.write(lines)) await once(out, 'drain');
}

/** Drains one group of series: retrieve, write, and ask again for those with a nextCursor. */
async function drainGroup(group) {
  const totals = { points: 0, calls: 0 };
  let pending = group.map((series) => ({ id: series.id, limit: perSeries }));
  while (pending.length > 0) {
    const answers = await client.datapoints.retrieve({ items: pending, end });
    totals.calls++;
    const next = [];
    for (const [i, series] of answers.entries()) {
      await writePoints(series);
      totals.points += series.datapoints.length;
      if (series.nextCursor !== undefined) next.push({ ...pending[i], cursor: series.nextCursor });
    }
    pending = next;
  }
  return totals;
}

const started = performance.now();
await client.authenticate();
const allSeries = await client.timeseries.list({ limit: 1000 }).autoPagingToArray({ limit: Infinity });
const groups = [];
for (let i = 0; i < allSeries.length; i += SERIES_PER_CALL) groups.push(allSeries.slice(i, i + SERIES_PER_CALL));
const results = [];
const workers = Array.from({ length: Number(values.concurrency) }, async () => {
  for (let group = groups.shift(); group !== undefined; group = groups.shift()) results.push(await drainGroup(group));
});
await Promise.all(workers);
await finished(out.end());
const wallS = (performance.now() - started) / 1000;
const sum = (key) => results.reduce((total, r) => total + r[key], 0);
console.log(JSON.stringify({ series: allSeries.length, points: sum('points'), calls: sum('calls'), wallS: Number(wallS.toFixed(3)) }));
