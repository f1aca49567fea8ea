import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

/**
 * A platform that misbehaves now and then: a real HTTP proxy on loopback in front of the simulator
 * that passes every request on and, at seeded random, breaks the answer in one of the ways a
 * broken server would (a series or an instance sent twice, a series left out, a cursor that leads
 * back, an instance of another query). The crash torture runs the CLI through it: a run may fail
 * on what it meets, and must never commit a wrong row. It can also refuse every request of some
 * routes with the platform's 400: a platform that refuses one question (an older deployment
 * without the route, or a body it does not take).
 */

/** The ways an answer is broken; each applies only to the answers of its route. */
export type Misbehaviour =
  /** A series listing page (not the first) that starts with the last series of the page before it. */
  | 'series-again' |
  /** A datapoints answer that leaves out one of the series asked for. */
  'series-dropped' |
  /** A datapoints answer with no items at all. */
  'items-empty' |
  /** A listing page (series or instances) whose next cursor is the one it was asked with. */
  'cursor-loop' |
  /** An instances page (list or sync) that holds the items of the page before it again, under a new cursor. */
  'page-again' |
  /** An instances page that holds an instance another query of the stream answered (a split filter ignored). */
  'foreign-instance';

export type MisbehaviourRates = Partial<Record<Misbehaviour, number>>;

