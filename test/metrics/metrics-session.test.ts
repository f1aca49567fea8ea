import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { silentLogger } from '../../src/log.js';
import { readStreamDataEnds, startMetrics } from '../../src/metrics/index.js';
import { loadJob, removeTempDirs, SIM_ENV, tempDir } from '../support/export-harness.js';
import { parseSamples, valueOf } from '../support/prom-text.js';

afterEach(removeTempDirs);

const START_MS = 1_780_000_000_000;

/** A job with an incremental and a full stream whose metrics go to a textfile, not run. */
function job() {
  const dir = tempDir('bulk-extract-metrics-session-');
  const streams = [{ resource: 'events', mode: 'incremental' }, { resource: 'assets' }];
  loadJob(dir, { baseUrl: 'https://acme.example.com/api/v1/projects/demo', out: join(dir, 'out'), streams });
  const textfile = join(dir, 'session.prom');
  const config = loadConfig(join(dir, 'job.yaml'), SIM_ENV, { metrics: { textfile } });
  return { config, read: () => parseSamples(readFileSync(textfile, 'utf8')) };
}

describe('startMetrics: what a session publishes at the start and at the end', () => {
  it('the data ends read at the start, and again at the end; an end that cannot be read keeps those known', async () => {
    const { config, read } = job();
    const answers = [new Map([['events', START_MS]]), undefined];
    const dataEnds = () => Promise.resolve(answers.shift());
    const session = await startMetrics(config, silentLogger, { dataEnds, now: () => START_MS });
    expect(valueOf(read(), 'bulk_extract_data_end_timestamp_seconds', { stream: 'events' })).toBe(START_MS / 1000);
    await session!.finish(1, START_MS + 1000, 'E_HTTP_STATUS');
    const end = read();
    expect(valueOf(end, 'bulk_extract_data_end_timestamp_seconds', { stream: 'events' }), 'kept').toBe(START_MS / 1000);
    expect(valueOf(end, 'bulk_extract_run_end_timestamp_seconds')).toBe(START_MS / 1000 + 1);
    expect(valueOf(end, 'bulk_extract_last_run_info', { code: 'E_HTTP_STATUS' })).toBe(1);
  });

  it('a window completed during the run: the end shows the new data end', async () => {
    const { config, read } = job();
    const answers = [new Map(), new Map([['events', START_MS], ['assets', START_MS]])];
    const dataEnds = () => Promise.resolve(answers.shift());
    const session = await startMetrics(config, silentLogger, { dataEnds, now: () => START_MS });
    expect(read().filter((sample) => sample.name === 'bulk_extract_data_end_timestamp_seconds')).toEqual([]);
    await session!.finish(0, START_MS + 1000);
    const ends = read().filter((sample) => sample.name === 'bulk_extract_data_end_timestamp_seconds');
    expect(ends.map((sample) => sample.labels.stream), 'none for the full stream').toEqual(['events']);
    expect(valueOf(read(), 'bulk_extract_last_run_info', { code: 'none' })).toBe(1);
  });

  it('readStreamDataEnds: none yet for an output without a checkpoint; undefined for one that cannot be read', async () => {
    const { config } = job();
    expect(await readStreamDataEnds(config, silentLogger)).toEqual(new Map());
    const broken = { ...config, output: { ...config.output, dir: '/dev/null/out' } };
    expect(await readStreamDataEnds(broken, silentLogger)).toBeUndefined();
  });
});
