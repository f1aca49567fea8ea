import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJob } from '../../src/export/run/run-job.js';
import { MIN_POINT_TIME } from '../../src/resources/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { expectedRaw, expectPoints, ndjsonRows, seriesIndexes } from '../support/datapoints-export.js';
import { openDuck } from '../support/export-duckdb.js';
import { createFakeClock } from '../support/fake-clock.js';
import { captureLogger } from '../support/log-capture.js';
import { proxiedJob, type ProxiedJob } from '../support/proxied-job.js';
import { describeExit, newSimulator, runCliWith } from '../support/resume-harness.js';
import type { ScriptedRequest } from '../support/scripted-server.js';

/**
 * A series missing from an answer (asked with `ignoreUnknownIds: true`) is not taken for deleted:
 * it is asked for again with `ignoreUnknownIds: false`, and only the platform's 400 whose
 * `missing` names it confirms that the platform does not know it. A platform that leaves out
 * series it knows fails the run (E_SERIES_MISSING) rather than have their points lost; a series
 * really deleted in the middle of the run is skipped, and counted and logged once.
 */
const KEY = 'datapoints-missing-key-1';
const T0 = Date.UTC(2026, 0, 1);
const POINTS_PATH = '/timeseries/data/list';
const cleanup: (() => Promise<void>)[] = [];
let sim: Simulator;

beforeAll(async () => {
  // 100 series a partition, 500 points each, asked for 1000 at a time; short answers (a share of
  // each query's limit, with a cursor) leave many series for a later request.
  const faults = { shortPageRate: 0.6 };
  sim = await newSimulator({ seed: 33, timeseries: 200, datapoints: 100_000, apiKeys: [KEY], faults });
});

afterAll(async () => {
  for (const close of cleanup.splice(0)) await close();
});

interface PointsBody {
  items: { id?: number; externalId?: string; cursor?: string }[];
  ignoreUnknownIds?: boolean;
}

interface PointsAnswer {
  items: { id: number; datapoints: unknown[] }[];
}

function isPoints(request: ScriptedRequest, path: string): boolean {
  return request.method === 'POST' && path === POINTS_PATH;
}

async function job(answer: Parameters<typeof proxiedJob>[0]['answer'], simulator = sim): Promise<ProxiedJob> {
  const made = await proxiedJob({
    sim: simulator,
    key: KEY,
    answer,
    streams: [{ resource: 'datapoints', name: 'points', partitions: 2, end: T0 }],
    output: { formats: ['ndjson'] },
    source: { retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 } },
  });
  cleanup.push(() => made.close());
  return made;
}

interface RunSummary {
  errors: { code: string; message: string }[];
}

