import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { writePointsJob } from '../support/datapoints-export.js';
import { createFakeClock } from '../support/fake-clock.js';
import { proxiedJob } from '../support/proxied-job.js';
import { describeExit, runCliWith } from '../support/resume-harness.js';

/**
 * `run --dry-run` asks each stream the cheapest form of its first request (a page of 1 with its
 * filter; the check of a datapoints stream's listed series a run makes) and reports the
 * platform's 400 as REFUSED with the exit code a run gives (2, E_QUERY_REFUSED); a run of the
 * same job exits 2 too. A query the platform takes changes nothing in the dry run's answer.
 *
 * Data: seed 28, 60 series (6 of them strings), 60,000 points; 300 events.
 */
const KEY = 'dry-run-queries-key-0001';
const WINDOW = { start: Date.UTC(2025, 9, 1), end: Date.UTC(2025, 11, 1) };

let sim: Simulator;
const dirs: string[] = [];

beforeAll(async () => {
  const clock = createFakeClock(Date.UTC(2026, 0, 1));
  sim = await startSimulator({ seed: 28, timeseries: 60, datapoints: 60_000, events: 300, apiKeys: [KEY], clock });
});

afterAll(async () => {
  await sim.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The first `count` ids of the simulator's string or numeric series. */
function seriesIds(strings: boolean, count: number): number[] {
  const ids: number[] = [];
  for (let index = 0; index < sim.dataset.timeseries.count && ids.length < count; index++) {
    const item = sim.dataset.timeseries.item(index);
    if (item.isString === strings) ids.push(item.id);
  }
  return ids;
}

/** A job of one aggregates stream over `ids`; its file and output folder. */
function aggregatesJob(ids: number[]): { file: string; out: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'bulk-extract-dry-queries-'));
  dirs.push(dir);
  const out = join(dir, 'out');
  const stream = { resource: 'datapoints', name: 'hourly', partitions: 3, timeseries: { ids }, aggregates: ['average'], granularity: '1h', ...WINDOW };
  return { file: writePointsJob(join(dir, 'job.yaml'), { baseUrl: sim.baseUrl, out, streams: [stream] }), out, dir };
}

const refusedLines = (stdout: string) => stdout.split('\n').filter((line) => line.startsWith('REFUSED'));

describe('run --dry-run asks each stream its first question', () => {
  it('a string series among an aggregates stream\'s ids: REFUSED and exit 2, as the run; the numeric ones alone: exit 0', async () => {
    const refusedJob = aggregatesJob([...seriesIds(false, 5), ...seriesIds(true, 1)]);
    const env = { SIM_KEY: KEY };
    const dry = await runCliWith(['run', '--dry-run', '--config', refusedJob.file], { cwd: refusedJob.dir, env });
    expect(dry.code, describeExit(dry)).toBe(2);
    const refused = refusedLines(dry.stdout);
    expect(refused, dry.stdout).toHaveLength(1);
    expect(refused[0]).toContain('a run now would stop here: The platform refused the query of stream hourly (HTTP 400: ');
    expect(refused[0]).toContain('is a string series; aggregates exist for numeric series only');
    expect(existsSync(refusedJob.out), 'the dry run writes nothing').toBe(false);

    const run = await runCliWith(['run', '--config', refusedJob.file], { cwd: refusedJob.dir, env });
    expect(run.code, describeExit(run)).toBe(2);
    expect(run.stderr).toContain('Remove the series it names from timeseries.ids of stream hourly in the job file');

    const fine = aggregatesJob(seriesIds(false, 5));
    const clean = await runCliWith(['run', '--dry-run', '--config', fine.file], { cwd: fine.dir, env });
    expect(clean.code, describeExit(clean)).toBe(0);
    expect(refusedLines(clean.stdout)).toEqual([]);
  });

  it('a collection whose filter the platform refuses: REFUSED naming the stream and the platform\'s words, exit 2', async () => {
    const asked: string[] = [];
    const job = await proxiedJob({
      sim,
      key: KEY,
      answer: (request, path) => {
        asked.push(`${request.method} ${path}`);
        // The credential check asks at the cluster root, which the proxy has not: it works.
        if (path.startsWith('/login/status')) {
          return { status: 200, body: { data: { user: 'u', loggedIn: true, project: 'scripted', projectId: 1 } } };
        }
        const list = /^\/events(\/list)?(\?|$)/.test(path);
        return list ? { status: 400, body: { error: { code: 400, message: "Invalid filter 'source'" } } } : undefined;
      },
      streams: [{ resource: 'events', name: 'ev', partitions: 2, limit: 1000 }],
      output: { formats: ['ndjson'] },
    });
    try {
      const dry = await runCliWith(['run', '--dry-run', '--config', job.file], { cwd: job.dir, env: { K: KEY } });
      expect(dry.code, describeExit(dry)).toBe(2);
      const refused = refusedLines(dry.stdout);
      expect(refused, dry.stdout).toHaveLength(1);
      expect(refused[0]).toContain("The platform refused the query of stream ev (HTTP 400: Invalid filter 'source')");
      // The cheapest form of the first request: a page of one.
      expect(asked.filter((line) => /^GET \/events\?/.test(line))).toEqual([expect.stringMatching(/[?&]limit=1$/)]);
    } finally {
      await job.close();
    }
  });
});
