import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { runJob } from '../../src/export/run/run-job.js';
import { writePointsJob } from '../support/datapoints-export.js';
import { createFakeClock } from '../support/fake-clock.js';
import { captureLogger } from '../support/log-capture.js';
import { newSimulator, tempDir } from '../support/resume-harness.js';

/**
 * A window with no point among more series than one question holds: the newest point is asked for
 * a sample, the first page of the stream's listing (100 series), in one request, and the note says
 * of how many of the series it speaks.
 */
const KEY = 'empty-window-sample-key';
const SERIES = 150;
const T0 = Date.UTC(2026, 0, 1);

describe('the note of an empty window over more than 100 series', () => {
  it('names the newest point of the first 100 listed, asked in one request', async () => {
    const simulator = { seed: 5, timeseries: SERIES, datapoints: 9000, apiKeys: [KEY] };
    const sim = await newSimulator({ ...simulator, clock: createFakeClock(T0) });
    const dir = tempDir('empty-window-sample');
    const start = '2098-01-01T00:00:00.000Z';
    const file = writePointsJob(join(dir, 'job.yaml'), {
      baseUrl: sim.baseUrl,
      out: join(dir, 'out'),
      streams: [{ resource: 'datapoints', name: 'late', partitions: 3, start, end: '2098-02-01T00:00:00Z' }],
    });
    const before = sim.stats().byRoute['POST /timeseries/data/latest'] ?? 0;
    const config = loadConfig(file, { SIM_KEY: KEY });
    const result = await runJob({ config, logger: captureLogger('info').logger, clock: createFakeClock(T0) });
    expect(result.state).toBe('complete');
    expect((sim.stats().byRoute['POST /timeseries/data/latest'] ?? 0) - before, 'one question').toBe(1);
    // The listing without a partition gives the series in the order of their ids: the first 100.
    let newest = -Infinity;
    for (let index = 0; index < 100; index++) {
      const points = sim.dataset.datapoints.series(index);
      for (let k = 0; k < points.count; k++) if (points.qualityOf(k) === 'good') newest = Math.max(newest, points.timestampOf(k));
    }
    const [empty] = result.empty;
    expect(empty?.stream).toBe('late');
    expect(empty?.note).toContain(`${SERIES} series, 0 points in [${start}, 2098-02-01T00:00:00.000Z): `);
    expect(empty?.note).toContain(`the newest point of 100 of these series is ${new Date(newest).toISOString()} (series `);
    expect(empty?.note).toContain(`, before the window: start is ${start}`);
  });
});
