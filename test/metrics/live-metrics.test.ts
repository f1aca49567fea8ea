import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closedPort } from '../support/closed-port.js';
import { parseSamples, type Sample, valueOf } from '../support/prom-text.js';
import {
  createGatedClock,
  describeExit,
  newJob,
  newSimulator,
  readCheckpoint,
  runCliWith,
  spawnCli,
  tempDir,
} from '../support/resume-harness.js';

/**
 * What the metrics show of a run beyond its committed shards, with the built CLI against the
 * simulator: the rows and answer bytes read while no shard is committed yet, and how fresh the
 * data of scheduled streams is.
 */
const KEY = 'live-metrics-test-api-key-0001';
const EVENTS = 6000;
const SPAWNS = 120_000;

describe('metrics of the data read, committed or not', () => {
  it('/metrics mid-run: rows and answer bytes read move before any shard commits; at the end rows read equal rows written', async () => {
    // The stream's first page goes through; every later list request is held until the test opens the gate.
    const clock = createGatedClock(1);
    const faults = { latencyMs: 1 };
    const sim = await newSimulator({ events: EVENTS, assets: 0, seed: 5, apiKeys: [KEY], faults, clock });
    // Shards far larger than the stream: nothing is committed before a partition reaches its end.
    const streams = [{ resource: 'events' as const, partitions: 3, limit: 1000 }];
    const job = newJob(sim, streams, { formats: ['parquet'], maxRows: 100_000 }, 'metrics-live');
    const port = await closedPort();
    const textfile = join(tempDir('metrics-live-textfile'), 'live.prom');
    appendFileSync(job.file, `metrics: ${JSON.stringify({ port, host: '127.0.0.1', textfile, export: 'live' })}\n`);
    const cli = spawnCli(['run', '--config', job.file], { cwd: job.dir, env: { SIM_KEY: KEY } });
    // A request is held: the run is draining, and its endpoint (opened before) listens.
    await clock.whenHeld(1);
    const events = { export: 'live', stream: 'events' };
    let samples: Sample[] = [];
    // The first page is written to its open shard soon after it arrived: scrape until it was.
    for (let scrapes = 0; !((valueOf(samples, 'bulk_extract_rows_read_total', events) ?? 0) > 0); scrapes++) {
      expect(scrapes, 'scrapes before the first page was read').toBeLessThan(2000);
      samples = parseSamples(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
    }
    expect(valueOf(samples, 'bulk_extract_rows_read_total', events)).toBe(1000);
    expect(valueOf(samples, 'bulk_extract_response_bytes_read_total', { export: 'live' })).toBeGreaterThan(100_000);
    expect(valueOf(samples, 'bulk_extract_rows_written_total', { ...events, format: 'parquet' }), 'no shard committed').toBe(0);
    expect(valueOf(samples, 'bulk_extract_files_written_total', { ...events, format: 'parquet' })).toBe(0);
    expect(valueOf(samples, 'bulk_extract_partitions_done', events)).toBe(0);

    clock.open();
    const exit = await cli.done;
    expect(exit.code, describeExit(exit)).toBe(0);
    const end = parseSamples(readFileSync(textfile, 'utf8'));
    expect(valueOf(end, 'bulk_extract_rows_read_total', events)).toBe(EVENTS);
    expect(valueOf(end, 'bulk_extract_rows_written_total', { ...events, format: 'parquet' })).toBe(EVENTS);
    expect(valueOf(end, 'bulk_extract_response_bytes_read_total')).toBeGreaterThan(valueOf(samples, 'bulk_extract_response_bytes_read_total')!);
  }, SPAWNS);
});

describe('freshness of scheduled streams', () => {
  it('data_end: the incremental window\'s end and the sealed snapshot\'s start, read again at the end of each run; none for a full stream', async () => {
    const sim = await newSimulator({ events: 2000, assets: 300, seed: 7, apiKeys: [KEY] });
    const streams = [
      { resource: 'events' as const, mode: 'incremental' as const, safetyLag: '1m', partitions: 2, limit: 500 },
      { resource: 'assets' as const, mode: 'snapshot' as const, partitions: 1, limit: 500 },
      { resource: 'events' as const, name: 'all-events', partitions: 1, limit: 1000 },
    ];
    const job = newJob(sim, streams, { formats: ['ndjson'] }, 'metrics-fresh');
    const textfile = join(tempDir('metrics-fresh-textfile'), 'fresh.prom');
    appendFileSync(job.file, `metrics: ${JSON.stringify({ textfile, export: 'fresh' })}\n`);
    const ends = (): Record<string, number> => {
      const samples = parseSamples(readFileSync(textfile, 'utf8')).filter((s) => s.name === 'bulk_extract_data_end_timestamp_seconds');
      return Object.fromEntries(samples.map((s) => [s.labels.stream, s.value]));
    };
    /** What the output says: the incremental window's end, and the start of the snapshot _LATEST names. */
    const expected = () => {
      const latest = readFileSync(join(job.out, 'assets', '_LATEST'), 'utf8').trim();
      const run = /^run=(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d\.\d{3})Z$/.exec(latest)!;
      return {
        events: readCheckpoint(job.out).streams.events!.window!.until / 1000,
        assets: Date.parse(`${run[1]}-${run[2]}-${run[3]}T${run[4]}:${run[5]}:${run[6]}Z`) / 1000,
      };
    };

    const first = await runCliWith(['run', '--config', job.file], { cwd: job.dir, env: { SIM_KEY: KEY } });
    expect(first.code, describeExit(first)).toBe(0);
    const once = ends();
    expect(once).toEqual(expected());
    expect(once.events).toBeLessThan(Date.now() / 1000 - 60);

    const second = await runCliWith(['run', '--config', job.file], { cwd: job.dir, env: { SIM_KEY: KEY } });
    expect(second.code, describeExit(second)).toBe(0);
    const twice = ends();
    expect(twice).toEqual(expected());
    expect(twice.events).toBeGreaterThan(once.events ?? Infinity);
    expect(twice.assets).toBeGreaterThan(once.assets ?? Infinity);
  }, SPAWNS);
});
