import { describe, expect, it } from 'vitest';
import type { ManifestFile } from '../../src/export/state/manifest.js';
import type { RunHandle, StreamProgress } from '../../src/export/index.js';
import type { PlatformClient } from '../../src/http/platform-client.js';
import { RunMetrics } from '../../src/metrics/run-metrics.js';
import { ByteBudget } from '../../src/page/index.js';
import { parseSamples, type Sample, valueOf } from '../support/prom-text.js';
import { VERSION } from '../../src/version.js';

const STREAMS = [
  { name: 'events', formats: ['parquet', 'ndjson'], mode: 'incremental' },
  { name: 'assets', formats: ['parquet'], mode: 'full' },
];
const START_MS = 1_780_000_000_000;

function file(stream: string, format: 'parquet' | 'ndjson', rows: number, bytes: number, seq: number): ManifestFile {
  return { path: `${stream}/part-${seq}.${format}`, stream, m: 1, n: 1, seq, format, rows, bytes, sha256: '0'.repeat(64) };
}

/** A running export as the metrics see it: the figures are the test's. */
function fakeRun(files: ManifestFile[], streams: StreamProgress[], budget = new ByteBudget(1000)): RunHandle {
  const client = {
    stats: { requests: 7, retries: 2, throttled: 1, answers: { '2xx': 5, '4xx': 1, 'none': 1 }, responseBytes: 123_456 },
    limiterState: () => ({ ratePerSecond: 12.5, concurrency: 6, inFlight: 3, throttled: 1, decreases: 1 }),
  } as unknown as PlatformClient;
  return {
    client,
    budget,
    plans: [],
    written: () => files,
    rows: () => 0,
    rowsRead: (stream) => (stream === 'events' ? 1500 : 0),
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
    expect(valueOf(all, 'bulk_extract_rows_read_total', { export: 'nightly', stream: 'events' })).toBe(0);
    expect(valueOf(all, 'bulk_extract_rows_read_total', { stream: 'assets' })).toBe(0);
    expect(valueOf(all, 'bulk_extract_response_bytes_read_total')).toBe(0);
    expect(valueOf(all, 'bulk_extract_requests_total', { status_class: '2xx' })).toBe(0);
    expect(valueOf(all, 'bulk_extract_run_start_timestamp_seconds')).toBe(START_MS / 1000);
    expect(valueOf(all, 'bulk_extract_run_duration_seconds')).toBe(2.5);
    expect(valueOf(all, 'bulk_extract_limiter_concurrency')).toBeUndefined();
    expect(valueOf(all, 'bulk_extract_last_success_timestamp_seconds'), 'no earlier success known').toBeUndefined();
    expect(valueOf(all, 'bulk_extract_last_run_exit_code')).toBeUndefined();
    expect(valueOf(all, 'bulk_extract_run_end_timestamp_seconds'), 'no run ended before: a start and no end').toBeUndefined();
    expect(valueOf(all, 'bulk_extract_run_deadline_timestamp_seconds'), 'no metrics.runDeadline').toBeUndefined();
    expect(all.filter((sample) => sample.name === 'bulk_extract_last_run_info')).toEqual([]);
    expect(all.filter((sample) => sample.name === 'bulk_extract_data_end_timestamp_seconds'), 'none known yet').toEqual([]);
    expect(all.every((sample) => sample.labels.export === 'nightly')).toBe(true);
  });

  it('metrics.runDeadline: the deadline is the start plus it, and stays once the run ended', async () => {
    const metrics = new RunMetrics('nightly', STREAMS, {}, START_MS, () => START_MS + 60_000, 50 * 60_000);
    expect(valueOf(await samples(metrics), 'bulk_extract_run_deadline_timestamp_seconds')).toBe(START_MS / 1000 + 3000);
    metrics.finish(0);
    expect(valueOf(await samples(metrics), 'bulk_extract_run_deadline_timestamp_seconds')).toBe(START_MS / 1000 + 3000);
  });

  it('build info, and prom-client\'s process and Node.js metrics with the export label, in the run-wide registry', async () => {
    const metrics = new RunMetrics('nightly', STREAMS, {}, START_MS);
    const job = parseSamples(await metrics.job.metrics());
    const build = job.filter((sample) => sample.name === 'bulk_extract_build_info');
    expect(build).toEqual([
      { name: 'bulk_extract_build_info', labels: { export: 'nightly', version: VERSION, node_version: process.version }, value: 1 },
    ]);
    const names = new Set(job.map((sample) => sample.name));
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'process_start_time_seconds', 'nodejs_heap_size_used_bytes']) {
      expect(names, name).toContain(name);
    }
    const defaults = job.filter((sample) => /^(process|nodejs)_/.test(sample.name));
    expect(defaults.every((sample) => sample.labels.export === 'nightly')).toBe(true);
    expect(valueOf(job, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('while it drains: rows read and answer bytes, the files committed per stream and format, client, limiter and budget', async () => {
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
    expect(valueOf(all, 'bulk_extract_rows_read_total', events), 'read, beyond the rows committed').toBe(1500);
    expect(valueOf(all, 'bulk_extract_rows_read_total', { stream: 'assets' })).toBe(0);
    expect(valueOf(all, 'bulk_extract_response_bytes_read_total')).toBe(123_456);
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
    expect(valueOf(all, 'bulk_extract_limiter_rate_per_second')).toBe(12.5);
    expect(all.some((sample) => sample.name === 'bulk_extract_limiter_rate'), 'the old name is gone').toBe(false);
    expect(valueOf(all, 'bulk_extract_pages_in_flight')).toBe(2);
    expect(valueOf(all, 'bulk_extract_buffered_bytes'), 'the second page is estimated at the first one\'s size').toBe(8000);
  });

  it('while a run lasts the last run is the one before (its end older than this start); at its end, this one', async () => {
    let now = START_MS + 60_000;
    const earlier = { lastSuccessMs: START_MS - 7_200_000, lastExitCode: 3, lastEndMs: START_MS - 3_600_000, lastCode: 'E_AUTH' };
    const failed = new RunMetrics('nightly', STREAMS, earlier, START_MS, () => now);
    let all = await samples(failed);
    expect(valueOf(all, 'bulk_extract_last_run_exit_code'), 'the earlier run, while this one lasts').toBe(3);
    expect(valueOf(all, 'bulk_extract_run_end_timestamp_seconds')).toBe(earlier.lastEndMs / 1000);
    expect(valueOf(all, 'bulk_extract_run_start_timestamp_seconds')).toBeGreaterThan(earlier.lastEndMs / 1000);
    expect(infoCodes(all)).toEqual(['E_AUTH']);
    failed.finish(1, now, 'E_HTTP_STATUS');
    const ended = now;
    now += 5000;
    all = await samples(failed);
    expect(valueOf(all, 'bulk_extract_last_run_exit_code')).toBe(1);
    expect(valueOf(all, 'bulk_extract_run_end_timestamp_seconds'), 'its own end').toBe(ended / 1000);
    expect(infoCodes(all), 'one code: the earlier one replaced').toEqual(['E_HTTP_STATUS']);
    expect(valueOf(all, 'bulk_extract_last_success_timestamp_seconds')).toBe(earlier.lastSuccessMs / 1000);
    expect(valueOf(all, 'bulk_extract_run_duration_seconds'), 'stops at the end').toBe(60);

    const complete = new RunMetrics('nightly', STREAMS, { lastExitCode: 1, lastCode: 'E_NETWORK' }, START_MS, () => now);
    complete.finish(0);
    all = await samples(complete);
    expect(valueOf(all, 'bulk_extract_last_run_exit_code')).toBe(0);
    expect(valueOf(all, 'bulk_extract_last_success_timestamp_seconds')).toBe(now / 1000);
    expect(valueOf(all, 'bulk_extract_run_end_timestamp_seconds')).toBe(now / 1000);
    expect(infoCodes(all), 'a run without an error').toEqual(['none']);

    // A worker whose share is complete while the split job is not: exit 0, but no success of the job.
    const share = new RunMetrics('nightly', STREAMS, { lastSuccessMs: START_MS - 7_200_000 }, START_MS, () => now);
    share.finish(0, now, 'none', false);
    all = await samples(share);
    expect(valueOf(all, 'bulk_extract_last_run_exit_code')).toBe(0);
    expect(valueOf(all, 'bulk_extract_last_success_timestamp_seconds'), 'the earlier success stays').toBe((START_MS - 7_200_000) / 1000);
  });

  it('data ends: for incremental and snapshot streams that have one; never for a full stream', async () => {
    const streams = [...STREAMS, { name: 'files', formats: ['parquet'], mode: 'snapshot' }, { name: 'series', formats: ['parquet'], mode: 'incremental' }];
    const metrics = new RunMetrics('nightly', streams, {}, START_MS);
    metrics.setDataEnds(new Map([['events', START_MS - 300_000], ['assets', START_MS], ['files', START_MS - 3_600_000]]));
    const all = await samples(metrics);
    const ends = all.filter((sample) => sample.name === 'bulk_extract_data_end_timestamp_seconds');
    expect(ends.map((sample) => [sample.labels.stream, sample.value])).toEqual([
      ['events', (START_MS - 300_000) / 1000],
      ['files', (START_MS - 3_600_000) / 1000],
    ]);
    const events = parseSamples(await metrics.streams.get('events')!.metrics());
    expect(valueOf(events, 'bulk_extract_data_end_timestamp_seconds'), 'in the stream\'s own registry').toBe((START_MS - 300_000) / 1000);
  });

  it('limiter_rate_per_second is 0 while requests are unpaced', async () => {
    const metrics = new RunMetrics('x', STREAMS, {}, START_MS);
    const run = fakeRun([], []);
    const unpaced = { ratePerSecond: undefined, concurrency: 10 };
    (run.client as unknown as { limiterState: () => unknown }).limiterState = () => unpaced;
    metrics.attach(run);
    expect(valueOf(await samples(metrics), 'bulk_extract_limiter_rate_per_second')).toBe(0);
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

/** The codes of the last run's info metric. */
function infoCodes(all: Sample[]): string[] {
  return all.filter((sample) => sample.name === 'bulk_extract_last_run_info' && sample.value === 1).map((sample) => sample.labels.code ?? '');
}