export interface MisbehavingProxy {
  /** `http://127.0.0.1:PORT/api/v1/projects/<project>`: the simulator's base URL, through the proxy. */
  baseUrl: string;
  /** How often each misbehaviour was sent; `refused`, the requests refused. */
  sent: Record<string, number>;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

/** What the proxy remembers between answers, to break later ones with. */
interface Memory {
  /** The last item of the page each listing cursor was handed out with, by cursor. */
  lastItemBefore: Map<string, unknown>;
  /** The items of the page each instances cursor was handed out with (JSON text of the answer's items). */
  pageBefore: Map<string, unknown>;
  /** An instance each instances query answered, by its stream (view and type) and then its filter (JSON text). */
  instanceOf: Map<string, Map<string, unknown>>;
}

/** Keeps the memory's maps from growing without end over a long torture. */
const REMEMBERED = 5000;

export async function startMisbehavingProxy(options: {
  /** The simulator's base URL (`.../api/v1/projects/<project>`). */
  target: string;
  rates?: MisbehaviourRates;
  /** Seeded, where rates are given. */
  random?: () => number;
  /** Routes (`/timeseries/data/latest`) answered 400 every time, never passed on. */
  refuse?: readonly string[];
}): Promise<MisbehavingProxy> {
  const { rates = {}, random = () => 1, refuse = [] } = options;
  const target = new URL(options.target);
  if (target.hostname !== '127.0.0.1') throw new Error(`the proxy only talks to loopback, not ${target.hostname}`);
  const sent: Record<string, number> = {};
  const memory: Memory = { lastItemBefore: new Map(), pageBefore: new Map(), instanceOf: new Map() };
  const server = createServer((req, res) => {
    void forward(req, res).catch((error: unknown) => {
      res.destroy(error instanceof Error ? error : new Error(String(error)));
    });
  });

  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
    const body = Buffer.concat(chunks);
    const path = (req.url ?? '').replace(/^\/api\/v1\/projects\/[^/]+/, '').split('?')[0] ?? '';
    if (refuse.includes(path)) {
      const refused = (sent.refused = (sent.refused ?? 0) + 1);
      const text = JSON.stringify({ error: { code: 400, message: `Refused by the test's proxy: ${path}` } });
      res.writeHead(400, { 'content-type': 'application/json', 'x-request-id': `refused-${refused}` });
      res.end(text);
      return;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      // The proxy reads the answers as JSON: asked uncompressed; the connection is its own.
      if (value === undefined || ['host', 'accept-encoding', 'connection', 'content-length'].includes(name)) continue;
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    const method = req.method === 'POST' ? 'POST' : 'GET';
    const answer = await request(`${target.origin}${req.url ?? '/'}`, {
      method,
      headers,
      ...(method === 'POST' ? { body } : {}),
    });
    let text = await answer.body.text();
    if (answer.statusCode === 200) {
      const broken = misbehave(path, req.url ?? '', method === 'POST' ? parse(body.toString('utf8')) : undefined, text);
      if (broken !== undefined) text = broken;
    }
    const bytes = Buffer.from(text);
    const out: Record<string, string> = { 'content-type': 'application/json', 'content-length': String(bytes.length) };
    const requestId = answer.headers['x-request-id'];
    if (typeof requestId === 'string') out['x-request-id'] = requestId;
    res.writeHead(answer.statusCode, out);
    res.end(bytes);
  }

  /** The answer broken in one way (its new text), or undefined to pass it as it is. */
  function misbehave(path: string, url: string, body: Json | undefined, text: string): string | undefined {
    const answer = parse(text);
    if (answer === undefined) return undefined;
    const asked = cursorAsked(url, body);
    if (path === '/timeseries' || path === '/timeseries/list') return seriesListing(answer, asked);
    if (path === '/timeseries/data/list' && body !== undefined) return datapoints(answer);
    if (path === '/models/instances/list' || path === '/models/instances/sync') return instances(answer, asked, body);
    return undefined;
  }

  function seriesListing(answer: Json, asked: string | undefined): string | undefined {
    const items = answer.items as unknown[];
    const next = answer.nextCursor;
    const before = asked === undefined ? undefined : memory.lastItemBefore.get(asked);
    if (typeof next === 'string' && items.length > 0) remember(memory.lastItemBefore, next, items[items.length - 1]);
    if (before !== undefined && roll('series-again')) return JSON.stringify({ ...answer, items: [before, ...items] });
    if (asked !== undefined && typeof next === 'string' && roll('cursor-loop')) return JSON.stringify({ ...answer, nextCursor: asked });
    return undefined;
  }

  function datapoints(answer: Json): string | undefined {
    const items = answer.items as unknown[];
    if (items.length === 0) return undefined;
    if (roll('items-empty')) return JSON.stringify({ ...answer, items: [] });
    if (roll('series-dropped')) {
      const drop = Math.floor(random() * items.length);
      return JSON.stringify({ ...answer, items: items.filter((_, i) => i !== drop) });
    }
    return undefined;
  }

  /** A list answer (`items` an array, `nextCursor` a string) or a sync answer (both by expression). */
  function instances(answer: Json, asked: string | undefined, body: Json | undefined): string | undefined {
    const sync = !Array.isArray(answer.items);
    const items = (sync ? Object.values(answer.items as Json)[0] : answer.items) as unknown[] | undefined;
    const next = sync ? Object.values((answer.nextCursor ?? {}) as Json)[0] : answer.nextCursor;
    if (items === undefined) return undefined;
    const { filter, with: expressions, cursor: _cursor, cursors: _cursors, ...stream } = body ?? {};
    const query = JSON.stringify(filter ?? expressions ?? null);
    const queries = memory.instanceOf.get(JSON.stringify(stream)) ?? new Map<string, unknown>();
    memory.instanceOf.set(JSON.stringify(stream), queries);
    const before = asked === undefined ? undefined : memory.pageBefore.get(asked);
    if (typeof next === 'string' && items.length > 0) remember(memory.pageBefore, next, items);
    if (items.length > 0) queries.set(query, items[0]);
    const withItems = (replaced: unknown[]) =>
      JSON.stringify({ ...answer, items: sync ? rekeyed(answer.items as Json, replaced) : replaced });
    if (Array.isArray(before) && before.length > 0 && typeof next === 'string' && roll('page-again')) return withItems(before);
    // An instance of another query of the same stream (a split's other range or space).
    const foreign = [...queries].find(([other]) => other !== query)?.[1];
    if (foreign !== undefined && items.length > 0 && roll('foreign-instance')) return withItems([foreign, ...items.slice(1)]);
    if (asked !== undefined && typeof next === 'string' && roll('cursor-loop')) {
      return JSON.stringify({ ...answer, nextCursor: sync ? rekeyed(answer.nextCursor as Json, asked) : asked });
    }
    return undefined;
  }

  function roll(kind: Misbehaviour): boolean {
    const rate = rates[kind] ?? 0;
    if (rate <= 0 || random() >= rate) return false;
    sent[kind] = (sent[kind] ?? 0) + 1;
    return true;
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${target.pathname}`,
    sent,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function parse(text: string): Json | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
  } catch {
    return undefined;
  }
}

/** The cursor a request carries: in its query (GET) or its body (POST; a sync's is by expression). */
function cursorAsked(url: string, body: Json | undefined): string | undefined {
  const inQuery = new URL(url, 'http://proxy').searchParams.get('cursor');
  if (inQuery !== null) return inQuery;
  const cursor = body?.cursor ?? Object.values((body?.cursors ?? {}) as Json)[0];
  return typeof cursor === 'string' ? cursor : undefined;
}

/** A sync answer's map by expression with its one entry's value replaced. */
function rekeyed(byExpression: Json, value: unknown): Json {
  const [name] = Object.keys(byExpression);
  return name === undefined ? byExpression : { ...byExpression, [name]: value };
}

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.set(key, value);
  if (map.size > REMEMBERED) map.delete(map.keys().next().value!);
}
