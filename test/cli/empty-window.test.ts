import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writePointsJob } from '../support/datapoints-export.js';
import { describeExit, newSimulator, runCliWith, tempDir } from '../support/resume-harness.js';

/**
 * A datapoints window that selects series but holds none of their points says so at the end of
 * the run, in the summary and in the log: how many series, 0 points, and the window, so that a
 * window set in the wrong place is seen at once. A window with points says nothing of the kind.
 */
const KEY = 'empty-window-key-0001';
const SERIES = 33;

describe('a datapoints run whose window holds no point', () => {
  it('names the series, 0 points and the window in the summary and the log', { timeout: 120_000 }, async () => {
    const sim = await newSimulator({ seed: 12, timeseries: SERIES, datapoints: 3000, apiKeys: [KEY] });
    const dir = tempDir('empty-window');
    const start = '2098-01-01T00:00:00.000Z';
    const end = '2098-02-01T00:00:00.000Z';
    const streams = [
      { resource: 'datapoints', name: 'late', partitions: 2, start, end },
      { resource: 'datapoints', name: 'hourly', partitions: 1, start, end, aggregates: ['average'], granularity: '1h' },
      { resource: 'datapoints', name: 'ids', partitions: 1, start, end, timeseries: { ids: [sim.dataset.timeseries.idOf(0), sim.dataset.timeseries.idOf(1)] } },
      { resource: 'datapoints', name: 'none', partitions: 2, start, end, timeseries: { externalIdPrefix: 'NO-SUCH-' } },
      { resource: 'datapoints', name: 'ahead', partitions: 1, start },
      { resource: 'datapoints', name: 'all', partitions: 1 },
    ];
    const file = writePointsJob(join(dir, 'job.yaml'), { baseUrl: sim.baseUrl, out: join(dir, 'out'), streams });
    const exit = await runCliWith(['run', '--config', file], { cwd: dir, env: { SIM_KEY: KEY } });
    expect(exit.code, describeExit(exit)).toBe(0);
    const window = `in [${start}, ${end}): none of these series has a point in this window`;
    const numeric = countNumeric(sim);
    const summary = exit.stderr.slice(exit.stderr.indexOf('bulk-extract: complete'));
    expect(summary).toContain(`  late: ${SERIES} series, 0 points ${window}`);
    expect(summary).toContain(`  hourly: ${numeric} series, 0 average buckets of 1h ${window}`);
    expect(summary).toContain(`  ids: 2 series, 0 points ${window}`);
    expect(summary).toContain('  none: no time series matches the stream\'s timeseries selection, so no point was read');
    const ahead = / {2}ahead: the window \[2098-01-01T00:00:00.000Z, \S+\) holds no time: start is not before end/;
    expect(summary).toMatch(ahead);
    expect(summary, 'a window with points').not.toMatch(/ {2}all: /);
    const warned = exit.stderr.split('\n').filter((line) => line.includes('"level":40') && line.includes('0 points in ['));
    expect(warned.map((line) => (JSON.parse(line) as { stream: string }).stream).sort()).toEqual(['ids', 'late']);
  });
});

function countNumeric(sim: Awaited<ReturnType<typeof newSimulator>>): number {
  let numeric = 0;
  for (let index = 0; index < sim.dataset.timeseries.count; index++) {
    if (!sim.dataset.timeseries.item(index).isString) numeric++;
  }
  return numeric;
}
