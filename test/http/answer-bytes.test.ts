import { afterEach, describe, expect, it } from 'vitest';
import { sourceSchema } from '../../src/config/source-schema.js';
import { createPlatformClient } from '../../src/connect/create-client.js';
import { drainCursorChain } from '../../src/http/cursor-chain.js';
import { BadResponseError, HttpStatusError } from '../../src/http/errors.js';
import type { PlatformClient } from '../../src/http/platform-client.js';
import { drainSyncFeed } from '../../src/http/sync-chain.js';
import { scanSyncPage } from '../../src/page/index.js';
import { MAX_JSON_DEPTH } from '../../src/util/json-limits.js';
import { Secret } from '../../src/util/secret.js';
import { createFakeClock } from '../support/fake-clock.js';
import { type ScriptedRequest, type ScriptedResponse, startScriptedServer } from '../support/scripted-server.js';

/**
 * Every route that parses a server's bytes refuses, before any parse, an answer nested deeper than
 * MAX_JSON_DEPTH or holding a number past a double's range: list pages (scanned or parsed), sync
 * answers, read answers, plain JSON answers (views, counts), `/login/status` and the token endpoint.
 */
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

const deep = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

async function serve(respond: (request: ScriptedRequest) => ScriptedResponse, oauth = false): Promise<PlatformClient> {
  const server = await startScriptedServer(respond);
  cleanup.push(() => server.close());
  const auth = oauth
    ? { type: 'oauth-client-credentials', tokenUrl: `${server.origin}/oauth2/token`, clientId: 'c', clientSecret: new Secret('client-secret-1') }
    : { type: 'api-key', apiKey: new Secret('answer-bytes-key') };
  const source = sourceSchema.parse({ baseUrl: server.baseUrl, auth, retry: { maxAttempts: 1 } });
  const client = createPlatformClient(source, { clock: createFakeClock() });
  cleanup.push(() => client.close());
  return client;
}

async function refusal(promise: Promise<unknown>): Promise<BadResponseError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(BadResponseError);
  return error as BadResponseError;
}

async function drainPage(client: PlatformClient): Promise<void> {
  for await (const page of drainCursorChain(client, { path: '/events', params: [['limit', '10']] })) page.release();
}

