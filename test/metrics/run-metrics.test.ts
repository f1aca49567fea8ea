import { describe, expect, it } from 'vitest';
import type { ManifestFile } from '../../src/export/state/manifest.js';
import type { RunHandle, StreamProgress } from '../../src/export/index.js';
import type { PlatformClient } from '../../src/http/platform-client.js';
import { RunMetrics } from '../../src/metrics/run-metrics.js';
import { ByteBudget } from '../../src/page/index.js';
import { parseSamples, valueOf } from '../support/prom-text.js';

const STREAMS = [
  { name: 'events', formats: ['parquet', 'ndjson'] },
  { name: 'assets', formats: ['parquet'] },
];
const START_MS = 1_780_000_000_000;

function file(stream: string, format: 'parquet' | 'ndjson', rows: number, bytes: number, seq: number): ManifestFile {
  return { path: `${stream}/part-${seq}.${format}`, stream, m: 1, n: 1, seq, format, rows, bytes, sha256: '0'.repeat(64) };
}

/** A running export as the metrics see it: the figures are the test's. */
function fakeRun(files: ManifestFile[], streams: StreamProgress[], budget = new ByteBudget(1000)): RunHandle {
  const client = {
    stats: { requests: 7, retries: 2, throttled: 1, answers: { '2xx': 5, '4xx': 1, 'none': 1 } },
    limiterState: () => ({ ratePerSecond: 12.5, concurrency: 6, inFlight: 3, throttled: 1, decreases: 1 }),
  } as unknown as PlatformClient;
  return {
    client,
    budget,
    plans: [],
    written: () => files,
    rows: () => 0,
    partitionsDone: () => 0,
    streams: () => streams,
  };
}

async function samples(metrics: RunMetrics) {
  return parseSamples(await metrics.merged().metrics());
}

