import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../src/cli/exit-codes.js';
import { loadConfig } from '../../src/config/load-config.js';
import { runJob } from '../../src/export/run/run-job.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { writePointsJob } from '../support/datapoints-export.js';
import { createFakeClock } from '../support/fake-clock.js';
import { type ProxiedAnswer, proxiedJob } from '../support/proxied-job.js';

/**
 * The platform's 400 on a chain's first request (no cursor yet) refuses the stream's query: exit 2
 * (E_QUERY_REFUSED), the message names the stream, the platform's words and what to change in the
 * job file. A 400 later in a chain (with a cursor) stays an HTTP error (exit 1). A datapoints
 * stream with aggregates and an explicit series list finds a series they are refused for (a string
 * series) before any partition commits, so that the fixed list then runs clean instead of being
 * refused as drift.
 *
 * Data: seed 28, 60 series (6 of them strings), 60,000 points; 300 events.
 */
const KEY = 'query-refused-key-0001';
const T0 = Date.UTC(2026, 0, 1);
const WINDOW = { start: Date.UTC(2025, 9, 1), end: Date.UTC(2025, 11, 1) };

let sim: Simulator;
const dirs: string[] = [];

beforeAll(async () => {
  const clock = createFakeClock(T0);
  sim = await startSimulator({ seed: 28, timeseries: 60, datapoints: 60_000, events: 300, apiKeys: [KEY], clock });
});

afterAll(async () => {
  await sim.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The ids of the simulator's series, numeric or string. */
function seriesIds(strings: boolean): number[] {
  const ids: number[] = [];
  for (let index = 0; index < sim.dataset.timeseries.count; index++) {
    const item = sim.dataset.timeseries.item(index);
    if (item.isString === strings) ids.push(item.id);
  }
  return ids;
}

/** Runs a job of one aggregates stream over `ids` into `out` (the same folder each time). */
function runAggregates(dir: string, out: string, ids: number[]) {
  const stream = { resource: 'datapoints', name: 'hourly', partitions: 3, timeseries: { ids }, aggregates: ['average'], granularity: '1h', ...WINDOW };
  const file = writePointsJob(join(dir, 'job.yaml'), { baseUrl: sim.baseUrl, out, streams: [stream], maxRows: 200 });
  return runJob({ config: loadConfig(file, { SIM_KEY: KEY }), logger: silentLogger, clock: createFakeClock(T0) });
}

/** Every shard file under `folder`. */
function shards(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { recursive: true, encoding: 'utf8' }).filter((name) => /\.(parquet|ndjson)$/.test(name));
}

describe('a datapoints stream with aggregates and a series they are refused for', () => {
  it('is refused before any partition commits (exit 2, the series list named); the fixed list then runs clean', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bulk-extract-query-refused-'));
    dirs.push(dir);
    const out = join(dir, 'out');
    const numeric = seriesIds(false);
    const [string] = seriesIds(true);
    expect(string).toBeDefined();
    // The string series last: partitions 1 and 2 hold numeric series only, and would commit.
    const error = await runAggregates(dir, out, [...numeric.slice(0, 20), string!]).then(
      (result) => result.errors[0]?.error ?? new Error(`no error: ${result.state}`),
      (thrown: unknown) => thrown,
    );
    expect(error).toMatchObject({ code: 'E_QUERY_REFUSED', stream: 'hourly' });
    expect(exitCodeOf(error as { code: string })).toBe(2);
    const message = (error as Error).message;
    expect(message).toContain('The platform refused the query of stream hourly (HTTP 400: ');
    expect(message).toContain('is a string series; aggregates exist for numeric series only');
    expect(message).toContain('Remove the series it names from timeseries.ids of stream hourly in the job file');
    expect(shards(join(out, 'hourly')), 'no shard committed').toEqual([]);
    const checkpoint = join(out, '_checkpoint.json');
    if (existsSync(checkpoint)) expect(readFileSync(checkpoint, 'utf8')).not.toMatch(/"rows":\s*[1-9]/);

    const fixed = await runAggregates(dir, out, numeric.slice(0, 20));
    expect(fixed.errors).toEqual([]);
    expect(fixed.state).toBe('complete');
    expect(shards(join(out, 'hourly')).length).toBeGreaterThan(0);
  });
});

