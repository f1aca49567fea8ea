import { appendFileSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Manifest } from '../../src/export/state/manifest.js';
import { closedPort } from '../support/closed-port.js';
import { parseSamples, prometheusTool, promtoolCheckMetrics, type Sample, valueOf } from '../support/prom-text.js';
import { startPushgateway, stopPushgateways } from '../support/pushgateway.js';
import {
  describeExit,
  type Job,
  newJob,
  newSimulator,
  readManifest,
  runCliWith,
  spawnCli,
  tempDir,
} from '../support/resume-harness.js';

/**
 * The three ways out of a run's Prometheus metrics, each with the built CLI against the simulator:
 * a node_exporter textfile (checked by promtool), a real Pushgateway (Debian's
 * prometheus-pushgateway, on loopback) scraped back, and the `/metrics` endpoint during a run.
 */
const KEY = 'metrics-test-api-key-0001';
const WRONG_KEY = 'metrics-test-wrong-key-0002';
const EVENTS = 6000;
const ASSETS = 600;
const PROM_CLIENT_NAMES = new RegExp('^nodejs_active_(handles|requests|resources)_total non-counter metrics should not have "_total" suffix$');

afterEach(stopPushgateways);

async function newMetricsJob(metrics: Record<string, unknown>, latencyMs = 0): Promise<Job> {
  const sim = await newSimulator({ events: EVENTS, assets: ASSETS, seed: 5, apiKeys: [KEY], faults: { latencyMs } });
  const streams = [
    { resource: 'events' as const, partitions: 3, limit: 1000 },
    { resource: 'assets' as const, partitions: 1, limit: 1000 },
  ];
  const job = newJob(sim, streams, { formats: ['parquet', 'ndjson'] }, 'metrics');
  appendFileSync(job.file, `metrics: ${JSON.stringify(metrics)}\n`);
  return job;
}

function run(job: Job, args: string[] = [], key = KEY) {
  return runCliWith(['run', '--config', job.file, ...args], { env: { SIM_KEY: key } });
}

/** Rows, bytes and files per stream and format, as the manifest lists them. */
function manifestFigures(manifest: Manifest) {
  const figures = new Map<string, { rows: number; bytes: number; files: number }>();
  for (const file of manifest.files) {
    const key = `${file.stream}/${file.format}`;
    const sum = figures.get(key) ?? { rows: 0, bytes: 0, files: 0 };
    figures.set(key, { rows: sum.rows + file.rows, bytes: sum.bytes + file.bytes, files: sum.files + 1 });
  }
  return figures;
}

/** The written counters equal the manifest's figures, for each of its streams and formats. */
function expectManifestFigures(samples: Sample[], manifest: Manifest, labels: Record<string, string>): void {
  const figures = manifestFigures(manifest);
  expect([...figures.keys()].sort()).toEqual(['assets/ndjson', 'assets/parquet', 'events/ndjson', 'events/parquet']);
  for (const [key, want] of figures) {
    const [stream, format] = key.split('/') as [string, string];
    const at = { ...labels, stream, format };
    expect(valueOf(samples, 'bulk_extract_rows_written_total', at), `${key} rows`).toBe(want.rows);
    expect(valueOf(samples, 'bulk_extract_bytes_written_total', at), `${key} bytes`).toBe(want.bytes);
    expect(valueOf(samples, 'bulk_extract_files_written_total', at), `${key} files`).toBe(want.files);
  }
  expect(figures.get('events/parquet')?.rows).toBe(EVENTS);
  const requests = samples.filter((s) => s.name === 'bulk_extract_requests_total').reduce((sum, s) => sum + s.value, 0);
  expect(requests).toBe(manifest.requests);
  expect(valueOf(samples, 'bulk_extract_throttled_total', labels)).toBe(manifest.throttled);
  expect(valueOf(samples, 'bulk_extract_partitions', { ...labels, stream: 'events' })).toBe(3);
  expect(valueOf(samples, 'bulk_extract_partitions_done', { ...labels, stream: 'events' })).toBe(3);
}

