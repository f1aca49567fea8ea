#!/usr/bin/env node
// The baseline of the benchmark suite: a minimal undici loop that drains the same partitions with
// the same concurrency as an export, and fetches and discards every page. Nothing is parsed: the
// next cursor is cut from the end of the body and items are counted by a byte search, so the
// figures are what the network and the server allow, not what a client makes of the pages.
// It runs in its own process so that a parent can measure its CPU time and peak RSS.
//
//   node bench/peers/raw-drain.js --base-url URL (--token T | --api-key K) [--resource events|assets]
//     [--partitions 10] [--limit 1000] [--max-last-updated-time MS] [--concurrency <partitions>]
//     [--gzip] [--save-bodies FILE]
//
// --partitions 1 sends no partition parameter. --concurrency caps the requests in flight over all
// partitions (one undici Pool with as many connections). --gzip asks for gzip bodies and decodes
// them, as the worker's transport does. --save-bodies appends every (decoded) body to FILE as a
// record of a 4-byte big-endian length and the bytes, for bench/peers/parse-floor.js.
// Prints one JSON line on stdout: {rows, pages, bytes, wallS}; bytes are as received on the wire.
//
// Valid for the simulator only: its cursors are base64url (no JSON escapes), and it serializes every
// item with "id" as its first key, so each item starts with the bytes {"id": which appear nowhere
// else in a body (inside JSON strings a quote is escaped).
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { parseArgs, promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import pLimit from 'p-limit';
import { Pool } from 'undici';
import { failer, rawTarget } from './raw-peer.js';

const gunzipAsync = promisify(gunzip);
const CURSOR_KEY = '"nextCursor":"';
const ITEM_START = Buffer.from('{"id":');

const { values } = parseArgs({
  options: {
    'base-url': { type: 'string' },
    'resource': { type: 'string', default: 'events' },
    'partitions': { type: 'string', default: '10' },
    'limit': { type: 'string', default: '1000' },
    'max-last-updated-time': { type: 'string' },
    'concurrency': { type: 'string' },
    'token': { type: 'string' },
    'api-key': { type: 'string' },
    'gzip': { type: 'boolean', default: false },
    'save-bodies': { type: 'string' },
  },
});

const fail = failer('raw-drain');
const { base, basePath, headers } = rawTarget(values, fail);
const n = Number(values.partitions);
const concurrency = Number(values.concurrency ?? values.partitions);
const pool = new Pool(base.origin, { connections: concurrency });
const limit = pLimit(concurrency);
const saved = values['save-bodies'] === undefined ? undefined : createWriteStream(values['save-bodies'], { flags: 'a' });

/** Number of items in a page body: occurrences of {"id": (see the header comment). */
function countItems(body) {
  let count = 0;
  for (let at = body.indexOf(ITEM_START); at >= 0; at = body.indexOf(ITEM_START, at + ITEM_START.length)) count++;
  return count;
}

/** The page's nextCursor, cut from the body without parsing it; undefined on the last page. */
function nextCursor(body) {
  const at = body.lastIndexOf(CURSOR_KEY);
  if (at < 0) return undefined;
  const start = at + CURSOR_KEY.length;
  return body.toString('latin1', start, body.indexOf('"', start));
}

/** Appends one body as a length-prefixed record, waiting when the stream's buffer is full. */
async function saveBody(body) {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(body.length);
  saved.write(length);
  if (!saved.write(body)) await once(saved, 'drain');
}

/** One GET of a page; exits on any status but 200. Returns the wire size and the decoded body. */
async function fetchPage(path) {
  const response = await pool.request({ method: 'GET', path, headers });
  const wire = Buffer.from(await response.body.arrayBuffer());
  if (response.statusCode !== 200) {
    fail(`GET ${path} answered ${response.statusCode} (request id ${response.headers['x-request-id']}): ${wire.toString('utf8', 0, 300)}`);
  }
  const gzipped = response.headers['content-encoding'] === 'gzip';
  return { wireBytes: wire.length, body: gzipped ? await gunzipAsync(wire) : wire };
}

/** Follows one partition's cursor chain to its end; only `cursor` changes between requests. */
async function drainPartition(m) {
  const totals = { rows: 0, pages: 0, bytes: 0 };
  let cursor;
  do {
    const params = new URLSearchParams({ limit: values.limit });
    if (values['max-last-updated-time'] !== undefined) params.set('maxLastUpdatedTime', values['max-last-updated-time']);
    if (n > 1) params.set('partition', `${m}/${n}`);
    if (cursor !== undefined) params.set('cursor', cursor);
    const { wireBytes, body } = await limit(() => fetchPage(`${basePath}/${values.resource}?${params}`));
    totals.rows += countItems(body);
    totals.pages++;
    totals.bytes += wireBytes;
    if (saved !== undefined) await saveBody(body);
    cursor = nextCursor(body);
  } while (cursor !== undefined);
  return totals;
}

const started = performance.now();
const results = await Promise.all(Array.from({ length: n }, (_, i) => drainPartition(i + 1)));
const wallS = (performance.now() - started) / 1000;
await pool.close();
if (saved !== undefined) await finished(saved.end());

const sum = (key) => results.reduce((total, r) => total + r[key], 0);
console.log(JSON.stringify({ rows: sum('rows'), pages: sum('pages'), bytes: sum('bytes'), wallS: Number(wallS.toFixed(3)) }));
