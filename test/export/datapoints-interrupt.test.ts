import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJob } from '../../src/export/run/run-job.js';
import { silentLogger } from '../../src/log.js';
import { MIN_POINT_TIME } from '../../src/resources/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { expectedRaw, expectRows, keyOf, ndjsonRows, seriesIndexes } from '../support/datapoints-export.js';
import { createFakeClock } from '../support/fake-clock.js';
import { proxiedJob, type ProxiedJob } from '../support/proxied-job.js';
import { newSimulator, readCheckpoint } from '../support/resume-harness.js';

/**
 * A run stopped (Ctrl-C, SIGTERM) while a datapoints partition lists its next page of series:
 * what it committed is exact, and the run after it reads the rest, no point lost or repeated.
 * The answer the partition took just before, which finished its series, is written before the
 * stop is committed: a checkpoint that forgot those series without their last points would lose
 * them for good. A resumed listing whose first page repeats the last series of the page before
 * is refused as within one run: that series is among the checkpoint's series not done yet (the
 * next page is listed before the last series of a page is asked for).
 */
const KEY = 'datapoints-interrupt-key';
const T0 = Date.UTC(2026, 0, 1);
let sim: Simulator;
const cleanup: (() => Promise<void>)[] = [];

beforeAll(async () => {
  // 300 series of about 20 points: one request reads a listing page's 100 series to their end.
  sim = await newSimulator({ seed: 41, timeseries: 300, datapoints: 6_000, apiKeys: [KEY] });
});

afterAll(async () => {
  for (const close of cleanup.splice(0)) await close();
});

/** The listing (GET /timeseries or POST /timeseries/list), and whether it asks for a page after the first. */
function listingPage(request: { body: string }, path: string): 'first' | 'next' | undefined {
  if (!path.startsWith('/timeseries?') && path !== '/timeseries/list') return undefined;
  return path.includes('cursor=') || request.body.includes('"cursor"') ? 'next' : 'first';
}

describe.concurrent('a run stopped while a partition lists its next page of series', () => {
  it('commits the series it read to their end, and the next run reads the rest: every point once', async () => {
    const stop = new AbortController();
    let stopped = false;
    const made: ProxiedJob = await proxiedJob({
      sim,
      key: KEY,
      // The second page of the listing is asked for once the first page's series are answered:
      // the run is stopped then, and the page never comes.
      answer: (request, path) => {
        if (listingPage(request, path) !== 'next' || stopped) return undefined;
        stopped = true;
        stop.abort();
        return { hold: true };
      },
      streams: [{ resource: 'datapoints', name: 'points', partitions: 1, limit: 100, end: T0 }],
      output: { formats: ['ndjson'] },
    });
    cleanup.push(() => made.close());
    const clock = createFakeClock(T0);
    const first = await runJob({ config: made.config, logger: silentLogger, clock, signal: stop.signal });
    expect(stopped).toBe(true);
    expect(first.state).toBe('interrupted');
    const part = readCheckpoint(made.out).streams.points?.parts[1];
    expect(part?.points?.listing, 'the checkpoint resumes the listing at its second page').not.toBeNull();
    const second = await runJob({ config: made.config, logger: silentLogger, clock });
    expect(second.errors).toEqual([]);
    expect(second.state).toBe('complete');
    const expected = expectedRaw(sim, seriesIndexes(sim), { start: MIN_POINT_TIME, end: T0 });
    const rows = ndjsonRows(join(made.out, 'points'));
    expectRows('NDJSON', rows, expected.ndjson, (row) => keyOf(row.id, row.timestamp));
  });

  it('a resumed listing whose first page repeats the last series of the page before: E_SERIES_REPEATED, no point twice', async () => {
    const stop = new AbortController();
    let run = 1;
    let last: unknown;
    const made: ProxiedJob = await proxiedJob({
      sim,
      key: KEY,
      answer: async (request, path, forward) => {
        const page = listingPage(request, path);
        if (page === 'first') {
          const reply = await forward();
          last = reply.json<{ items: unknown[] }>().items.at(-1);
          return { body: reply.text };
        }
        if (page !== 'next') return undefined;
        if (run === 1) {
          stop.abort();
          return { hold: true };
        }
        const reply = await forward();
        const items = reply.json<{ items: unknown[] }>().items;
        return { body: { ...reply.json<object>(), items: [last, ...items] } };
      },
      streams: [{ resource: 'datapoints', name: 'points', partitions: 1, limit: 100, end: T0 }],
      output: { formats: ['ndjson'] },
    });
    cleanup.push(() => made.close());
    const clock = createFakeClock(T0);
    const first = await runJob({ config: made.config, logger: silentLogger, clock, signal: stop.signal });
    expect(first.state).toBe('interrupted');
    run = 2;
    const second = await runJob({ config: made.config, logger: silentLogger, clock });
    expect(second.state).not.toBe('complete');
    const codes = second.errors.map(({ error }) => (error as { code?: string }).code);
    expect(codes).toEqual(['E_SERIES_REPEATED']);
    const { id } = last as { id: number };
    expect((second.errors[0]?.error as Error).message).toContain(`series ${id} twice`);
    const keys = ndjsonRows(join(made.out, 'points')).map((row) => keyOf(row.id, row.timestamp));
    expect(keys.length - new Set(keys).size, 'points written twice').toBe(0);
  });

  it('a run stopped before a resumed partition sends its first request is interrupted, not done', async () => {
    const stop = new AbortController();
    const made: ProxiedJob = await proxiedJob({
      sim,
      key: KEY,
      // The first run lists every series (one page), and is stopped at its first request for points.
      answer: (_, path) => {
        if (path !== '/timeseries/data/list' || stop.signal.aborted) return undefined;
        stop.abort();
        return { hold: true };
      },
      streams: [{ resource: 'datapoints', name: 'points', partitions: 1, limit: 1000, end: T0 }],
      output: { formats: ['ndjson'] },
    });
    cleanup.push(() => made.close());
    const clock = createFakeClock(T0);
    const first = await runJob({ config: made.config, logger: silentLogger, clock, signal: stop.signal });
    expect(first.state).toBe('interrupted');
    expect(readCheckpoint(made.out).streams.points?.parts[1]?.points).toMatchObject({ listed: true });
    // Stopped as its partitions start (a SIGTERM then): its partition has series left and must say so.
    const again = new AbortController();
    const onStart = () => again.abort();
    const second = await runJob({ config: made.config, logger: silentLogger, clock, signal: again.signal, onStart });
    expect(second.state).toBe('interrupted');
    expect(readCheckpoint(made.out).streams.points?.parts[1]?.done).toBe(false);
  });
});
