import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadConfig } from '../../src/config/load-config.js';
import { runJob } from '../../src/export/run/run-job.js';
import { silentLogger } from '../../src/log.js';
import { type FaultOptionsInput, type Simulator, startSimulator } from '../../src/simulator/index.js';
import type { Clock } from '../../src/util/clock.js';
import { expectedIds, expectExactOutput } from '../support/resume-harness.js';

const KEY = 'fault-matrix-key-0001';
const CLIENT = { id: 'matrix-client', secret: 'matrix-client-secret-0001' };
const EVENTS = 4000;
const ASSETS = 500;
const cleanup: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/**
 * One fake clock for the simulator and the worker: backoff, latency, rate-cap refill and token
 * lifetimes all pass without waiting. A sleep resolves on a later turn of the event loop (not at
 * once), so requests in flight overlap as they do over a real network.
 */
function sharedClock(): Clock & { advance(ms: number): void } {
  let now = Date.UTC(2026, 0, 1);
  return {
    now: () => now,
    advance: (ms) => {
      now += ms;
    },
    sleep: (ms) =>
      new Promise((resolve) =>
        setImmediate(() => {
          now += ms;
          resolve();
        }),
      ),
  };
}

async function setUp(faults: FaultOptionsInput, auth: 'api-key' | 'oauth' = 'api-key') {
  const clock = sharedClock();
  const sim: Simulator = await startSimulator({
    events: EVENTS,
    assets: ASSETS,
    seed: 21,
    apiKeys: [KEY],
    clients: [CLIENT],
    faults,
    clock,
  });
  const dir = mkdtempSync(join(tmpdir(), 'bulk-extract-matrix-'));
  cleanup.push(() => sim.close(), () => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, 'out');
  const job = {
    source: {
      baseUrl: sim.baseUrl,
      auth:
        auth === 'api-key'
          ? { type: 'api-key', apiKey: '${SIM_KEY}' }
          : { type: 'oauth-client-credentials', tokenUrl: sim.tokenUrl, clientId: CLIENT.id, clientSecret: '${SECRET}' },
      retry: { maxAttempts: 30 },
    },
    // Small pages: about 225 requests per run, so even a 2% fault happens.
    streams: [
      { resource: 'events', partitions: 3, limit: 20 },
      { resource: 'assets', partitions: 1, limit: 20 },
    ],
    output: { dir: out, formats: ['parquet', 'ndjson'], shard: { maxRows: 1000 }, parquet: { rowGroupRows: 1000 } },
  };
  writeFileSync(join(dir, 'job.yaml'), stringify(job));
  const config = loadConfig(join(dir, 'job.yaml'), { SIM_KEY: KEY, SECRET: CLIENT.secret });
  const expected = (['events', 'assets'] as const).map((resource) => ({
    name: resource,
    resource,
    partitions: resource === 'events' ? 3 : 1,
    formats: ['parquet' as const, 'ndjson' as const],
    ids: expectedIds(sim, resource),
  }));
  return { sim, clock, config, out, expected };
}

describe('fault matrix: each fault (and all at once) runs to completion with exact output', () => {
  const cells: [string, FaultOptionsInput, string[]][] = [
    ['30% 429s', { rate429: 0.3 }, ['429']],
    ['10% 5xx', { rate5xx: 0.1 }, ['500', '502', '503', '504']],
    ['2% connection resets', { resetRate: 0.02 }, ['reset']],
    ['2% truncated bodies', { truncateRate: 0.02 }, ['truncate']],
    ['latency spikes (5 ms plus up to 5 s)', { latencyMs: 5, jitterMs: 5000 }, []],
    ['a cap of 2 concurrent requests', { maxConcurrent: 2, latencyMs: 50 }, ['concurrency-cap']],
    ['a cap of 5 requests per second', { maxRps: 5 }, ['rate-cap']],
  ];

  it.each(cells)('%s', async (_, faults, kinds) => {
    const { sim, clock, config, out, expected } = await setUp(faults);
    const result = await runJob({ config, logger: silentLogger, clock });
    expect(result.state, JSON.stringify(result.errors.map((e) => String(e.error)))).toBe('complete');
    const seen = sim.stats().faults;
    if (kinds.length > 0) {
      expect(kinds.reduce((sum, kind) => sum + (seen[kind as keyof typeof seen] ?? 0), 0), 'the fault happened').toBeGreaterThan(0);
      expect(result.manifest.retries).toBeGreaterThan(0);
    }
    await expectExactOutput(out, expected);
  });

  it('token expiry mid-run (tokens live 60 s; each page takes 2 s of fake time)', async () => {
    const { sim, clock, config, out, expected } = await setUp({ tokenTtlSeconds: 60, latencyMs: 2000 }, 'oauth');
    const result = await runJob({ config, logger: silentLogger, clock });
    expect(result.state).toBe('complete');
    expect(sim.stats().tokensIssued).toBeGreaterThan(2);
    await expectExactOutput(out, expected);
  });

  it('an expired cursor on resume: the partition is read again from its first page', async () => {
    const { sim, clock, config, out, expected } = await setUp({ cursorTtlMs: 60_000 });
    const stop = new AbortController();
    const first = await runJob({
      config,
      logger: silentLogger,
      clock,
      signal: stop.signal,
      onStart: (run) => {
        const poll = () => (run.rows() >= 1500 ? stop.abort() : setImmediate(poll));
        poll();
      },
    });
    expect(first.state).toBe('interrupted');
    clock.advance(61_000);
    sim.resetStats();
    const second = await runJob({ config, logger: silentLogger, clock });
    expect(second.state).toBe('complete');
    expect(sim.stats().faults['cursor-expired'] ?? 0).toBeGreaterThan(0);
    await expectExactOutput(out, expected);
  });

  it('all of them at once', async () => {
    const { sim, clock, config, out, expected } = await setUp(
      {
        rate429: 0.2,
        rate5xx: 0.05,
        resetRate: 0.02,
        truncateRate: 0.02,
        shortPageRate: 0.2,
        latencyMs: 5,
        jitterMs: 3000,
        maxConcurrent: 3,
        maxRps: 10,
        tokenTtlSeconds: 120,
      },
      'oauth',
    );
    const result = await runJob({ config, logger: silentLogger, clock });
    expect(result.state, JSON.stringify(result.errors.map((e) => String(e.error)))).toBe('complete');
    expect(sim.stats().tokensIssued).toBeGreaterThan(1);
    await expectExactOutput(out, expected);
  });
});
