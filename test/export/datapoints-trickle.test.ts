import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { proxiedJob, type ProxiedJob } from '../support/proxied-job.js';
import { describeExit, newSimulator, runCliWith } from '../support/resume-harness.js';

/**
 * A platform whose datapoints answers never complete (each body trickles in, a byte every 50 ms,
 * never a pause of `bodyMs`) holds a run no longer than docs/configuration.md's Limits say: each
 * partition fails at its first request that never completes (after `maxAttempts` attempts of
 * `requestMs` each) and stops its other requests at once, queued or in flight. Its points requests
 * go one at a time (no answer of their path came, so each holds the whole byte budget), so the run
 * lasts at most (partitions + 1) x one request's worst time: the bound below is that formula,
 * computed from the job's settings.
 */
const KEY = 'datapoints-trickle-key-1';
const T0 = Date.UTC(2026, 0, 1);
const PARTITIONS = 3;
const SETTINGS = {
  timeouts: { requestMs: 1500, bodyMs: 500 },
  retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2, maxRetryAfterMs: 2 },
};
let sim: Simulator;
let job: ProxiedJob;

beforeAll(async () => {
  // 8 series a partition: each partition sends 4 requests of 2 series at once (LANES).
  sim = await newSimulator({ seed: 34, timeseries: 8 * PARTITIONS, datapoints: 24_000, apiKeys: [KEY] });
  job = await proxiedJob({
    sim,
    key: KEY,
    answer: (request, path) => {
      if (request.method !== 'POST' || path !== '/timeseries/data/list') return undefined;
      return {
        write: (res) => {
          res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'trickle' });
          res.write('{"items":[');
          const drip = setInterval(() => res.write(' '), 50);
          res.on('close', () => clearInterval(drip));
        },
      };
    },
    streams: [{ resource: 'datapoints', name: 'points', partitions: PARTITIONS, end: T0 }],
    output: { formats: ['ndjson'] },
    source: SETTINGS,
  });
});

afterAll(async () => {
  await job.close();
});

/** One request's worst time: every attempt lasts requestMs, with the longest wait between two. */
function requestWorstMs({ timeouts, retry }: typeof SETTINGS): number {
  const longestWait = Math.max(retry.maxDelayMs, retry.maxRetryAfterMs);
  return retry.maxAttempts * timeouts.requestMs + (retry.maxAttempts - 1) * longestWait;
}

it('every datapoints body trickles: each partition fails once its first request spends its attempts, its other requests stopped; the run ends within (partitions + 1) x one request\'s worst time', async () => {
  const { file, dir, out, proxy } = job;
  const exit = await runCliWith(['run', '--config', file, '--json'], { cwd: dir, env: { K: KEY } });
  expect(exit.code, describeExit(exit)).toBe(1);
  expect(existsSync(join(out, '_SUCCESS'))).toBe(false);
  const summary = JSON.parse(exit.stdout) as { durationMs: number; errors: { code: string }[] };
  expect(summary.errors.map((error) => error.code)).toEqual(Array.from({ length: PARTITIONS }, () => 'E_TIMEOUT'));
  const bound = (PARTITIONS + 1) * requestWorstMs(SETTINGS);
  expect(summary.durationMs, `the run lasted ${summary.durationMs} ms; the bound is ${bound} ms`).toBeLessThanOrEqual(bound);
  // The attempts of one request per partition; another request of a partition may have started before it stopped.
  const asked = proxy.requests.filter((request) => request.url.endsWith('/timeseries/data/list')).length;
  expect(asked).toBeLessThanOrEqual(PARTITIONS * (SETTINGS.retry.maxAttempts + 1));
});
