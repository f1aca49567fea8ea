import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { finish, runCli, startCli } from '../support/cli.js';
import { send } from '../support/http.js';

interface StartLine {
  baseUrl: string;
  origin: string;
  tokenUrl: string;
  project: string;
  events: number;
  credentials: string;
}

describe('bulk-extract simulate', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    'prints the base URL once listening, serves 1M events on demand, and stops cleanly on %s',
    async (signal) => {
      const { child, firstLine } = startCli([
        'simulate',
        '--events',
        '1000000',
        '--project',
        'acme',
        '--api-key',
        'cli-test-key-1',
      ]);
      const line = JSON.parse(await firstLine) as StartLine;
      expect(line.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1\/projects\/acme$/);
      expect(line).toMatchObject({ project: 'acme', events: 1_000_000, credentials: 'given' });

      const page = await send(`${line.baseUrl}/events?limit=1000&partition=10/10`, {
        headers: { 'api-key': 'cli-test-key-1', 'x-cdp-app': 'cli-test' },
      });
      expect(page.status).toBe(200);
      expect(page.json<{ items: unknown[] }>().items).toHaveLength(1000);
      expect((await send(`${line.baseUrl}/events`, { headers: { 'api-key': 'demo-api-key' } })).status).toBe(
        401,
      );

      child.kill(signal);
      const done = await finish(child);
      expect(done.code).toBe(0);
      expect(done.stderr).toContain('simulator stopped');
      expect(done.stderr).not.toContain('cli-test-key-1');
      const stopped = done.stderr
        .split('\n')
        .filter((text) => text.includes('simulator stopped'))
        .map((text) => JSON.parse(text) as { stats: { clients: unknown } });
      expect(stopped[0]?.stats.clients).toEqual({
        platform: [
          { app: 'cli-test', sdk: null, requests: 1 },
          { app: null, sdk: null, requests: 1 },
        ],
        token: [],
      });
    },
  );

  it('accepts the documented demo credentials when none are given', async () => {
    const { child, firstLine } = startCli(['simulate', '--events', '10']);
    const line = JSON.parse(await firstLine) as StartLine;
    expect(line.credentials).toBe('demo');
    const headers = { 'api-key': 'demo-api-key' };
    expect((await send(`${line.baseUrl}/events`, { headers })).status).toBe(200);
    const token = await send(line.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&client_id=demo&client_secret=demo-secret',
    });
    expect(token.status).toBe(200);
    child.kill('SIGTERM');
    expect((await finish(child)).code).toBe(0);
  });

  it('reads a fault profile from a file with --faults @FILE', async () => {
    const { child, firstLine } = startCli([
      'simulate',
      '--events',
      '10',
      '--faults',
      '@config/faults-throttled.json',
    ]);
    const line = JSON.parse(await firstLine) as StartLine;
    const headers = { 'api-key': 'demo-api-key' };
    // The profile caps concurrent requests at 10 and holds each for 20 ms: 25 at once must meet 429s.
    const replies = await Promise.all(
      Array.from({ length: 25 }, () => send(`${line.baseUrl}/events`, { headers })),
    );
    const throttled = replies.filter((r) => r.status === 429);
    expect(throttled.length).toBeGreaterThan(0);
    expect(throttled[0]?.text).toContain("maximum number='10' of concurrent requests");
    child.kill('SIGTERM');
    await finish(child);
  });

  it('serves --datapoints N points in all over the time series at --start-time, and says so on its first line', async () => {
    const start = '2026-01-01T00:00:00.000Z';
    const { child, firstLine } = startCli(['simulate', '--timeseries', '3', '--datapoints', '250_000', '--start-time', start]);
    const line = JSON.parse(await firstLine) as StartLine & { datapoints: number };
    expect(line).toMatchObject({ timeseries: 3, datapoints: 250_000, startTime: start });
    const headers = { 'api-key': 'demo-api-key', 'content-type': 'application/json' };
    const series = await send(`${line.baseUrl}/timeseries`, { headers });
    // Every point of every series, bad ones included, from 1900 to the start (live series grow after it).
    const window = { start: Date.UTC(1900, 0, 1), end: Date.parse(start) };
    const everything = { ...window, limit: 100_000, ignoreBadDataPoints: false };
    let points = 0;
    for (const { id } of series.json<{ items: { id: number }[] }>().items) {
      let cursor: string | undefined;
      do {
        const body = JSON.stringify({ items: [{ id, ...everything, ...(cursor === undefined ? {} : { cursor }) }] });
        const reply = await send(`${line.baseUrl}/timeseries/data/list`, { method: 'POST', headers, body });
        expect(reply.status, reply.text).toBe(200);
        const [item] = reply.json<{ items: { datapoints: unknown[]; nextCursor?: string }[] }>().items;
        points += item?.datapoints.length ?? 0;
        cursor = item?.nextCursor;
      } while (cursor !== undefined);
    }
    expect(points).toBe(250_000);
    child.kill('SIGTERM');
    expect((await finish(child)).code).toBe(0);
  });

  it('refuses a --start-time that is not a time, naming the flag', async () => {
    const exit = await runCli(['simulate', '--start-time', 'yesterday']);
    expect(exit.code).toBe(2);
    expect(exit.stderr).toContain("--start-time: expected epoch milliseconds or an ISO 8601 date-time with a zone (2026-01-01T00:00:00Z), got 'yesterday'");
  });

  it('serves --instances N data-model instances, and says so on its first line', async () => {
    const { child, firstLine } = startCli(['simulate', '--instances', '40']);
    const line = JSON.parse(await firstLine) as StartLine & { instances: unknown };
    expect(line).toMatchObject({ instances: { assets: 40, activities: 80, timeseries: 40, edges: 80 } });
    const headers = { 'api-key': 'demo-api-key', 'content-type': 'application/json' };
    const body = JSON.stringify({ with: { all: { nodes: {}, limit: 2000 } }, select: { all: {} } });
    const reply = await send(`${line.baseUrl}/models/instances/sync`, { method: 'POST', headers, body });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json<{ items: { all: unknown[] } }>().items.all).toHaveLength(160);
    child.kill('SIGTERM');
    expect((await finish(child)).code).toBe(0);
  });

  it('changes them with --churn as its clock passes, and says so on its first line', async () => {
    // With changes a thousand a second from the start, how many nodes the first call sees depends
    // on when it comes: only that the feed then shows changes is certain.
    const { child, firstLine } = startCli(['simulate', '--instances', '40', '--churn', '1000']);
    const line = JSON.parse(await firstLine) as StartLine & { instances: unknown; churn: number };
    expect(line).toMatchObject({ churn: 1000 });
    const headers = { 'api-key': 'demo-api-key', 'content-type': 'application/json' };
    const body = JSON.stringify({ with: { all: { nodes: {}, limit: 2000 } }, select: { all: {} } });
    const first = await send(`${line.baseUrl}/models/instances/sync`, { method: 'POST', headers, body });
    expect(first.status, first.text).toBe(200);
    const backfill = first.json<{ items: { all: unknown[] }; nextCursor: { all: string } }>();
    expect(backfill.items.all.length).toBeGreaterThan(0);
    // A thousand changes a second, applied as the clock passes: following the cursor, the feed soon has some.
    let cursor = backfill.nextCursor;
    let changed = 0;
    for (let call = 0; call < 1000 && changed === 0; call++) {
      const next = JSON.stringify({ with: { all: { nodes: {}, limit: 2000 } }, select: { all: {} }, cursors: cursor });
      const reply = await send(`${line.baseUrl}/models/instances/sync`, { method: 'POST', headers, body: next });
      const answer = reply.json<{ items: { all: unknown[] }; nextCursor: { all: string } }>();
      changed = answer.items.all.length;
      cursor = answer.nextCursor;
    }
    expect(changed).toBeGreaterThan(0);
    child.kill('SIGTERM');
    expect((await finish(child)).code).toBe(0);
  });

  it('creates the demo subscription, or those --subscription names, and says so on its first line', async () => {
    const demo = startCli(['simulate', '--timeseries', '5']);
    const demoLine = JSON.parse(await demo.firstLine) as StartLine & { subscriptions: unknown };
    expect(demoLine.subscriptions).toEqual([{ externalId: 'sim-all-points', partitionCount: 4 }]);
    const feed = await send(`${demoLine.baseUrl}/timeseries/subscriptions/data/list`, {
      method: 'POST',
      headers: { 'api-key': 'demo-api-key', 'content-type': 'application/json' },
      body: JSON.stringify({ externalId: 'sim-all-points', partitions: [{ index: 3 }] }),
    });
    expect(feed.status, feed.text).toBe(200);
    const { partitions } = feed.json<{ partitions: { index: number }[] }>();
    expect(partitions.map((partition) => partition.index)).toEqual([3]);
    demo.child.kill('SIGTERM');
    expect((await finish(demo.child)).code).toBe(0);
    const { child, firstLine } = startCli(['simulate', '--subscription', 'numbers:3:numeric', '--subscription', 'all:1']);
    const line = JSON.parse(await firstLine) as StartLine & { subscriptions: unknown };
    expect(line.subscriptions).toEqual([
      { externalId: 'numbers', partitionCount: 3 },
      { externalId: 'all', partitionCount: 1 },
    ]);
    const reply = await send(`${line.baseUrl}/timeseries/subscriptions`, { headers: { 'api-key': 'demo-api-key' } });
    const items = reply.json<{ items: { externalId: string; filter?: unknown; timeSeriesCount: number }[] }>().items;
    expect(items.map((item) => [item.externalId, item.filter])).toEqual([
      ['numbers', { equals: { property: ['isString'], value: false } }],
      ['all', undefined],
    ]);
    expect(items[1]?.timeSeriesCount).toBe(1000);
    child.kill('SIGTERM');
    expect((await finish(child)).code).toBe(0);
  });

  it.each([
    [['simulate', '--subscription', 'all'], /--subscription expects ID:PARTITIONS\[:numeric\|string\]/],
    [['simulate', '--subscription', 'all:0'], /--subscription expects .*got 'all:0'/],
    [['simulate', '--instances', 'assets=lots'], /Invalid --instances: expected N or kind=count pairs/],
    [['simulate', '--instances', 'vertices=5'], /Invalid --instances: .*vertices/],
    [['simulate', '--churn', 'often'], /--churn expects a number, got 'often'/],
    [['simulate', '--churn=-1'], /churn: .*>=0/],
    [['simulate', '--datapoints', 'lots'], /--datapoints expects an integer, got 'lots'/],
    [['simulate', '--bogus'], /Unknown option '--bogus'/],
    [['simulate', '--events', 'many'], /--events expects an integer, got 'many'/],
    [['simulate', '--events=-5'], /events: .*>=0/],
    [['simulate', '--client', 'no-colon'], /--client expects ID:SECRET/],
    [['simulate', '--faults', 'rate429=2'], /Invalid --faults: rate429: .*<=1/],
    [['simulate', '--faults', 'nonsense=1'], /Invalid --faults: .*nonsense/],
    [['simulate', '--faults', '@/nonexistent/faults.json'], /cannot read the file/],
    [['frobnicate'], /unknown command 'frobnicate'/],
  ])('rejects %j with exit code 2 and a message naming the problem', async (args, message) => {
    const done = await runCli(args);
    expect(done.code).toBe(2);
    expect(done.stderr).toMatch(message);
  });

  it('on a port in use: one line naming host and port and how to choose another, exit code 2', async () => {
    const occupied = createServer();
    await new Promise<void>((resolve) => occupied.listen(0, '127.0.0.1', resolve));
    const address = occupied.address();
    const port = address !== null && typeof address === 'object' ? address.port : -1;
    try {
      const done = await runCli(['simulate', '--port', String(port)]);
      expect(done.code).toBe(2);
      expect(done.stdout).toBe('');
      expect(done.stderr).toBe(
        `bulk-extract simulate: cannot listen on 127.0.0.1:${port}: the port is in use (EADDRINUSE). ` +
        'Choose another with --port PORT, or --port 0 to pick a free one.\n',
      );
    } finally {
      await new Promise<void>((resolve) => occupied.close(() => resolve()));
    }
  });

  it('prints help and version', async () => {
    const help = await runCli(['simulate', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--faults SPEC');
    const version = await runCli(['--version']);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
