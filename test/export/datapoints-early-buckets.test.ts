import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJob } from '../../src/export/run/run-job.js';
import { silentLogger } from '../../src/log.js';
import type { Simulator } from '../../src/simulator/index.js';
import { ndjsonRows } from '../support/datapoints-export.js';
import { createFakeClock } from '../support/fake-clock.js';
import { proxiedJob, type ProxiedJob } from '../support/proxied-job.js';
import { newSimulator } from '../support/resume-harness.js';

/**
 * An aggregate bucket starts at most one unit of its granularity before the query's `start` (the
 * platform aligns `start` down to a whole unit): a server that sends buckets long before it (here
 * 120 invented ones, ten years early) is refused (E_BAD_RESPONSE) rather than written outside the
 * stream's window.
 */
const KEY = 'datapoints-buckets-key-1';
const T0 = Date.UTC(2026, 0, 1);
const START = Date.UTC(2019, 0, 1);
const DAY = 86_400_000;
const cleanup: (() => Promise<void>)[] = [];
let sim: Simulator;

beforeAll(async () => {
  sim = await newSimulator({ seed: 28, timeseries: 30, datapoints: 30_000, apiKeys: [KEY] });
});

afterAll(async () => {
  for (const close of cleanup.splice(0)) await close();
});

interface Asked {
  items: { limit: number; cursor?: string }[];
}

interface Answered {
  items: { datapoints: { timestamp: number }[] }[];
}

/** A job of daily counts from START; its proxy adds `early` buckets before a series' own, in the first answer. */
async function job(early: (first: number) => number[]): Promise<ProxiedJob & { added: () => number }> {
  let added = 0;
  const made = await proxiedJob({
    sim,
    key: KEY,
    answer: async (request, path, forward) => {
      if (request.method !== 'POST' || path !== '/timeseries/data/list' || added > 0) return undefined;
      const asked = JSON.parse(request.body) as Asked;
      const reply = await forward();
      if (reply.status !== 200) return { status: reply.status, body: reply.text };
      const answer = reply.json<Answered>();
      // The first series with room for them below its query's limit: a longer answer is refused for that alone.
      const roomy = (item: Answered['items'][number], i: number) =>
        item.datapoints.length > 0 && item.datapoints.length + 120 <= asked.items[i]!.limit;
      const at = answer.items.findIndex(roomy);
      const item = answer.items[at];
      if (item === undefined) return { body: answer };
      const times = early(item.datapoints[0]!.timestamp);
      added = times.length;
      item.datapoints = [...times.map((timestamp) => ({ timestamp, count: 1 })), ...item.datapoints];
      return { body: answer };
    },
    streams: [
      { resource: 'datapoints', name: 'points', partitions: 1, start: START, end: T0, aggregates: ['count'], granularity: '1d' },
    ],
    output: { formats: ['ndjson'] },
    source: { retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 } },
  });
  cleanup.push(() => made.close());
  return { ...made, added: () => added };
}

describe.concurrent('aggregate buckets before the window', () => {
  it('120 invented buckets ten years before `start`: E_BAD_RESPONSE naming the bucket, nothing written before the window', async () => {
    const tenYearsEarly = Array.from({ length: 120 }, (_, k) => START - 10 * 365 * DAY + k * DAY);
    const { config, out, added } = await job(() => tenYearsEarly);
    const result = await runJob({ config, logger: silentLogger, clock: createFakeClock(T0) });
    expect(added()).toBe(120);
    expect(result.state).not.toBe('complete');
    expect(result.errors.map(({ error }) => (error as { code?: string }).code)).toEqual(['E_BAD_RESPONSE']);
    expect((result.errors[0]?.error as Error).message).toMatch(/lies outside the query's window/);
    expect(existsSync(join(out, '_SUCCESS'))).toBe(false);
    expect(ndjsonRows(join(out, 'points')).filter((row) => (row.timestamp as number) < START - DAY)).toEqual([]);
  });

  it('one bucket a unit and a millisecond before `start`: refused alike', async () => {
    const { config, added } = await job(() => [START - DAY - 1]);
    const result = await runJob({ config, logger: silentLogger, clock: createFakeClock(T0) });
    expect(added()).toBe(1);
    expect(result.errors.map(({ error }) => (error as { code?: string }).code)).toEqual(['E_BAD_RESPONSE']);
  });
});
