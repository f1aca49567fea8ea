#!/usr/bin/env node
// The baseline for datapoints (issue 28): a minimal undici loop that sends the requests a
// `resource: datapoints` export sends, and fetches and discards every answer. Each of n partitions
// lists its series (GET /timeseries?limit=1000&partition=m/n, following nextCursor) and reads
// their raw points with POST /timeseries/data/list: up to 100 series a request, their limits adding
// up to 100,000, each series asked again with only its cursor changed while its answer carries
// one, series joining as others finish. Up to --lanes requests of a partition are in flight at
// once, and one limiter of --concurrency bounds every request of every partition, as the export's.
// It runs in its own process so that a parent can measure its CPU time and peak RSS.
//
//   node bench/peers/raw-points.js --base-url URL (--token T | --api-key K) [--partitions 10]
//     [--concurrency 8] [--lanes 4] [--limit 1000] [--start MS] [--end MS] [--gzip]
//
// The requests are the export's by construction: which series go into a request, with which
// limits, and when a chain is started again by time or a long series split into windows, is
// decided by the export's own SeriesTasks (dist/export/kinds/datapoints/series-tasks.js, so `npm run build`
// first), fed the same answers in the same order (the oldest request in flight is taken first, as
// src/export/kinds/datapoints/drain-points.ts does). Only what those decisions need is read from an answer, by
// a byte search, no JSON.parse: per item its id, its nextCursor, the number of points, and the
// first and last timestamps. --lanes is the export's LANES (src/export/kinds/datapoints/drain-points.ts);
// --concurrency its source.concurrency (default 8). --start defaults to the platform's (0), --end
// to now, fixed when the program starts. Not sent: the export's one count of the series before it
// starts (POST /timeseries/aggregate), which proves its credential.
// Prints one JSON line on stdout: {rows, series, requests, listPages, bytes, wallS}: rows are
// points, requests the points requests, bytes as received on the wire (listing pages included).
//
// Valid for the simulator only: its cursors are base64url (no JSON escapes); it writes every item,
// of the listing and of an answer, with "id" first, an answer's item with its nextCursor before
// its datapoints, and every point with "timestamp" first. So each item starts with the bytes
// {"id": and each point with {"timestamp": which appear nowhere else (inside JSON strings a quote
// is escaped).
import { parseArgs, promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import pLimit from 'p-limit';
import { Pool } from 'undici';
import { MAX_QUERIES, SeriesTasks } from '../../dist/export/kinds/datapoints/series-tasks.js';
import { failer, rawTarget } from './raw-peer.js';

const gunzipAsync = promisify(gunzip);
const ITEM_START = Buffer.from('{"id":');
const POINT_START = Buffer.from('{"timestamp":');
const CURSOR_KEY = Buffer.from('"nextCursor":"');
const DATAPOINTS_KEY = Buffer.from('"datapoints":[');

const { values } = parseArgs({
  options: {
    'base-url': { type: 'string' },
    'partitions': { type: 'string', default: '10' },
    'concurrency': { type: 'string', default: '8' },
    'lanes': { type: 'string', default: '4' },
    'limit': { type: 'string', default: '1000' },
    'start': { type: 'string', default: '0' },
    'end': { type: 'string' },
    'token': { type: 'string' },
    'api-key': { type: 'string' },
    'gzip': { type: 'boolean', default: false },
  },
});

const fail = failer('raw-points');
const { base, basePath, headers } = rawTarget(values, fail);
const n = Number(values.partitions);
const concurrency = Number(values.concurrency);
const lanesMax = Number(values.lanes);
const window = { start: Number(values.start), end: Number(values.end ?? Date.now()), aggregates: false };
const pool = new Pool(base.origin, { connections: concurrency });
const limit = pLimit(concurrency);

/** One request; exits on any status but 200. Returns the wire size and the decoded body. */
async function fetchBody(method, path, body) {
  const response = await pool.request({
    method,
    path,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body,
  });
  const wire = Buffer.from(await response.body.arrayBuffer());
  if (response.statusCode !== 200) {
    fail(`${method} ${path} answered ${response.statusCode} (request id ${response.headers['x-request-id']}): ${wire.toString('utf8', 0, 300)}`);
  }
  const gzipped = response.headers['content-encoding'] === 'gzip';
  return { wireBytes: wire.length, body: gzipped ? await gunzipAsync(wire) : wire };
}

/** The integer written at `at` in `body` (digits and a leading minus). */
function integerAt(body, at) {
  let end = at;
  while (end < body.length && (body[end] === 0x2d || (body[end] >= 0x30 && body[end] <= 0x39))) end++;
  return Number(body.toString('latin1', at, end));
}

/** The string after `key` (a key's bytes up to its value's opening quote) between `from` and `to`, if any. */
function stringIn(body, key, from, to) {
  const at = body.subarray(from, to).indexOf(key);
  if (at < 0) return undefined;
  const start = from + at + key.length;
  return body.toString('latin1', start, body.indexOf('"', start));
}

/** Where each item of a body starts (see the header comment). */
function itemStarts(body) {
  const starts = [];
  for (let at = body.indexOf(ITEM_START); at >= 0; at = body.indexOf(ITEM_START, at + ITEM_START.length)) {
    starts.push(at);
  }
  return starts;
}

/**
 * Items of a points answer as the series tasks need them: id, nextCursor, and the points, as their
 * number and first and last timestamps (SeriesTasks.answered reads no more).
 */
function readItems(body) {
  const starts = itemStarts(body);
  return starts.map((start, i) => {
    const end = starts[i + 1] ?? body.length;
    const points = body.indexOf(DATAPOINTS_KEY, start);
    let count = 0;
    const step = POINT_START.length;
    for (let at = body.indexOf(POINT_START, points); at >= 0 && at < end; at = body.indexOf(POINT_START, at + step)) {
      count++;
    }
    const first = count === 0 ? undefined : integerAt(body, body.indexOf(POINT_START, points) + POINT_START.length);
    const last = count === 0 ? undefined : integerAt(body, body.lastIndexOf(POINT_START, end) + POINT_START.length);
    return {
      id: integerAt(body, start + ITEM_START.length),
      nextCursor: stringIn(body, CURSOR_KEY, start, points),
      points: { length: count, timestamp: (k) => (k === 0 ? first : last) },
    };
  });
}

/** One partition's series listing, a page at a time, as the export lists it. */
function seriesListing(m, totals) {
  let cursor;
  let done = false;
  return {
    get done() {
      return done;
    },
    async take() {
      const params = new URLSearchParams({ limit: values.limit });
      if (n > 1) params.set('partition', `${m}/${n}`);
      if (cursor !== undefined) params.set('cursor', cursor);
      const { wireBytes, body } = await limit(() => fetchBody('GET', `${basePath}/timeseries?${params}`));
      totals.listPages++;
      totals.bytes += wireBytes;
      const at = body.lastIndexOf(CURSOR_KEY);
      cursor = at < 0 ? undefined : stringIn(body, CURSOR_KEY, at, body.length);
      done = cursor === undefined;
      return itemStarts(body).map((start) => ({ id: integerAt(body, start + ITEM_START.length) }));
    },
  };
}

/** Sends one request of the queries planned; undefined when none is planned. */
async function requestPoints(queries, totals) {
  if (queries.length === 0) return undefined;
  const items = queries.map(({ query }) => ({
    ...query.ref,
    start: query.start,
    end: query.end,
    limit: query.limit,
    ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
  }));
  const request = JSON.stringify({ items, ignoreUnknownIds: true });
  const { wireBytes, body } = await limit(() => fetchBody('POST', `${basePath}/timeseries/data/list`, request));
  totals.requests++;
  totals.bytes += wireBytes;
  return { queries, items: readItems(body) };
}

/**
 * Takes an answer into the tasks: items come in the order of their queries, and a query no item
 * answers is a series the platform does not know (finished, as the export's takeAnswer does).
 */
function takeAnswer(tasks, { queries, items }, totals) {
  let next = 0;
  for (const item of items) {
    while (next < queries.length && queries[next].query.ref.id !== item.id) queries[next++].task.finished = true;
    if (next === queries.length) fail(`an answer holds series ${item.id}, out of the order of the queries`);
    tasks.answered(queries[next++].task, item);
    totals.rows += item.points.length;
  }
  while (next < queries.length) queries[next++].task.finished = true;
}

/** Drains one partition: its series listed and their points read, as the export's drainPoints does. */
async function drainPartition(m) {
  const totals = { rows: 0, series: 0, requests: 0, listPages: 0, bytes: 0 };
  const tasks = new SeriesTasks(window);
  const listing = seriesListing(m, totals);
  const fill = async () => {
    while (tasks.waiting < MAX_QUERIES && !listing.done) {
      const refs = await listing.take();
      for (const ref of refs) tasks.add(ref, null);
      totals.series += refs.length;
    }
  };
  const lanes = [];
  const launch = () => {
    while (lanes.length < lanesMax && tasks.askable) {
      const sent = requestPoints(tasks.nextQueries(lanesMax - lanes.length), totals);
      sent.catch(() => undefined);
      lanes.push(sent);
    }
  };
  await fill();
  launch();
  while (lanes.length > 0) {
    const sent = await lanes.shift();
    if (sent === undefined) continue;
    takeAnswer(tasks, sent, totals);
    await fill();
    launch();
  }
  return totals;
}

const started = performance.now();
const results = await Promise.all(Array.from({ length: n }, (_, i) => drainPartition(i + 1)));
const wallS = (performance.now() - started) / 1000;
await pool.close();

const sum = (key) => results.reduce((total, r) => total + r[key], 0);
console.log(
  JSON.stringify({
    rows: sum('rows'),
    series: sum('series'),
    requests: sum('requests'),
    listPages: sum('listPages'),
    bytes: sum('bytes'),
    wallS: Number(wallS.toFixed(3)),
  }),
);
