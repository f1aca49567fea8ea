import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MetricsGate } from '../../src/cli/metrics-gate.js';
import type { JobConfig } from '../../src/config/load-config.js';
import { metricsSchema } from '../../src/config/metrics-schema.js';
import { OVERLAP_REFUSED } from '../../src/metrics/overlap-refused.js';
import { loadJob, removeTempDirs, tempDir } from '../support/export-harness.js';
import { familiesOf, type FakePushgateway, startFakePushgateway } from '../support/fake-pushgateway.js';
import { captureLogger } from '../support/log-capture.js';
import { parseSamples, valueOf } from '../support/prom-text.js';

/**
 * The CLI's metrics gate: a run's metrics start once it holds its output; a run refused because
 * another live run holds it publishes only the refusal, leaving the live run's textfile, port and
 * Pushgateway metrics alone. A fake Pushgateway on loopback records the pushes.
 */
let gateway: FakePushgateway | undefined;
let taken: Server | undefined;

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  await new Promise<void>((resolve) => (taken === undefined ? resolve() : taken.close(() => resolve())));
  taken = undefined;
  removeTempDirs();
});

interface Setup {
  config: JobConfig;
  textfile: string;
  gateway: FakePushgateway;
  port: number;
}

/** A job with all three outputs; the port is held, as the live run holding the output would hold it. */
async function setup(): Promise<Setup> {
  const dir = tempDir('bulk-extract-metrics-gate-');
  gateway = await startFakePushgateway();
  const server = createServer();
  taken = server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const textfile = join(dir, 'hourly.prom');
  const base = loadJob(dir, { baseUrl: 'https://acme.example.com/api/v1/projects/demo', out: join(dir, 'out'), streams: [{ resource: 'events' }] });
  const metrics = metricsSchema.parse({ export: 'hourly', textfile, pushgateway: gateway.url, port, host: '127.0.0.1' });
  return { config: { ...base, metrics }, textfile, gateway, port };
}

const LIVE_TEXTFILE = '# the live run\'s metrics\nbulk_extract_last_run_exit_code{export="hourly"} 0\n';

describe('MetricsGate', () => {
  it('refused by the lock before holding the output: one POST of the refusal, the textfile and the port untouched', async () => {
    const { config, textfile, gateway } = await setup();
    writeFileSync(textfile, LIVE_TEXTFILE);
    const captured = captureLogger('debug');
    const gate = new MetricsGate(config, captured.logger, { only: undefined, worker: undefined });
    const refusedAtMs = Date.parse('2026-11-26T07:00:05.000Z');
    await gate.end(75, { endedAtMs: refusedAtMs, overlap: true });
    expect(gateway.requests.map(({ method, path }) => `${method} ${path}`)).toEqual(['POST /metrics/job/hourly']);
    expect(familiesOf(gateway.requests[0]?.body ?? '')).toEqual([OVERLAP_REFUSED]);
    expect(readFileSync(textfile, 'utf8'), 'the live run\'s textfile').toBe(LIVE_TEXTFILE);
    const said = captured.records().map((line) => String(line.msg));
    expect(said.filter((msg) => msg.includes('/metrics')), 'no endpoint was tried on the live run\'s port').toEqual([]);
  });

  it('a worker refused by the lock pushes the refusal to its shard\'s group', async () => {
    const { config, gateway } = await setup();
    const gate = new MetricsGate(config, captureLogger().logger, { only: undefined, worker: { index: 2, count: 4 } });
    await gate.end(75, { overlap: true });
    expect(gateway.requests.map(({ method, path }) => `${method} ${path}`)).toEqual(['POST /metrics/job/hourly/shard/2']);
    expect(familiesOf(gateway.requests[0]?.body ?? '')).toEqual([OVERLAP_REFUSED]);
  });

  it('a run that held the output: its metrics from open() on, and its exit code at the end; no refusal metric', async () => {
    const { config, textfile, gateway } = await setup();
    await new Promise<void>((resolve) => taken?.close(() => resolve()));
    taken = undefined;
    const gate = new MetricsGate(config, captureLogger().logger, { only: undefined, worker: undefined });
    await gate.open();
    expect(existsSync(textfile), 'written at the start').toBe(true);
    const opened = gateway.requests.length;
    expect(opened).toBeGreaterThan(0);
    await gate.end(0);
    const samples = parseSamples(readFileSync(textfile, 'utf8'));
    expect(valueOf(samples, 'bulk_extract_last_run_exit_code')).toBe(0);
    expect(gateway.requests.length).toBeGreaterThan(opened);
    const pushed = gateway.requests.flatMap((request) => familiesOf(request.body));
    expect(pushed).toContain('bulk_extract_last_run_exit_code');
    expect(pushed).not.toContain(OVERLAP_REFUSED);
  });

  it('a run refused for another reason (drift) before holding the output publishes its exit code as before', async () => {
    const { config, textfile } = await setup();
    const gate = new MetricsGate(config, captureLogger().logger, { only: undefined, worker: undefined });
    await gate.end(2);
    expect(valueOf(parseSamples(readFileSync(textfile, 'utf8')), 'bulk_extract_last_run_exit_code')).toBe(2);
  });

  it('without metrics in the job: nothing, and nothing loaded', async () => {
    const { config } = await setup();
    const none = { ...config, metrics: undefined };
    const gate = new MetricsGate(none, captureLogger().logger, { only: undefined, worker: undefined });
    await gate.open();
    await gate.end(75, { overlap: true });
    await gate.end(0);
    expect(gateway?.requests).toEqual([]);
  });
});