describe('metrics', () => {
  it('textfile: written atomically at the end with the manifest figures, accepted by promtool check metrics', async () => {
    const dir = tempDir('metrics-textfile');
    const path = join(dir, 'bulk-extract.prom');
    const job = await newMetricsJob({ textfile: path, export: 'nightly' });
    const dry = await run(job, ['--dry-run']);
    expect(dry.code, describeExit(dry)).toBe(0);
    expect(dry.stdout).toContain(`metrics     export="nightly": textfile ${path} (every 15 s and at the end); deadline 50 min after the start`);
    expect(readdirSync(dir), 'a dry run writes no metrics').toEqual([]);
    const started = Date.now() / 1000;
    const exit = await run(job);
    expect(exit.code, describeExit(exit)).toBe(0);
    const text = readFileSync(path, 'utf8');
    const samples = parseSamples(text);
    expectManifestFigures(samples, readManifest(job.out), { export: 'nightly' });
    expect(valueOf(samples, 'bulk_extract_last_run_exit_code')).toBe(0);
    const success = valueOf(samples, 'bulk_extract_last_success_timestamp_seconds')!;
    expect(success).toBeGreaterThanOrEqual(started);
    expect(success).toBeLessThanOrEqual(Date.now() / 1000);
    expect(readdirSync(dir), 'no temporary file left beside it').toEqual(['bulk-extract.prom']);
    const promtool = prometheusTool('promtool');
    if (promtool !== undefined) {
      // Lint problems (names, help texts, units) are printed and fail the check as well (exit 3).
      // prom-client's default metrics name three gauges `nodejs_active_*_total`, as Node.js
      // dashboards know them: those are the only problems allowed.
      const check = await promtoolCheckMetrics(promtool, text);
      const problems = check.output.split('\n').filter((line) => line !== '' && !PROM_CLIENT_NAMES.test(line));
      expect(problems).toEqual([]);
      expect([0, 3]).toContain(check.code);
    }
  });

  it.skipIf(prometheusTool('prometheus-pushgateway') === undefined)(
    'Pushgateway: grouped by job and stream, equal to the manifest; a refused run pushes its exit code and keeps the success',
    async () => {
      const url = await startPushgateway(prometheusTool('prometheus-pushgateway')!);
      const job = await newMetricsJob({ export: 'nightly' });
      const exit = await run(job, ['--metrics-push', url]);
      expect(exit.code, describeExit(exit)).toBe(0);
      const scrape = async () => parseSamples(await (await fetch(`${url}/metrics`)).text());
      let samples = await scrape();
      expectManifestFigures(samples, readManifest(job.out), { export: 'nightly', job: 'nightly' });
      expect(valueOf(samples, 'bulk_extract_rows_written_total', { stream: 'events', format: 'ndjson' })).toBe(EVENTS);
      const runWide = samples.filter((s) => s.name === 'bulk_extract_last_run_exit_code');
      expect(runWide.map((s) => s.labels)).toEqual([{ export: 'nightly', instance: '', job: 'nightly' }]);
      expect(runWide[0]!.value).toBe(0);
      const success = valueOf(samples, 'bulk_extract_last_success_timestamp_seconds', { job: 'nightly' });
      expect(success).toBeGreaterThan(0);
      expect(valueOf(samples, 'bulk_extract_run_end_timestamp_seconds', { job: 'nightly' })).toBe(success);
      expect(valueOf(samples, 'bulk_extract_last_run_info', { job: 'nightly', code: 'none' })).toBe(1);
      // The gateway takes the process and Node.js metrics beside its own (which have no export label).
      expect(valueOf(samples, 'process_resident_memory_bytes', { job: 'nightly', export: 'nightly' })).toBeGreaterThan(0);
      expect(valueOf(samples, 'bulk_extract_build_info', { job: 'nightly', export: 'nightly' })).toBe(1);

      const refused = await run(job, ['--fresh', '--metrics-push', url], WRONG_KEY);
      expect(refused.code, describeExit(refused)).toBe(3);
      samples = await scrape();
      expect(valueOf(samples, 'bulk_extract_last_run_exit_code', { job: 'nightly' })).toBe(3);
      expect(valueOf(samples, 'bulk_extract_last_success_timestamp_seconds', { job: 'nightly' })).toBe(success);
      const codes = samples.filter((s) => s.name === 'bulk_extract_last_run_info' && s.labels.job === 'nightly');
      expect(codes.map((s) => s.labels.code), 'the push replaced the code').toEqual(['E_AUTH']);
      expect(valueOf(samples, 'bulk_extract_run_end_timestamp_seconds', { job: 'nightly' })).toBeGreaterThan(success!);
    },
  );

  it('textfile in a folder that does not exist: the run creates it (0755), the dry run says so and creates nothing', async () => {
    const dir = tempDir('metrics-textfile-folder');
    const folder = join(dir, 'node_exporter', 'textfile');
    const path = join(folder, 'bulk-extract.prom');
    const job = await newMetricsJob({ textfile: path });
    const dry = await run(job, ['--dry-run']);
    expect(dry.code, describeExit(dry)).toBe(0);
    expect(dry.stdout).toContain(`(every 15 s and at the end); ${join(dir, 'node_exporter')} does not exist: the run creates it (mode 0755)`);
    expect(readdirSync(dir), 'a dry run creates no folder').toEqual([]);
    const exit = await run(job);
    expect(exit.code, describeExit(exit)).toBe(0);
    expect(exit.stderr).not.toContain('metrics: writing');
    expect(valueOf(parseSamples(readFileSync(path, 'utf8')), 'bulk_extract_last_run_exit_code')).toBe(0);
    expect(statSync(folder).mode & 0o777).toBe(0o755);
  });

  it('a Pushgateway that cannot be reached is one warning, and the export completes', async () => {
    const job = await newMetricsJob({ pushgateway: `http://127.0.0.1:${await closedPort()}`, intervalSeconds: 1 });
    const exit = await run(job);
    expect(exit.code, describeExit(exit)).toBe(0);
    expect(readManifest(job.out).state).toBe('complete');
    const warnings = exit.stderr.split('\n').filter((line) => line.includes('metrics: pushing to'));
    expect(warnings, exit.stderr).toHaveLength(1);
    expect(warnings[0]).toContain('the export goes on');
  });

  it('/metrics: served while the run lasts (pages in flight, partitions), closed when it ends', async () => {
    const port = await closedPort();
    // Every list request takes a minute: the run is surely going on while the test scrapes it.
    const job = await newMetricsJob({ port, host: '127.0.0.1', export: 'scraped' }, 60_000);
    const cli = spawnCli(['run', '--config', job.file], { env: { SIM_KEY: KEY } });
    await cli.waitForStderr(/starting export/);
    const url = `http://127.0.0.1:${port}/metrics`;
    let samples: Sample[] = [];
    // The pages are asked for right after the start is logged: scrape until they are in flight.
    for (let scrapes = 0; !((valueOf(samples, 'bulk_extract_pages_in_flight') ?? 0) > 0); scrapes++) {
      expect(scrapes, 'scrapes before a page was in flight').toBeLessThan(1000);
      const response = await fetch(url);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/plain');
      samples = parseSamples(await response.text());
    }
    expect(valueOf(samples, 'bulk_extract_partitions', { export: 'scraped', stream: 'events' })).toBe(3);
    expect(valueOf(samples, 'bulk_extract_partitions_done', { stream: 'events' })).toBe(0);
    expect(valueOf(samples, 'bulk_extract_rows_written_total', { stream: 'events', format: 'parquet' })).toBe(0);
    expect(valueOf(samples, 'bulk_extract_limiter_concurrency')).toBeGreaterThan(0);
    expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
    cli.child.kill('SIGINT');
    const exit = await cli.done;
    expect(exit.code, describeExit(exit)).toBe(130);
    await expect(fetch(url)).rejects.toThrow();
  });

  it('a port already in use is one warning, and the export completes; a port that is no number is a usage error', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = taken.address() as AddressInfo;
      const job = await newMetricsJob({ port, host: '127.0.0.1' });
      const exit = await run(job);
      expect(exit.code, describeExit(exit)).toBe(0);
      expect(exit.stderr).toContain(`metrics: cannot serve /metrics on 127.0.0.1:${port} (the export goes on)`);
      expect(readManifest(job.out).state).toBe('complete');
      const bad = await run(job, ['--metrics-port', 'nine']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("--metrics-port expects a port number, got 'nine'");
    } finally {
      taken.close();
    }
  });
});
