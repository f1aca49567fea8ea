import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { JobConfig } from '../../src/config/load-config.js';
import { metricsSchema } from '../../src/config/metrics-schema.js';
import { silentLogger } from '../../src/log.js';
import { OVERLAP_REFUSED, publishOverlapRefused } from '../../src/metrics/overlap-refused.js';
import { closedPort } from '../support/closed-port.js';
import { loadJob, removeTempDirs, tempDir } from '../support/export-harness.js';
import { familiesOf, type FakePushgateway, startFakePushgateway } from '../support/fake-pushgateway.js';
import { captureLogger } from '../support/log-capture.js';
import { parseSamples } from '../support/prom-text.js';

/**
 * What a run refused because another live run holds its output publishes: one POST of one metric
 * family to the group of its run-wide metrics, nothing else. Against a fake Pushgateway on
 * loopback that records what it is sent.
 */
const REFUSED_AT_MS = Date.parse('2026-11-26T07:00:05.000Z');
let gateway: FakePushgateway | undefined;

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  removeTempDirs();
});

function jobWith(metrics: Record<string, unknown> | undefined): JobConfig {
  const dir = tempDir('bulk-extract-overlap-refused-');
  const base = loadJob(dir, { baseUrl: 'https://acme.example.com/api/v1/projects/demo', out: join(dir, 'out'), streams: [{ resource: 'events' }] });
  return { ...base, metrics: metrics === undefined ? undefined : metricsSchema.parse(metrics) };
}

describe('publishOverlapRefused', () => {
  it('POSTs only bulk_extract_overlap_refused_timestamp_seconds{export}, to the run-wide group job=<export>', async () => {
    gateway = await startFakePushgateway();
    const config = jobWith({ pushgateway: gateway.url, export: 'hourly', textfile: join(tempDir('prom-'), 'x.prom'), port: 9464 });
    await publishOverlapRefused(config, silentLogger, { refusedAtMs: REFUSED_AT_MS });
    expect(gateway.requests.map(({ method, path }) => ({ method, path }))).toEqual([{ method: 'POST', path: '/metrics/job/hourly' }]);
    const body = gateway.requests[0]?.body ?? '';
    expect(familiesOf(body)).toEqual([OVERLAP_REFUSED]);
    expect(body).toContain(`# TYPE ${OVERLAP_REFUSED} gauge`);
    expect(parseSamples(body)).toEqual([{ name: OVERLAP_REFUSED, labels: { export: 'hourly' }, value: REFUSED_AT_MS / 1000 }]);
  });

  it('a worker (--shard 1/3) pushes to its own group, job=<export>/shard=1, as its run-wide metrics would go', async () => {
    gateway = await startFakePushgateway();
    const config = jobWith({ pushgateway: gateway.url });
    await publishOverlapRefused(config, silentLogger, { refusedAtMs: REFUSED_AT_MS, worker: { index: 1, count: 3 } });
    // The export label defaults to the job file's name (job.yaml).
    expect(gateway.requests.map(({ method, path }) => `${method} ${path}`)).toEqual(['POST /metrics/job/job/shard/1']);
    expect(parseSamples(gateway.requests[0]?.body ?? '')).toEqual([{ name: OVERLAP_REFUSED, labels: { export: 'job' }, value: REFUSED_AT_MS / 1000 }]);
  });

  it('without a Pushgateway it publishes nothing (the textfile and the port are the live run\'s)', async () => {
    const captured = captureLogger('debug');
    await publishOverlapRefused(jobWith({ textfile: join(tempDir('prom-'), 'x.prom') }), captured.logger, { refusedAtMs: REFUSED_AT_MS });
    await publishOverlapRefused(jobWith(undefined), captured.logger, { refusedAtMs: REFUSED_AT_MS });
    expect(captured.records()).toEqual([]);
  });

  it('a Pushgateway that cannot be reached is a warning, never a rejection', async () => {
    const captured = captureLogger('warn');
    const url = `http://127.0.0.1:${await closedPort()}`;
    const config = jobWith({ pushgateway: url });
    const pushed = publishOverlapRefused(config, captured.logger, { refusedAtMs: REFUSED_AT_MS });
    await expect(pushed).resolves.toBeUndefined();
    expect(captured.records().map((line) => String(line.msg))).toEqual([expect.stringContaining(`metrics: pushing the overlap refusal to ${url} failed`)]);
  });
});