describe.concurrent('series missing from an answer', () => {
  it('a platform that leaves out a third of the continuing queries: E_SERIES_MISSING, exit 1, no _SUCCESS', async () => {
    /** Series answered before: a query of one goes on (with its cursor, or started again by time). */
    const answered = new Set<number>();
    let continuing = 0;
    const { file, dir, out } = await job(async (request, path, forward) => {
      if (!isPoints(request, path)) return undefined;
      const asked = JSON.parse(request.body) as PointsBody;
      const reply = await forward();
      if (reply.status !== 200 || asked.ignoreUnknownIds === false) return { status: reply.status, body: reply.text };
      const answer = reply.json<PointsAnswer>();
      const goesOn = (query: PointsBody['items'][number]) => query.cursor !== undefined || answered.has(query.id ?? 0);
      const dropped = new Set(asked.items.flatMap((query, i) => (goesOn(query) && continuing++ % 3 === 0 ? [i] : [])));
      for (const item of answer.items) answered.add(item.id);
      return { body: { ...answer, items: answer.items.filter((_, i) => !dropped.has(i)) } };
    });
    const exit = await runCliWith(['run', '--config', file, '--json'], { cwd: dir, env: { K: KEY } });
    expect(exit.code, describeExit(exit)).toBe(1);
    expect(existsSync(join(out, '_SUCCESS'))).toBe(false);
    const summary = JSON.parse(exit.stdout) as RunSummary;
    expect(summary.errors.map((error) => error.code)).toContain('E_SERIES_MISSING');
    expect(summary.errors.find((error) => error.code === 'E_SERIES_MISSING')?.message).toMatch(/left series \d+ out of its answer/);
    expect(exit.stderr).not.toMatch(/does not know/);
    expect(continuing).toBeGreaterThan(0);
  });

  it('a platform that answers `items: []` every time: E_SERIES_MISSING, exit 1, no _SUCCESS, nothing counted unknown', async () => {
    const empty = { body: { items: [] } };
    const { file, dir, out } = await job((request, path) => (isPoints(request, path) ? empty : undefined));
    const exit = await runCliWith(['run', '--config', file, '--json'], { cwd: dir, env: { K: KEY } });
    expect(exit.code, describeExit(exit)).toBe(1);
    expect(existsSync(join(out, '_SUCCESS'))).toBe(false);
    const summary = JSON.parse(exit.stdout) as RunSummary;
    expect(summary.errors.map((error) => error.code)).toEqual(['E_SERIES_MISSING', 'E_SERIES_MISSING']);
    expect(exit.stderr).not.toMatch(/does not know/);
  });

  it('a series deleted after its first answer, read in windows: skipped, its points before kept, logged and counted once; the run completes', async () => {
    // One series of 450,000 points: after its first answer (100,000 points) its rest is split into windows.
    const long = await newSimulator({ seed: 28, timeseries: 1, datapoints: 450_000, apiKeys: [KEY] });
    const deleted = long.dataset.timeseries.item(0).id;
    let answered = false;
    const { config, out } = await job(async (request, path, forward) => {
      if (!isPoints(request, path)) return undefined;
      const asked = JSON.parse(request.body) as PointsBody;
      if (answered && asked.ignoreUnknownIds === false && asked.items.some((query) => query.id === deleted)) {
        return { status: 400, body: { error: { code: 400, message: 'Time series ids not found', missing: [{ id: deleted }] } } };
      }
      const reply = await forward();
      if (reply.status !== 200) return { status: reply.status, body: reply.text };
      const answer = reply.json<PointsAnswer>();
      if (!answered) {
        answered = true;
        return { body: answer };
      }
      return { body: { ...answer, items: answer.items.filter((item) => item.id !== deleted) } };
    }, long);
    const log = captureLogger('info');
    const result = await runJob({ config, logger: log.logger, clock: createFakeClock(T0) });
    expect(result.errors).toEqual([]);
    expect(result.state).toBe('complete');
    const warnings = log.records().filter((record) => /does not know/.test(String(record.msg)));
    expect(warnings.flatMap((record) => record.series as unknown[])).toEqual([{ id: deleted }]);
    expect(result.manifest.streams.points?.unknownSeries).toEqual([{ id: deleted }]);
    // The points of its first answer, once each: the first 100,000 of the series.
    const all = expectedRaw(long, [0], { start: MIN_POINT_TIME, end: T0 });
    const rows = ndjsonRows(join(out, 'points'));
    expect(rows).toHaveLength(100_000);
    const first = [...all.ndjson.entries()].slice(0, 100_000);
    const duck = await openDuck();
    try {
      await expectPoints(duck, join(out, 'points'), { parquet: new Map(), ndjson: new Map(first) }, ['ndjson']);
    } finally {
      duck.close();
    }
  });

  it('every series there: asked once each, the export exact (no extra request without a missing series)', async () => {
    const { config, out, proxy } = await job(() => undefined);
    const result = await runJob({ config, logger: captureLogger('warn').logger, clock: createFakeClock(T0) });
    expect(result.errors).toEqual([]);
    const confirming = (body: string) => (JSON.parse(body) as PointsBody).ignoreUnknownIds === false;
    const confirmations = proxy.requests.filter((r) => r.url.endsWith(POINTS_PATH) && confirming(r.body));
    expect(confirmations).toEqual([]);
    const duck = await openDuck();
    try {
      await expectPoints(duck, join(out, 'points'), expectedRaw(sim, seriesIndexes(sim), { start: MIN_POINT_TIME, end: T0 }), ['ndjson']);
    } finally {
      duck.close();
    }
  });
});
