import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runJob } from '../../src/export/run/run-job.js';
import { WORKER_PATIENCE_MS } from '../../src/export/run/finalize.js';
import { silentLogger } from '../../src/log.js';
import { LockedError } from '../../src/output/lock.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { loadJob, removeTempDirs, SIM_KEY, tempDir } from '../support/export-harness.js';
import { createFakeClock } from '../support/fake-clock.js';
import { captureLogger } from '../support/log-capture.js';

/**
 * The locks a worker of a split job waits for, timed on the run's clock (a fake one here, so the
 * minutes of patience pass at once): a live process holding this worker's share refuses it with
 * LockedError (exit 75 at the CLI) before it changes anything, and a run without --shard holding
 * the folder when the worker completes its share is no refusal (that run ends the split job).
 */
let sim: Simulator;

beforeEach(async () => {
  sim = await startSimulator({ assets: 50, events: 1200, seed: 7, apiKeys: [SIM_KEY] });
});

afterEach(async () => {
  await sim.close();
  removeTempDirs();
});

function job() {
  const dir = tempDir('bulk-extract-overlap-locks-');
  const out = join(dir, 'out');
  const config = loadJob(dir, {
    baseUrl: sim.baseUrl,
    out,
    streams: [{ resource: 'events', partitions: 2, limit: 200 }],
    output: { formats: ['ndjson'] },
  });
  return { config, out };
}

/** A lock file naming a live process of this host other than this one (the test runner's parent). */
function liveLock(path: string): void {
  writeFileSync(path, JSON.stringify({ pid: process.ppid, host: hostname(), startedAt: new Date().toISOString() }));
}

describe('locks a worker meets', () => {
  it('its share held by a live process: refused after 60 s (on the run\'s clock) with LockedError, before holding the output', async () => {
    const { config, out } = job();
    mkdirSync(join(out, '_workers'), { recursive: true });
    liveLock(join(out, '_workers', 'worker-1-of-2.lock'));
    const clock = createFakeClock();
    const startedAt = clock.now();
    let held = false;
    const run = runJob({
      config,
      worker: { index: 1, count: 2 },
      logger: silentLogger,
      clock,
      onHeld: () => {
        held = true;
        return Promise.resolve();
      },
    });
    await expect(run).rejects.toBeInstanceOf(LockedError);
    await expect(run).rejects.toThrow(`worker 1/2 of ${out} is in use by another bulk-extract run (pid ${process.ppid}`);
    expect(clock.now() - startedAt).toBeGreaterThanOrEqual(60_000);
    expect(held, 'a refused run never holds the output, so its metrics never start').toBe(false);
    expect(readdirSync(out).sort(), 'nothing written').toEqual(['_workers']);
    expect(readdirSync(join(out, '_workers'))).toEqual(['worker-1-of-2.lock']);
  });

  it('its share complete while a run without --shard holds the folder: not finalized, waiting for no worker, no refusal', async () => {
    const { config, out } = job();
    const worker = { index: 0, count: 2 };
    const first = await runJob({ config, worker, logger: silentLogger, clock: createFakeClock() });
    expect(first.state).toBe('complete');
    expect(first.finalize).toEqual({ finalized: false, waitingFor: [1] });
    // A run without --shard that took over the split job once no worker ran, and runs on.
    liveLock(join(out, '.lock'));
    const clock = createFakeClock();
    const startedAt = clock.now();
    const captured = captureLogger('warn');
    const last = await runJob({ config, worker: { index: 1, count: 2 }, logger: captured.logger, clock });
    expect(last.state).toBe('complete');
    expect(last.finalize).toEqual({ finalized: false, waitingFor: [] });
    expect(clock.now() - startedAt).toBeGreaterThanOrEqual(WORKER_PATIENCE_MS);
    expect(captured.records().map((line) => line.msg)).toContain('worker complete; another run holds the output folder and ends the split job');
    expect(existsSync(join(out, '_workers', 'agreement.json')), 'left to the run that holds the folder').toBe(true);
    expect(existsSync(join(out, '_SUCCESS'))).toBe(false);
  });
});