describe('a 400 from the platform on a chain\'s first request is the query refused; later in the chain it is not', () => {
  /** Runs an events job (2 partitions, pages of 50) whose platform answers `answer`; its first error. */
  async function eventsError(answer: ProxiedAnswer, streams?: Record<string, unknown>[]) {
    const job = await proxiedJob({
      sim,
      key: KEY,
      answer,
      streams: streams ?? [{ resource: 'events', name: 'ev', partitions: 2, limit: 50 }],
      output: { formats: ['ndjson'] },
      source: { retry: { baseDelayMs: 1, maxDelayMs: 5 } },
    });
    try {
      const result = await runJob({ config: job.config, logger: silentLogger });
      return result.errors[0]?.error;
    } catch (thrown) {
      return thrown;
    } finally {
      await job.close();
    }
  }
  const refuse = { status: 400, body: { error: { code: 400, message: "Invalid filter 'source'" } } };
  const listing = (path: string, body: string | undefined) => {
    const cursor = path.includes('cursor=') || (body ?? '').includes('"cursor"');
    return { list: /^\/events(\/list)?(\?|$)/.test(path), cursor };
  };

  it('the first page refused: E_QUERY_REFUSED, exit 2, naming the stream, the platform\'s words and the job file', async () => {
    const error = await eventsError((request, path) => {
      const { list, cursor } = listing(path, request.body);
      return list && !cursor ? refuse : undefined;
    });
    expect(error).toMatchObject({ code: 'E_QUERY_REFUSED', stream: 'ev' });
    expect(exitCodeOf(error as { code: string })).toBe(2);
    const said = "The platform refused the query of stream ev (HTTP 400: Invalid filter 'source'). Change the filter of stream ev";
    expect((error as Error).message.startsWith(`${said} in the job file`), (error as Error).message).toBe(true);
  });

  it('a page with a cursor refused: an HTTP error as before, exit 1', async () => {
    const error = await eventsError((request, path) => {
      const { list, cursor } = listing(path, request.body);
      return list && cursor ? refuse : undefined;
    });
    expect(error).toMatchObject({ code: 'E_HTTP_STATUS', status: 400 });
    expect(exitCodeOf(error as { code: string })).toBe(1);
  });

  it('the first page of a datapoints stream\'s series listing refused: E_QUERY_REFUSED naming the stream', async () => {
    const streams = [{ resource: 'datapoints', name: 'raw', partitions: 2, limit: 50, ...WINDOW }];
    const error = await eventsError((request, path) => {
      const list = /^\/timeseries(\/list)?(\?|$)/.test(path);
      const cursor = path.includes('cursor=') || (request.body ?? '').includes('"cursor"');
      // The run's count of the series (limit 1 pages and aggregates) pass; the partitions' listing does not.
      return list && !cursor && !path.includes('limit=1&') && !path.endsWith('limit=1') ? refuse : undefined;
    }, streams);
    expect(error).toMatchObject({ code: 'E_QUERY_REFUSED', stream: 'raw' });
    expect(exitCodeOf(error as { code: string })).toBe(2);
    expect((error as Error).message).toContain('Change the series filter (timeseries) of stream raw in the job file');
  });
});

describe('an instances filter the platform refuses', () => {
  it('a property of a view named without its version: E_QUERY_REFUSED, exit 2, saying how a property is named', async () => {
    const instances = { assets: 50, activities: 0, timeseries: 0, edges: 0 };
    const dm = await startSimulator({ seed: 29, apiKeys: [KEY], instances });
    const dir = mkdtempSync(join(tmpdir(), 'bulk-extract-query-refused-'));
    dirs.push(dir);
    try {
      const stream = {
        resource: 'instances',
        name: 'assets',
        view: { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' },
        filter: { equals: { property: ['cdf_cdm', 'CogniteAsset', 'name'], value: 'pump' } },
      };
      const out = join(dir, 'out');
      const file = writePointsJob(join(dir, 'job.yaml'), { baseUrl: dm.baseUrl, out, streams: [stream] });
      const result = await runJob({ config: loadConfig(file, { SIM_KEY: KEY }), logger: silentLogger });
      const error = result.errors[0]?.error;
      expect(error).toMatchObject({ code: 'E_QUERY_REFUSED', stream: 'assets' });
      expect(exitCodeOf(error as { code: string })).toBe(2);
      expect((error as Error).message).toContain("container cdf_cdm:CogniteAsset has no property 'name')");
      expect((error as Error).message).toContain('(a property is [space, view/version, property])');
      expect(shards(join(out, 'assets'))).toEqual([]);
    } finally {
      await dm.close();
    }
  });
});