describe.concurrent('an answer nested too deep is refused unread, naming where', () => {
  it.each([
    ['a list page the scan reads', `{"items":[{"id":1},{"id":2,"x":${deep(100_000)}}]}`],
    ['a list page left to JSON.parse (a key with an escape)', `{"it\\u0065ms":[],"items":[{"id":1},{"id":2,"x":${deep(100_000)}}]}`],
  ])('%s', async (_name, body) => {
    const client = await serve(() => ({ body }));
    const error = await refusal(drainPage(client));
    expect(error.message).toContain(`The answer is nested deeper than ${MAX_JSON_DEPTH} levels at items[1] (id 2).x[0][0][0][0][0][0][0]… (257 levels)`);
    expect(error.message).toContain('(GET /api/v1/projects/scripted/events?limit=10, request id scripted-1, after 1 attempt)');
  });

  it('a sync answer: the instance is named by its space and externalId', async () => {
    const instance = `{"space":"s1","externalId":"n2","properties":{"sp":{"v/1":{"p":${deep(1000)}}}}}`;
    const client = await serve(() => ({ body: `{"items":{"nodes":[${instance}]},"nextCursor":{"nodes":"c"}}` }));
    const feed = drainSyncFeed(client, { path: '/models/instances/sync', body: { with: {} }, set: 'nodes', limit: 10 });
    const error = await refusal(feed.next());
    expect(error.message).toContain('at items.nodes[0] (space "s1", externalId "n2").properties.sp["v/1"].p[0][0][0]… (257 levels)');
  });

  it('a read answer (datapoints) its reader leaves to the parse, as the scans leave any such answer', async () => {
    const client = await serve(() => ({ body: `{"items":[{"id":7,"datapoints":[{"timestamp":1,"value":2,"extra":${deep(300)}}]}]}` }));
    const error = await refusal(client.postRead('/timeseries/data/list', {}, () => undefined));
    expect(error.message).toContain('at items[0] (id 7).datapoints[0].extra[0]');
  });

  it("a plain JSON answer (a view's definition, a count)", async () => {
    const client = await serve(() => ({ body: `{"items":[{"count":${deep(MAX_JSON_DEPTH)}}]}` }));
    const error = await refusal(client.aggregateCount('events'));
    expect(error.message).toContain('at items[0].count[0]');
    expect(error.message).toContain('POST /api/v1/projects/scripted/events/aggregate');
  });

  it('/login/status', async () => {
    const client = await serve(() => ({ body: `{"data":{"user":"u","loggedIn":true,"x":${deep(100_000)}}}` }));
    const error = await refusal(client.loginStatus());
    expect(error.message).toContain('at data.x[0]');
  });

  it("the token endpoint's answer", async () => {
    const client = await serve((request) =>
      request.url.startsWith('/oauth2/token') ? { body: `{"access_token":"t","expires_in":3600,"x":${deep(100_000)}}` } : { body: { items: [] } },
    true,
    );
    const error = await refusal(client.get('/events'));
    expect(error.message).toContain('at x[0]');
    expect(error.message).toContain('POST /oauth2/token');
  });

  it('an error body that deep is not parsed: the status error stands, without its message', async () => {
    const client = await serve(() => ({ status: 400, body: `{"error":{"code":400,"message":"m","x":${deep(100_000)}}}` }));
    const error = await client.get('/events').then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(HttpStatusError);
    expect(error).toMatchObject({ status: 400, platformMessage: undefined });
  });

  it(`an answer exactly ${MAX_JSON_DEPTH} levels deep is read`, async () => {
    const client = await serve(() => ({ body: `{"items":[{"count":3,"x":${deep(MAX_JSON_DEPTH - 3)}}]}` }));
    await expect(client.aggregateCount('events')).resolves.toBe(3);
  });
});

describe.concurrent('a number past the range of a double is refused, never made infinite', () => {
  it.each([
    ['1e400', '1e400'],
    ['-1.5E+309', '-1.5E+309'],
    ['a 310-digit integer', `1${'0'.repeat(309)}`],
    ['0.00001e314', '0.00001e314'],
  ])('%s on a list page', async (_name, number) => {
    const client = await serve(() => ({ body: `{"items":[{"id":1},{"id":2,"v":${number}}]}` }));
    const error = await refusal(drainPage(client));
    expect(error.message).toContain('The answer holds a number past the range of a double at items[1] (id 2).v: ');
    expect(error.message).toContain(number.slice(0, 40));
  });

  it.each([
    ['1.7976931348623157e308, the largest double', '1.7976931348623157e308'],
    ['1e-400, which rounds to 0', '1e-400'],
    ['a 308-digit integer', `9${'9'.repeat(307)}`],
    ['0.00001e312', '0.00001e312'],
  ])('%s is taken', async (_name, number) => {
    const client = await serve(() => ({ body: `{"items":[{"id":2,"v":${number}}]}` }));
    const pages: unknown[][] = [];
    for await (const page of drainCursorChain(client, { path: '/events', params: [['limit', '10']] })) pages.push(page.items.toArray());
    expect(pages).toEqual([[{ id: 2, v: JSON.parse(number) as number }]]);
  });

  it('inside a string, a number or a bracket is only text', async () => {
    const client = await serve(() => ({ body: `{"items":[{"id":2,"v":"1e400 ${deep(300)} \\" 1e999"}]}` }));
    const body = await client.postRead('/x', {}, (bytes) => scanSyncPage(bytes, 'none'));
    expect(body.body).toEqual({ items: [{ id: 2, v: `1e400 ${deep(300)} " 1e999` }] });
  });
});
