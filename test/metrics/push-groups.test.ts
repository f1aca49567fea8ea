import { appendFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { staleGroups } from '../../src/metrics/push-groups.js';
import { parseSamples, prometheusTool, valueOf } from '../support/prom-text.js';
import { groupKeys, startPushgateway, stopPushgateways } from '../support/pushgateway.js';
import { describeExit, newJob, newSimulator, readManifest, runCliWith } from '../support/resume-harness.js';

/**
 * The Pushgateway holds the groups of the current runs only: a whole run removes what workers of
 * a split job left, a worker removes the whole runs' groups and those of workers beyond its
 * count, and no group of anyone else is touched (src/metrics/push-groups.ts).
 */
afterEach(stopPushgateways);

/** A group as GET /api/v1/metrics lists it: its labels, and a metric of bulk-extract's (or another's). */
const group = (labels: Record<string, string>, metric = 'bulk_extract_last_run_exit_code') => ({ labels, [metric]: {} });

describe('staleGroups', () => {
  const streams = ['events', 'assets'];
  const gateway = [
    group({ job: 'nightly' }),
    group({ job: 'nightly', stream: 'events' }),
    group({ job: 'nightly', stream: 'renamed' }),
    group({ job: 'nightly', shard: '0' }),
    group({ job: 'nightly', shard: '0', stream: 'events' }),
    group({ job: 'nightly', shard: '3' }),
    group({ job: 'nightly', shard: '3', stream: 'assets' }),
    group({ job: 'nightly', instance: 'host-a' }),
    group({ job: 'nightly', shard: '5' }, 'other_metric'),
    group({ job: 'hourly', shard: '0' }),
  ];
  const keys = (scope: Parameters<typeof staleGroups>[1]) => staleGroups(gateway, scope).map((g) => JSON.stringify(g));

  it('a whole run removes every worker group of its export and the groups of streams the job no longer has', () => {
    expect(keys({ jobName: 'nightly', streams })).toEqual([
      '{"stream":"renamed"}',
      '{"shard":"0"}',
      '{"shard":"0","stream":"events"}',
      '{"shard":"3"}',
      '{"shard":"3","stream":"assets"}',
    ]);
  });

  it('worker I of K removes the whole runs\' groups and those of workers K and beyond, not its peers\'', () => {
    expect(keys({ jobName: 'nightly', streams, worker: { index: 1, count: 2 } })).toEqual([
      '{}',
      '{"stream":"events"}',
      '{"stream":"renamed"}',
      '{"shard":"3"}',
      '{"shard":"3","stream":"assets"}',
    ]);
  });

  it('never a group with labels of anyone else, without a bulk_extract_ metric, or of another export', () => {
    const removed = staleGroups(gateway, { jobName: 'nightly', streams, worker: { index: 0, count: 1 } });
    expect(removed).not.toContainEqual({ instance: 'host-a' });
    expect(removed).not.toContainEqual({ shard: '5' });
    expect(staleGroups(gateway, { jobName: 'weekly', streams })).toEqual([]);
    expect(staleGroups([{ labels: { job: 'nightly', shard: 7 } }, null, 'x', { nolabels: 1 }], { jobName: 'nightly', streams })).toEqual([]);
  });
});

const KEY = 'push-groups-api-key-0001';

describe.skipIf(prometheusTool('prometheus-pushgateway') === undefined)('a real Pushgateway', () => {
  it('after a split job with a killed worker, a whole run leaves exactly its own groups, with its own values', async () => {
    const url = await startPushgateway(prometheusTool('prometheus-pushgateway')!);
    const sim = await newSimulator({ events: 4000, assets: 400, seed: 9, apiKeys: [KEY] });
    const streams = [
      { resource: 'events' as const, partitions: 4, limit: 500 },
      { resource: 'assets' as const, partitions: 1, limit: 200 },
    ];
    const job = newJob(sim, streams, { formats: ['parquet'], maxRows: 500 }, 'groups');
    appendFileSync(job.file, `metrics: ${JSON.stringify({ export: 'nightly', pushgateway: url })}\n`);
    const env = { SIM_KEY: KEY };
    const run = (args: string[], extra: Record<string, string> = {}) =>
      runCliWith(['run', '--config', job.file, '--log-level', 'warn', ...args], { env: { ...env, ...extra } });

    const first = await run(['--shard', '0/2']);
    expect(first.code, describeExit(first)).toBe(0);
    const success = async () =>
      parseSamples(await (await fetch(`${url}/metrics`)).text()).filter((s) => s.name === 'bulk_extract_last_success_timestamp_seconds');
    expect(await success(), 'a worker\'s share is no success of the job').toEqual([]);
    const killed = await run(['--shard', '1/2'], { BULK_EXTRACT_CRASH_AT: 'after-shard-rename:2' });
    expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
    expect(await groupKeys(url)).toEqual([
      'job=nightly,shard=0',
      'job=nightly,shard=0,stream=assets',
      'job=nightly,shard=0,stream=events',
      'job=nightly,shard=1',
      'job=nightly,shard=1,stream=assets',
      'job=nightly,shard=1,stream=events',
    ]);

    const whole = await run([]);
    expect(whole.code, describeExit(whole)).toBe(0);
    expect(whole.stderr).not.toContain('cannot remove the groups');
    expect(await groupKeys(url)).toEqual(['job=nightly', 'job=nightly,stream=assets', 'job=nightly,stream=events']);
    const samples = parseSamples(await (await fetch(`${url}/metrics`)).text());
    expect(valueOf(samples, 'bulk_extract_last_run_exit_code', { job: 'nightly' })).toBe(0);
    expect((await success()).map((s) => s.labels.job), 'the whole run completed the job').toEqual(['nightly']);
    // One run's totals, not summed with the workers': the figures of the files this run committed.
    const manifest = readManifest(job.out);
    const written = samples.filter((s) => s.name === 'bulk_extract_files_written_total').reduce((sum, s) => sum + s.value, 0);
    expect(written).toBeLessThanOrEqual(manifest.files.length);
    expect(samples.filter((s) => s.labels.shard !== undefined).map((s) => s.name)).toEqual([]);
  }, 120_000);
});
