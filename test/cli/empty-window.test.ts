import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writePointsJob } from '../support/datapoints-export.js';
import { createFakeClock } from '../support/fake-clock.js';
import { startMisbehavingProxy } from '../support/misbehaving-proxy.js';
import { describeExit, newSimulator, runCliWith, tempDir } from '../support/resume-harness.js';

/**
 * A datapoints window that selects series but holds none of their points says so at the end of
 * the run, in the summary and in the log: how many series, 0 points, the window, and where their
 * newest point is (POST /timeseries/data/latest: before the window or after it), so that a window
 * set in the wrong place is seen at once. A window with points says nothing of the kind. The
 * simulator's clock is frozen, so that its live series' newest points stay where the test finds them.
 */
const KEY = 'empty-window-key-0001';
const SERIES = 33;
const SIMULATOR = { seed: 12, timeseries: SERIES, datapoints: 3000, apiKeys: [KEY] };

describe('a datapoints run whose window holds no point', () => {
  it('names the series, 0 points and the window in the summary and the log', { timeout: 120_000 }, async () => {
    const sim = await newSimulator({ ...SIMULATOR, clock: createFakeClock() });
    const dir = tempDir('empty-window');
    const start = '2098-01-01T00:00:00.000Z';
    const end = '2098-02-01T00:00:00.000Z';
    const first = new Date(firstPoint(sim)).toISOString();
    const streams = [
      { resource: 'datapoints', name: 'late', partitions: 2, start, end },
      { resource: 'datapoints', name: 'hourly', partitions: 1, start, end, aggregates: ['average'], granularity: '1h' },
      { resource: 'datapoints', name: 'ids', partitions: 1, start, end, timeseries: { ids: [sim.dataset.timeseries.idOf(0), sim.dataset.timeseries.idOf(1)] } },
      { resource: 'datapoints', name: 'none', partitions: 2, start, end, timeseries: { externalIdPrefix: 'NO-SUCH-' } },
      { resource: 'datapoints', name: 'ahead', partitions: 1, start },
      { resource: 'datapoints', name: 'all', partitions: 1 },
      { resource: 'datapoints', name: 'early', partitions: 1, start: '1901-01-01T00:00:00.000Z', end: first },
    ];
    const file = writePointsJob(join(dir, 'job.yaml'), { baseUrl: sim.baseUrl, out: join(dir, 'out'), streams });
    const exit = await runCliWith(['run', '--config', file], { cwd: dir, env: { SIM_KEY: KEY } });
    expect(exit.code, describeExit(exit)).toBe(0);
    const window = `in [${start}, ${end}): the newest point of these series is`;
    const before = `, before the window: start is ${start}`;
    const numeric = countNumeric(sim);
    const summary = exit.stderr.slice(exit.stderr.indexOf('bulk-extract: complete'));
    const all = Array.from({ length: SERIES }, (_, index) => index);
    const newestOf = (indexes: number[]) => `${new Date(newestPoint(sim, indexes).timestamp).toISOString()} (series `;
    expect(summary).toContain(`  late: ${SERIES} series, 0 points ${window} ${newestOf(all)}`);
    expect(lineOf(summary, 'late')).toContain(before);
    expect(lineOf(summary, 'late'), 'the series named holds the newest point').toContain(newestPoint(sim, all).names);
    const numericOnes = all.filter((index) => !sim.dataset.timeseries.item(index).isString);
    expect(summary).toContain(`  hourly: ${numeric} series, 0 average buckets of 1h ${window} ${newestOf(numericOnes)}`);
    expect(lineOf(summary, 'hourly')).toContain(before);
    expect(summary).toContain(`  ids: 2 series, 0 points ${window} ${newestOf([0, 1])}`);
    expect(lineOf(summary, 'ids')).toContain(before);
    const early = `  early: ${SERIES} series, 0 points in [1901-01-01T00:00:00.000Z, ${first}): the newest point of these series is `;
    expect(summary).toContain(early);
    expect(lineOf(summary, 'early')).toContain(`, after the window: end is ${first}`);
    expect(summary).toContain('  none: no time series matches the stream\'s timeseries selection, so no point was read');
    const ahead = / {2}ahead: the window \[2098-01-01T00:00:00.000Z, \S+\) holds no time: start is not before end/;
    expect(summary).toMatch(ahead);
    expect(summary, 'a window with points').not.toMatch(/ {2}all: /);
    const warned = exit.stderr.split('\n').filter((line) => line.includes('"level":40') && line.includes('0 points in ['));
    expect(warned.map((line) => (JSON.parse(line) as { stream: string }).stream).sort()).toEqual(['early', 'ids', 'late']);
  });

  it('says the old line when the newest point cannot be asked for, and never fails the run', { timeout: 120_000 }, async () => {
    const sim = await newSimulator({ ...SIMULATOR, clock: createFakeClock() });
    const dir = tempDir('empty-window-refused');
    const start = '2098-01-01T00:00:00.000Z';
    const end = '2098-02-01T00:00:00.000Z';
    // A proxy that answers every data/latest request 400: the platform refusing the question.
    const proxy = await startMisbehavingProxy({ target: sim.baseUrl, refuse: ['/timeseries/data/latest'] });
    try {
      const streams = [{ resource: 'datapoints', name: 'late', partitions: 1, start, end }];
      const file = writePointsJob(join(dir, 'job.yaml'), { baseUrl: proxy.baseUrl, out: join(dir, 'out'), streams });
      const exit = await runCliWith(['run', '--config', file], { cwd: dir, env: { SIM_KEY: KEY } });
      expect(exit.code, describeExit(exit)).toBe(0);
      expect(proxy.sent.refused, 'the question was asked').toBeGreaterThan(0);
      const summary = exit.stderr.slice(exit.stderr.indexOf('bulk-extract: complete'));
      expect(summary).toContain(`  late: ${SERIES} series, 0 points in [${start}, ${end}): none of these series has a point in this window; check start and end`);
    } finally {
      await proxy.close();
    }
  });
});

