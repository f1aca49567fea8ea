#!/usr/bin/env node
// The peer for data-model instances (issue 29): the platform's official JavaScript SDK
// (@cognite/sdk) listing every node (or edge) of a view into one NDJSON file, the way its users do:
// `client.instances.list({ instanceType, sources: [{ source: view }], limit, cursor })`
// (POST /models/instances/list), the next call with the answer's `nextCursor`, until an answer has
// none. Unlike `events.list`, the SDK's `instances.list` resolves to the answer's body itself
// (`{items, nextCursor, typing?}`), with no `next()` or `autoPagingToArray`: the cursor is followed
// by hand. With --spaces, one query per space (`equals [node, space]`, as bulk-extract's
// `split: space` sends), all drained at once; without, one query over every space.
// It runs in its own process so that a parent can measure its CPU time and peak RSS.
//
//   node bench/peers/sdk-instances.js --origin URL --project P --token-url URL --out FILE
//     [--client-id demo] [--client-secret S | env SDK_CLIENT_SECRET]
//     [--view cdf_cdm/CogniteAsset/v1] [--instance-type node|edge] [--spaces a,b,c] [--limit 1000]
//
// Each answer's items are written as one chunk of lines, as the platform returned them. Prints one
// JSON line on stdout: {rows, pages, wallS}.
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
    'out': { type: 'string' },
    'view': { type: 'string', default: 'cdf_cdm/CogniteAsset/v1' },
    'instance-type': { type: 'string', default: 'node' },
    'spaces': { type: 'string' },
    'limit': { type: 'string', default: '1000' },
  },
});

const fail = failWith('sdk-instances');

for (const name of ['origin', 'project', 'token-url', 'out']) {
  if (values[name] === undefined) fail(`--${name} is required`);
}
const clientSecret = values['client-secret'] ?? process.env.SDK_CLIENT_SECRET;
if (clientSecret === undefined) fail('give --client-secret or set SDK_CLIENT_SECRET');
// Spaces, view externalIds and versions cannot hold a '/' on the platform.
const [space, externalId, version, ...rest] = values.view.split('/');
if (version === undefined || rest.length > 0) fail(`--view is SPACE/EXTERNALID/VERSION, got ${values.view}`);
const instanceType = values['instance-type'];
if (!['node', 'edge'].includes(instanceType)) fail(`--instance-type is node or edge, got ${instanceType}`);
const limit = Number(values.limit);
const spaces = values.spaces?.split(',').filter((each) => each !== '');

const client = sdkClient({
  origin: values.origin,
  project: values.project,
  tokenUrl: values['token-url'],
  clientId: values['client-id'],
  clientSecret,
  fail,
});
const sources = [{ source: { type: 'view', space, externalId, version } }];
const out = createWriteStream(values.out);

/** Writes one answer as NDJSON lines, waiting for 'drain' when the stream's buffer is full. */
async function writeItems(items) {
  if (items.length === 0) return;
  const lines = `${items.map((item) => JSON.stringify(item)).join('\n')}\n`;
  if (!out.write(lines)) await once(out, 'drain');
}

/** Follows one query's cursor chain until the answer without nextCursor. */
async function drainQuery(filter) {
  const totals = { rows: 0, pages: 0 };
  let cursor;
  do {
    const answer = await client.instances.list({
      instanceType,
      sources,
      limit,
      ...(filter === undefined ? {} : { filter }),
      ...(cursor === undefined ? {} : { cursor }),
    });
    await writeItems(answer.items);
    totals.rows += answer.items.length;
    totals.pages++;
    cursor = answer.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return totals;
}

/**
 * node-fetch 2 never settles a response whose connection closes mid-body (node-fetch issue 1604),
 * and the SDK does not time out: the event loop runs empty and Node would exit 13 without a word.
 */
function stalled() {
  fail('a request never settled (connection closed mid-body?); the output is incomplete');
}

const filters = spaces === undefined
  ? [undefined]
  : spaces.map((each) => ({ equals: { property: [instanceType, 'space'], value: each } }));
const started = performance.now();
process.once('beforeExit', stalled);
if ((await client.authenticate()) === undefined) fail('could not get a token from --token-url');
const results = await Promise.all(filters.map(drainQuery));
await finished(out.end());
process.off('beforeExit', stalled);
const wallS = (performance.now() - started) / 1000;

const sum = (key) => results.reduce((total, r) => total + r[key], 0);
console.log(JSON.stringify({ rows: sum('rows'), pages: sum('pages'), wallS: Number(wallS.toFixed(3)) }));