describe('RunMetrics', () => {
  it('before the export drains: zero counters for every stream and format, the start time, no live gauges', async () => {
    let now = START_MS;
    const metrics = new RunMetrics('nightly', STREAMS, {}, START_MS, () => now);
    now += 2500;
    const all = await samples(metrics);
    expect(valueOf(all, 'bulk_extract_rows_written_total', { export: 'nightly', stream: 'events', format: 'ndjson' })).toBe(0);
    expect(valueOf(all, 'bulk_extract_files_written_total', { stream: 'assets', format: 'parquet' })).toBe(0);
    expect(valueOf(all, 'bulk_extract_files_written_total', { stream: 'assets', format: 'ndjson' })).toBeUndefined();
    expect(valueOf(all, 'bulk_extract_requests_total', { status_class: '2xx' })).toBe(0);
    expect(valueOf(all, 'bulk_extract_run_start_timestamp_seconds')).toBe(START_MS / 1000);
    expect(valueOf(all, 'bulk_extract_run_duration_seconds')).toBe(2.5);
    expect(valueOf(all, 'bulk_extract_limiter_concurrency')).toBeUndefined();
    expect(valueOf(all, 'bulk_extract_last_success_timestamp_seconds'), 'no earlier success known').toBeUndefined();
    expect(valueOf(all, 'bulk_extract_last_run_exit_code')).toBeUndefined();
    expect(all.every((sample) => sample.labels.export === 'nightly')).toBe(true);
  });

  it('while it drains: the files this run committed per stream and format, the client, limiter and budget figures', async () => {
    const metrics = new RunMetrics('nightly', STREAMS, {}, START_MS, () => START_MS + 10_000);
    const budget = new ByteBudget(10_000);
    (await budget.hold('/events')).resize(4000);
    await budget.hold('/events');
    const files = [file('events', 'parquet', 100, 5000, 0), file('events', 'parquet', 50, 2600, 1), file('events', 'ndjson', 150, 9000, 0)];
    const streams = [
      { name: 'events', rows: 150, total: undefined, partitions: 4, done: 1 },
      { name: 'assets', rows: 0, total: 10, partitions: 2, done: 0 },
    ];
    metrics.attach(fakeRun(files, streams, budget));
    const all = await samples(metrics);
    const events = { export: 'nightly', stream: 'events' };
    expect(valueOf(all, 'bulk_extract_rows_written_total', { ...events, format: 'parquet' })).toBe(150);
    expect(valueOf(all, 'bulk_extract_bytes_written_total', { ...events, format: 'parquet' })).toBe(7600);
    expect(valueOf(all, 'bulk_extract_files_written_total', { ...events, format: 'parquet' })).toBe(2);
    expect(valueOf(all, 'bulk_extract_rows_written_total', { ...events, format: 'ndjson' })).toBe(150);
    expect(valueOf(all, 'bulk_extract_rows_written_total', { stream: 'assets', format: 'parquet' })).toBe(0);
    expect(valueOf(all, 'bulk_extract_partitions', events)).toBe(4);
    expect(valueOf(all, 'bulk_extract_partitions_done', events)).toBe(1);
    expect(valueOf(all, 'bulk_extract_partitions', { stream: 'assets' })).toBe(2);
    expect(valueOf(all, 'bulk_extract_requests_total', { status_class: '2xx' })).toBe(5);
    expect(valueOf(all, 'bulk_extract_requests_total', { status_class: '4xx' })).toBe(1);
    expect(valueOf(all, 'bulk_extract_requests_total', { status_class: 'none' })).toBe(1);
    expect(valueOf(all, 'bulk_extract_requests_total', { status_class: '5xx' })).toBe(0);
    expect(valueOf(all, 'bulk_extract_retries_total')).toBe(2);
    expect(valueOf(all, 'bulk_extract_throttled_total')).toBe(1);
    expect(valueOf(all, 'bulk_extract_limiter_concurrency')).toBe(6);
    expect(valueOf(all, 'bulk_extract_limiter_rate')).toBe(12.5);
    expect(valueOf(all, 'bulk_extract_pages_in_flight')).toBe(2);
    expect(valueOf(all, 'bulk_extract_buffered_bytes'), 'the second page is estimated at the first one\'s size').toBe(8000);
  });

  it('a failed run keeps the earlier success and reports its own exit code; a complete one becomes the last success', async () => {
    let now = START_MS + 60_000;
    const earlier = { lastSuccessMs: START_MS - 3_600_000, lastExitCode: 0 };
    const failed = new RunMetrics('nightly', STREAMS, earlier, START_MS, () => now);
    expect(valueOf(await samples(failed), 'bulk_extract_last_run_exit_code'), 'the earlier run, while this one lasts').toBe(0);
    failed.finish(1);
    now += 5000;
    let all = await samples(failed);
    expect(valueOf(all, 'bulk_extract_last_run_exit_code')).toBe(1);
    expect(valueOf(all, 'bulk_extract_last_success_timestamp_seconds')).toBe(earlier.lastSuccessMs / 1000);
    expect(valueOf(all, 'bulk_extract_run_duration_seconds'), 'stops at the end').toBe(60);

    const complete = new RunMetrics('nightly', STREAMS, { lastExitCode: 1 }, START_MS, () => now);
    complete.finish(0);
    all = await samples(complete);
    expect(valueOf(all, 'bulk_extract_last_run_exit_code')).toBe(0);
    expect(valueOf(all, 'bulk_extract_last_success_timestamp_seconds')).toBe(now / 1000);
  });

  it('limiter_rate is 0 while requests are unpaced', async () => {
    const metrics = new RunMetrics('x', STREAMS, {}, START_MS);
    const run = fakeRun([], []);
    const unpaced = { ratePerSecond: undefined, concurrency: 10 };
    (run.client as unknown as { limiterState: () => unknown }).limiterState = () => unpaced;
    metrics.attach(run);
    expect(valueOf(await samples(metrics), 'bulk_extract_limiter_rate')).toBe(0);
  });

  it('the registries split by stream: the run-wide one holds no stream label, each stream holds only its own', async () => {
    const metrics = new RunMetrics('x', STREAMS, {}, START_MS);
    const job = parseSamples(await metrics.job.metrics());
    expect(job.some((sample) => 'stream' in sample.labels)).toBe(false);
    for (const [name, registry] of metrics.streams) {
      const own = parseSamples(await registry.metrics());
      expect(own.length).toBeGreaterThan(0);
      expect(own.every((sample) => sample.labels.stream === name)).toBe(true);
    }
  });
});
