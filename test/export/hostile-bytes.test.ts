import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJob } from '../../src/export/run/run-job.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { openDuck, parquetAt } from '../support/export-duckdb.js';
import { loadJob, removeTempDirs, SIM_KEY, tempDir } from '../support/export-harness.js';
import { createFakeClock } from '../support/fake-clock.js';
import { send } from '../support/http.js';
import { type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

/**
 * What a server sends is never silently changed and never parsed before it is checked: a number
 * past the range of a double (`1e400`) and nesting without end are refused as broken answers
 * (E_BAD_RESPONSE naming the request and the item) on every route that reads a server's bytes.
 * Each case is the simulator's own answer with one spot rewritten by a proxy in front of it.
 */
const T0 = Date.UTC(2026, 0, 1);
const ASSET_VIEW = { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };
let sim: Simulator;
const proxies: ScriptedServer[] = [];

beforeAll(async () => {
  sim = await startSimulator({
    seed: 42,
    apiKeys: [SIM_KEY],
    events: 300,
    timeseries: 4,
    datapoints: 400,
    instances: { assets: 60, activities: 0, timeseries: 0, edges: 0 },
    // The runs' time, frozen: the datapoints lie before it, in the window [0, T0) of the streams.
    clock: createFakeClock(T0),
  });
});

afterAll(async () => {
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
  await sim.close();
  removeTempDirs();
});

/**
 * A proxy in front of the simulator whose answers to `route` (a path without the base, e.g.
 * `/events`) pass through `rewrite` once: the first answer it changes is the only one changed.
 */
async function rewriting(route: string, rewrite: (text: string) => string): Promise<ScriptedServer> {
  let done = false;
  const proxy = await startScriptedServer(async (request) => {
    const path = request.url.replace('/api/v1/projects/scripted', '');
    const headers = { 'api-key': SIM_KEY, 'content-type': 'application/json' };
    const method = request.method === 'POST' ? 'POST' : 'GET';
    const reply = await send(`${sim.baseUrl}${path}`, { method, headers, ...(method === 'POST' ? { body: request.body } : {}) });
    if (done || reply.status !== 200 || path.split('?')[0] !== route) return { status: reply.status, body: reply.text };
    const text = rewrite(reply.text);
    done = text !== reply.text;
    return { status: reply.status, body: text };
  });
  proxies.push(proxy);
  return proxy;
}

/** Replaces the first match of `pattern` in `text`; fails when there is none (the case would test nothing). */
function replaceFirst(text: string, pattern: RegExp, replacement: string): string {
  if (!pattern.test(text)) throw new Error(`no ${String(pattern)} in the answer`);
  return text.replace(pattern, replacement);
}

async function exportThrough(proxy: ScriptedServer, stream: Record<string, unknown>) {
  const dir = tempDir('hostile-bytes-');
  const out = join(dir, 'out');
  const config = loadJob(dir, {
    baseUrl: proxy.baseUrl,
    out,
    streams: [stream],
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
    output: { formats: ['parquet', 'ndjson'] },
  });
  const result = await runJob({ config, logger: silentLogger, clock: createFakeClock(T0) });
  return { out, result };
}

function firstError(result: Awaited<ReturnType<typeof runJob>>): { code: string | undefined; message: string } {
  const error = result.errors[0]?.error as { code?: string; message?: string } | undefined;
  return { code: error?.code, message: error?.message ?? `no error; the run ended ${result.state}` };
}

const timeseriesIds = () => Array.from({ length: 4 }, (_, i) => sim.dataset.timeseries.item(i).id);
const pointsStream = () => ({ resource: 'datapoints', name: 'points', partitions: 1, timeseries: { ids: timeseriesIds() }, start: 0, end: T0 });
const eventsStream = { resource: 'events', partitions: 1, limit: 100 };
const assetsStream = { resource: 'instances', name: 'assets', view: ASSET_VIEW, limit: 50 };

describe.concurrent('a number past the range of a double is refused, never rewritten', () => {
  it('a kept extra field of an event, 1e400: E_BAD_RESPONSE naming the item and the field', async () => {
    const proxy = await rewriting('/events', (text) => replaceFirst(text, /"externalId":"EV-000003",/, '$&"reading":1e400,'));
    const { result } = await exportThrough(proxy, eventsStream);
    const error = firstError(result);
    expect(error.code, error.message).toBe('E_BAD_RESPONSE');
    expect(error.message).toMatch(/items\[\d+\] \(id \d+\)\.reading/);
    expect(error.message).toContain('1e400');
    expect(error.message).toContain('GET /api/v1/projects/scripted/events?');
  });

  it("a datapoint's value, 1e400: E_BAD_RESPONSE naming the series and the point", async () => {
    const proxy = await rewriting('/timeseries/data/list', (text) => replaceFirst(text, /"value":-?[\d.e-]+/, '"value":1e400'));
    const { result } = await exportThrough(proxy, pointsStream());
    const error = firstError(result);
    expect(error.code, error.message).toBe('E_BAD_RESPONSE');
    expect(error.message).toMatch(/items\[0\] \(id \d+\)\.datapoints\[0\]\.value/);
    expect(error.message).toContain('POST /api/v1/projects/scripted/timeseries/data/list');
  });

  it('a datapoint aggregate, -2e308: E_BAD_RESPONSE, in the check of listed series and in a partition', async () => {
    const proxy = await rewriting('/timeseries/data/list', (text) => replaceFirst(text, /"average":-?[\d.e-]+/, '"average":-2e308'));
    const aggregates = { aggregates: ['average'], granularity: '1d' };
    // Listed series are asked for one aggregate each before any partition starts: the run stops there.
    const listed = await exportThrough(proxy, { ...pointsStream(), ...aggregates }).then(
      ({ result }) => firstError(result),
      (error: unknown) => error as { code: string; message: string },
    );
    expect(listed.code, listed.message).toBe('E_BAD_RESPONSE');
    expect(listed.message).toMatch(/\.datapoints\[\d+\]\.average: -2e308/);
    // Series of a listing are not checked first: the partition meets the number and fails.
    const filtered = { ...pointsStream(), timeseries: { isString: false }, ...aggregates };
    const again = await rewriting('/timeseries/data/list', (text) => replaceFirst(text, /"average":-?[\d.e-]+/, '"average":-2e308'));
    const { result } = await exportThrough(again, filtered);
    const error = firstError(result);
    expect(error.code, error.message).toBe('E_BAD_RESPONSE');
    expect(error.message).toMatch(/\.datapoints\[\d+\]\.average: -2e308/);
  });

  it("an instance's property, 1e400: E_BAD_RESPONSE naming the instance", async () => {
    const proxy = await rewriting('/models/instances/list', (text) => replaceFirst(text, /"criticality":\d+/, '"criticality":1e400'));
    const { result } = await exportThrough(proxy, assetsStream);
    const error = firstError(result);
    expect(error.code, error.message).toBe('E_BAD_RESPONSE');
    expect(error.message).toMatch(/items\[\d+\] \(space "sim_site_\w", externalId "AST-\d+"\)\.properties\./);
    expect(error.message).toContain('.properties.cdf_cdm["CogniteAsset/v1"].criticality: 1e400');
  });

  it("an instance's unknown property (its extra), a 400-digit integer: E_BAD_RESPONSE", async () => {
    const huge = `1${'0'.repeat(400)}`;
    const proxy = await rewriting('/models/instances/list', (text) => replaceFirst(text, /"criticality":/, `"odd":${huge},$&`));
    const { result } = await exportThrough(proxy, assetsStream);
    const error = firstError(result);
    expect(error.code, error.message).toBe('E_BAD_RESPONSE');
    expect(error.message).toContain('.odd');
  });

  it('underflow is a rounding, not a change of kind: 1e-400 is taken as 0, and NDJSON keeps its bytes', async () => {
    const proxy = await rewriting('/timeseries/data/list', (text) => replaceFirst(text, /"value":-?[\d.e-]+/, '"value":1e-400'));
    const { out, result } = await exportThrough(proxy, pointsStream());
    expect(result.errors).toEqual([]);
    expect(result.state).toBe('complete');
    const ndjson = readdirSync(join(out, 'points'), { recursive: true }).map(String).filter((f) => f.endsWith('.ndjson'));
    const text = ndjson.map((f) => readFileSync(join(out, 'points', f), 'utf8')).join('');
    expect(text).toContain('"value":1e-400');
    const duck = await openDuck();
    try {
      const rows = await duck.rows(`SELECT count(*) AS n FROM ${parquetAt(`${out}/points/**/*.parquet`)} WHERE value = 0`);
      expect(Number(rows[0]?.n)).toBeGreaterThanOrEqual(1);
    } finally {
      duck.close();
    }
  });
});

describe.concurrent('nesting without end is refused before anything parses it', () => {
  const deep = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  it('a datapoint with a 100,000-deep extra field: E_BAD_RESPONSE naming the request and the point, no stack overflow', async () => {
    const proxy = await rewriting('/timeseries/data/list', (text) => replaceFirst(text, /\{"timestamp":/, `{"deep":${deep(100_000)},"timestamp":`));
    const { result } = await exportThrough(proxy, pointsStream());
    const error = firstError(result);
    expect(error.message).not.toContain('Maximum call stack size exceeded');
    expect(error.code, error.message).toBe('E_BAD_RESPONSE');
    expect(error.message).toMatch(/items\[0\] \(id \d+\)\.datapoints\[0\]\.deep/);
    expect(error.message).toContain('nested deeper than 256 levels');
    expect(error.message).toContain('POST /api/v1/projects/scripted/timeseries/data/list');
  });

  it('an instance holding a 100,000-deep value: E_BAD_RESPONSE naming the instance', async () => {
    const proxy = await rewriting('/models/instances/list', (text) => replaceFirst(text, /"criticality":/, `"odd":${deep(100_000)},$&`));
    const { result } = await exportThrough(proxy, assetsStream);
    const error = firstError(result);
    expect(error.code, error.message).toBe('E_BAD_RESPONSE');
    expect(error.message).toMatch(/items\[\d+\] \(space "sim_site_\w", externalId "AST-\d+"\)\.properties/);
    expect(error.message).toContain('nested deeper than 256 levels');
  });

  it('a sync answer holding a 100,000-deep value: E_BAD_RESPONSE', async () => {
    const proxy = await rewriting('/models/instances/sync', (text) => replaceFirst(text, /"criticality":/, `"odd":${deep(100_000)},$&`));
    const { result } = await exportThrough(proxy, { ...assetsStream, mode: 'incremental' });
    const error = firstError(result);
    expect(error.code, error.message).toBe('E_BAD_RESPONSE');
    expect(error.message).toMatch(/items\.instances\[\d+\] \(space "sim_site_\w", externalId "AST-\d+"\)/);
  });

  it("the view's definition holding a 100,000-deep value: E_BAD_RESPONSE before the run writes anything", async () => {
    const proxy = await rewriting('/models/views/byids', (text) => replaceFirst(text, /"properties":\{/, `$&"odd":${deep(100_000)},`));
    const dir = tempDir('hostile-bytes-view-');
    const config = loadJob(dir, { baseUrl: proxy.baseUrl, out: join(dir, 'out'), streams: [assetsStream], retry: { maxAttempts: 1 } });
    const failure = await runJob({ config, logger: silentLogger, clock: createFakeClock(T0) }).then(
      (result) => firstError(result),
      (error: unknown) => error as { code: string | undefined; message: string },
    );
    expect(failure.code, failure.message).toBe('E_BAD_RESPONSE');
    expect(failure.message).toContain('nested deeper than 256 levels');
    expect(failure.message).toContain('/models/views/byids');
  });
});
