import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJob } from '../../src/export/run/run-job.js';
import { silentLogger } from '../../src/log.js';
import type { Simulator } from '../../src/simulator/index.js';
import { MIN_POINT_TIME } from '../../src/resources/index.js';
import { expectedRaw, keyOf, ndjsonRows, parquetRows, type Row, seriesIndexes } from '../support/datapoints-export.js';
import { openDuck } from '../support/export-duckdb.js';
import { createFakeClock } from '../support/fake-clock.js';
import { type ProxiedAnswer, proxiedJob, type ProxiedJob } from '../support/proxied-job.js';
import { describeExit, newSimulator, readCheckpoint, runCliWith } from '../support/resume-harness.js';
import type { ScriptedRequest } from '../support/scripted-server.js';

/**
 * A series listing that names a series twice (a platform that ignores `partition`, or a page that
 * repeats the last series of the page before) would have every point of that series written
 * twice: the run refuses the series the second time (E_SERIES_REPEATED, blaming the platform),
 * never exits 0, and commits no point twice. Across processes (split workers, resumes), where no
 * memory of the series taken reaches, the read limit on the series listed against the platform's
 * count of them (source.maxReadFactor) stops a listing that repeats them.
 */
const KEY = 'datapoints-listing-key-1';
const T0 = Date.UTC(2026, 0, 1);
const cleanup: (() => Promise<void>)[] = [];
let sim: Simulator;

beforeAll(async () => {
  sim = await newSimulator({ seed: 31, timeseries: 60, datapoints: 6_000, apiKeys: [KEY] });
});

afterAll(async () => {
  for (const close of cleanup.splice(0)) await close();
});

/** The listing of series (GET /timeseries or POST /timeseries/list) as `path` and `request` show it. */
function isListing(request: ScriptedRequest, path: string): boolean {
  return path.startsWith('/timeseries?') || path === '/timeseries/list';
}

/** The listing request with its `partition` removed: every partition lists every series. */
function withoutPartition(request: ScriptedRequest, path: string): { path: string; body: string } {
  if (request.method === 'POST') {
    const { partition: _, ...body } = JSON.parse(request.body) as Record<string, unknown>;
    return { path, body: JSON.stringify(body) };
  }
  const url = new URL(path, 'http://x');
  url.searchParams.delete('partition');
  return { path: `${url.pathname}${url.search}`, body: request.body };
}

/** A platform whose listing ignores `partition`: every partition lists every series. */
const ignoringPartition: ProxiedAnswer = async (request, path, forward) => {
  if (!isListing(request, path)) return undefined;
  const sent = withoutPartition(request, path);
  const reply = await forward(sent.path, sent.body);
  return { status: reply.status, body: reply.text };
};

async function job(options: Parameters<typeof proxiedJob>[0]): Promise<ProxiedJob> {
  const made = await proxiedJob(options);
  cleanup.push(() => made.close());
  return made;
}

const stream = (extra: Record<string, unknown>) => ({ resource: 'datapoints', name: 'points', end: T0, ...extra });
const FAST = { retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 } };

/** Keys that appear more than once among `rows`. */
function repeatedKeys(rows: readonly Row[], key: (row: Row) => string): string[] {
  const seen = new Set<string>();
  return rows.map(key).filter((at) => seen.has(at) || (seen.add(at), false));
}

/** Every committed row of the output, per format: each key once. */
async function expectNoKeyTwice(out: string, formats: readonly string[]): Promise<number> {
  let rows = 0;
  if (formats.includes('ndjson')) {
    const lines = ndjsonRows(join(out, 'points'));
    expect(repeatedKeys(lines, (row) => keyOf(row.id, row.timestamp)).slice(0, 5)).toEqual([]);
    rows = lines.length;
  }
  if (formats.includes('parquet') && existsSync(join(out, 'points'))) {
    const duck = await openDuck();
    try {
      const table = await parquetRows(duck, join(out, 'points')).catch(() => []);
      expect(repeatedKeys(table, (row) => keyOf(row.timeseriesId, row.timestamp)).slice(0, 5)).toEqual([]);
    } finally {
      duck.close();
    }
  }
  return rows;
}

interface RunSummary {
  state: string;
  errors: { code: string; stream: string; partition: number; message: string }[];
}

