#!/usr/bin/env node
// The peer of the benchmark suite: the platform's official JavaScript SDK (@cognite/sdk) draining
// the same partitions into one NDJSON file, written the way a user of the SDK would write it, in
// one of two ways (--mode):
//   get   the generic `client.get(path, { params })` on GET /events, following nextCursor (the
//         lighter of the two, and the peer issue 16's targets are set against);
//   list  the typed `client.events.list({ partition, limit })` (POST /events/list), then
//         `page.next()` while the page has one (1.29x the CPU of `get`, bench/RESULTS.md).
// Both go through the SDK's own HTTP stack: cross-fetch (node-fetch 2 on Node), its retry policy
// and its 401 re-authentication.
// It runs in its own process so that a parent can measure its CPU time and peak RSS.
//
//   node bench/peers/sdk-drain.js --origin URL --project P --token-url URL --out FILE
//     [--client-id demo] [--client-secret S | env SDK_CLIENT_SECRET] [--resource events|assets]
//     [--partitions 10] [--limit 1000] [--max-last-updated-time MS] [--mode get|list]
//
// The token comes from the client-credentials grant at --token-url; the SDK asks for it through
// `oidcTokenProvider` (on `client.authenticate()` and after a 401), and a token close to expiry
// is replaced. --partitions 1 sends no partition parameter. Partitions are drained concurrently,
// each following nextCursor until it is absent; every page is written as one chunk of lines.
// Prints one JSON line on stdout: {rows, pages, wallS}.
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { failWith, sdkClient } from './sdk-client.js';

const { values } = parseArgs({
  options: {
    'origin': { type: 'string' },
    'project': { type: 'string' },
    'token-url': { type: 'string' },
    'client-id': { type: 'string', default: 'demo' },
    'client-secret': { type: 'string' },
    'resource': { type: 'string', default: 'events' },
    'partitions': { type: 'string', default: '10' },
    'limit': { type: 'string', default: '1000' },
    'max-last-updated-time': { type: 'string' },
    'out': { type: 'string' },
    'mode': { type: 'string', default: 'get' },
  },
});

const fail = failWith('sdk-drain');

for (const name of ['origin', 'project', 'token-url', 'out']) {
  if (values[name] === undefined) fail(`--${name} is required`);
}
if (!['get', 'list'].includes(values.mode)) fail(`--mode is get or list, got ${values.mode}`);
const clientSecret = values['client-secret'] ?? process.env.SDK_CLIENT_SECRET;
if (clientSecret === undefined) fail('give --client-secret or set SDK_CLIENT_SECRET');
const n = Number(values.partitions);

const client = sdkClient({
  origin: values.origin,
  project: values.project,
  tokenUrl: values['token-url'],
  clientId: values['client-id'],
  clientSecret,
  fail,
});
const api = values.resource === 'assets' ? client.assets : client.events;
const path = `/api/v1/projects/${encodeURIComponent(values.project)}/${values.resource}`;
const out = createWriteStream(values.out);

/** Writes one page as NDJSON lines, waiting for 'drain' when the stream's buffer is full. */
async function writeItems(items) {
  if (items.length === 0) return;
  const lines = `${items.map((item) => JSON.stringify(item)).join('\n')}\n`;
  if (!out.write(lines)) await once(out, 'drain');
}

/** Follows one partition's cursor chain with `client.get` until the page without nextCursor. */
async function drainWithGet(m) {
  const totals = { rows: 0, pages: 0 };
  let cursor;
  do {
    const params = {
      limit: values.limit,
      maxLastUpdatedTime: values['max-last-updated-time'],
      partition: n > 1 ? `${m}/${n}` : undefined,
      cursor,
    };
    const { data } = await client.get(path, { params });
    await writeItems(data.items);
    totals.rows += data.items.length;
    totals.pages++;
    cursor = data.nextCursor;
  } while (cursor !== undefined);
  return totals;
}

/** Follows one partition's cursor chain with the SDK's list and `next()` until the last page. */
async function drainWithList(m) {
  const totals = { rows: 0, pages: 0 };
  const maxLastUpdatedTime = values['max-last-updated-time'];
  let page = await api.list({
    limit: Number(values.limit),
    ...(n > 1 ? { partition: `${m}/${n}` } : {}),
    ...(maxLastUpdatedTime === undefined ? {} : { filter: { lastUpdatedTime: { max: Number(maxLastUpdatedTime) } } }),
  });
  for (;;) {
    await writeItems(page.items);
    totals.rows += page.items.length;
    totals.pages++;
    if (page.next === undefined) return totals;
    page = await page.next();
  }
}

const drainPartition = values.mode === 'list' ? drainWithList : drainWithGet;

/**
 * node-fetch 2 never settles a response whose connection closes mid-body (node-fetch issue 1604),
 * and the SDK does not time out: the event loop runs empty and Node would exit 13 without a word.
 */
function stalled() {
  fail('a request never settled (connection closed mid-body?); the output is incomplete');
}

const started = performance.now();
process.once('beforeExit', stalled);
if ((await client.authenticate()) === undefined) fail('could not get a token from --token-url');
const results = await Promise.all(Array.from({ length: n }, (_, i) => drainPartition(i + 1)));
await finished(out.end());
process.off('beforeExit', stalled);
const wallS = (performance.now() - started) / 1000;

const sum = (key) => results.reduce((total, r) => total + r[key], 0);
console.log(JSON.stringify({ rows: sum('rows'), pages: sum('pages'), wallS: Number(wallS.toFixed(3)) }));