/** The summary's line of a stream. */
function lineOf(summary: string, stream: string): string {
  return summary.split('\n').find((line) => line.startsWith(`  ${stream}: `)) ?? '';
}

/** The earliest point of every series: a window that ends there lies before all of them. */
function firstPoint(sim: Awaited<ReturnType<typeof newSimulator>>): number {
  let first = Infinity;
  for (let index = 0; index < sim.dataset.timeseries.count; index++) {
    const points = sim.dataset.datapoints.series(index);
    if (points.count > 0) first = Math.min(first, points.timestampOf(0));
  }
  return first;
}

/**
 * The newest Good point (the platform's default: bad and uncertain points left out) of the series
 * at `indexes`, walked point by point, and the names of the series that hold it.
 */
function newestPoint(
  sim: Awaited<ReturnType<typeof newSimulator>>,
  indexes: number[],
): { timestamp: number; names: string } {
  let timestamp = -Infinity;
  const holders: string[] = [];
  for (const index of indexes) {
    const points = sim.dataset.datapoints.series(index);
    let last: number | undefined;
    for (let k = 0; k < points.count; k++) if (points.qualityOf(k) === 'good') last = points.timestampOf(k);
    if (last === undefined || last < timestamp) continue;
    if (last > timestamp) holders.length = 0;
    timestamp = last;
    const item = sim.dataset.timeseries.item(index, false);
    holders.push(item.externalId ?? String(item.id));
  }
  return { timestamp, names: holders[0] ?? '' };
}

function countNumeric(sim: Awaited<ReturnType<typeof newSimulator>>): number {
  let numeric = 0;
  for (let index = 0; index < sim.dataset.timeseries.count; index++) {
    if (!sim.dataset.timeseries.item(index).isString) numeric++;
  }
  return numeric;
}