describe.concurrent('a series listing that names a series twice', () => {
  it('every partition of 10 lists every series (partition ignored): E_SERIES_REPEATED, exit 1, no _SUCCESS, no point twice; a resume fails alike', async () => {
    const { file, dir, out } = await job({
      sim,
      key: KEY,
      answer: ignoringPartition,
      streams: [stream({ partitions: 10 })],
      output: { formats: ['ndjson'] },
      source: FAST,
    });
    for (const attempt of ['first run', 'resumed']) {
      const exit = await runCliWith(['run', '--config', file, '--json'], { cwd: dir, env: { K: KEY } });
      expect(exit.code, `${attempt}: ${describeExit(exit)}`).toBe(1);
      expect(existsSync(join(out, '_SUCCESS')), attempt).toBe(false);
      const summary = JSON.parse(exit.stdout) as RunSummary;
      expect(summary.errors.map((error) => error.code), attempt).toContain('E_SERIES_REPEATED');
      expect(exit.stderr, attempt).not.toMatch(/this is a bug/i);
      await expectNoKeyTwice(out, ['ndjson']);
    }
  });

  it.each(['ndjson', 'parquet'])(
    'a page that repeats the last series of the page before (%s): E_SERIES_REPEATED naming the series, both pages and the request, blaming the platform',
    async (format) => {
      /** The last series of each page, by the cursor that page gave: the next page starts with it again. */
      const lastOf = new Map<string, unknown>();
      const { file, dir, out } = await job({
        sim,
        key: KEY,
        answer: async (request, path, forward) => {
          if (!isListing(request, path)) return undefined;
          const reply = await forward();
          const page = reply.json<{ items: unknown[]; nextCursor?: string }>();
          const cursor = request.method === 'POST'
            ? (JSON.parse(request.body) as { cursor?: string }).cursor
            : (new URL(path, 'http://x').searchParams.get('cursor') ?? undefined);
          const again = cursor === undefined ? undefined : lastOf.get(cursor);
          if (page.nextCursor !== undefined) lastOf.set(page.nextCursor, page.items.at(-1));
          return { body: again === undefined ? page : { ...page, items: [again, ...page.items] } };
        },
        streams: [stream({ partitions: 2, limit: 10 })],
        output: { formats: [format] },
        source: FAST,
      });
      const exit = await runCliWith(['run', '--config', file, '--json'], { cwd: dir, env: { K: KEY } });
      expect(exit.code, describeExit(exit)).toBe(1);
      expect(existsSync(join(out, '_SUCCESS'))).toBe(false);
      expect(exit.stderr).not.toMatch(/this is a bug/i);
      const summary = JSON.parse(exit.stdout) as RunSummary;
      const refused = summary.errors.find((error) => error.code === 'E_SERIES_REPEATED');
      expect(refused, exit.stdout).toBeDefined();
      // The series, where it was listed first and again (partition and page), the request, the platform blamed.
      expect(refused?.message).toMatch(/series \d+ .*partition [12]\/2, page 1\b.*page 2\b/);
      expect(refused?.message).toMatch(/request id scripted-\d+/);
      expect(refused?.message).toMatch(/the platform/);
      await expectNoKeyTwice(out, [format]);
    },
  );

  it('a worker of 10 whose partition lists every series: the series listed pass maxReadFactor x its share of the count (E_READ_LIMIT)', async () => {
    // 1,500 series: past 2 x its share (150) + the slack of 1,000 series.
    const many = await newSimulator({ seed: 32, timeseries: 1_500, datapoints: 3_000, apiKeys: [KEY] });
    const { config } = await job({
      sim: many,
      key: KEY,
      answer: ignoringPartition,
      streams: [stream({ partitions: 10, limit: 500 })],
      output: { formats: ['ndjson'] },
      source: FAST,
    });
    const worker = { index: 0, count: 10 };
    const result = await runJob({ config, logger: silentLogger, clock: createFakeClock(T0), worker });
    expect(result.state).not.toBe('complete');
    const codes = result.errors.map(({ error }) => (error as { code?: string }).code);
    expect(codes).toEqual(['E_READ_LIMIT']);
    const { message } = result.errors[0]?.error as Error;
    expect(message).toMatch(/listed 1,[0-9]{3} series, more than 2 times the 150/);
  });

  it('an honest listing: every series taken once, and the checkpoint counts the series each partition listed', async () => {
    const { config, out } = await job({ sim, key: KEY, answer: () => undefined, streams: [stream({ partitions: 3, limit: 7 })], output: { formats: ['ndjson'] } });
    const result = await runJob({ config, logger: silentLogger, clock: createFakeClock(T0) });
    expect(result.errors).toEqual([]);
    expect(result.state).toBe('complete');
    const parts = Object.values(readCheckpoint(out).streams.points?.parts ?? {});
    expect(parts.map((part) => part.points?.listedSeries ?? 0).reduce((a, b) => a + b, 0)).toBe(60);
    const points = expectedRaw(sim, seriesIndexes(sim), { start: MIN_POINT_TIME, end: T0 }).ndjson.size;
    expect(points).toBeGreaterThan(1000);
    expect(await expectNoKeyTwice(out, ['ndjson'])).toBe(points);
  });
});
