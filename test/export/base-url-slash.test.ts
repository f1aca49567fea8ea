import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { runJob } from '../../src/export/run/run-job.js';
import { silentLogger } from '../../src/log.js';
import { createFakeClock } from '../support/fake-clock.js';
import { newSimulator, readCheckpoint, type StreamSpec, tempDir, writeJob } from '../support/resume-harness.js';

/**
 * A trailing slash in `source.baseUrl` is the same source: a checkpoint written with
 * `.../projects/demo` resumes with `.../projects/demo/`, and one that recorded the slash resumes
 * without it, instead of being refused as drift.
 */
const KEY = 'base-url-slash-key-0001';
const EVENTS: StreamSpec = { resource: 'events', partitions: 2, limit: 1000 };
const ASSETS: StreamSpec = { resource: 'assets', partitions: 1, limit: 1000 };

function run(file: string, baseUrl: string, out: string, streams: StreamSpec[]) {
  writeJob(file, { baseUrl, outDir: out, streams, formats: ['ndjson'] });
  return runJob({ config: loadConfig(file, { SIM_KEY: KEY }), logger: silentLogger, clock: createFakeClock() });
}

describe('source.baseUrl with and without a trailing slash', () => {
  it('is the same source: each resumes the checkpoint the other wrote', async () => {
    const sim = await newSimulator({ events: 1500, assets: 40, seed: 5, apiKeys: [KEY] });
    const dir = tempDir('base-url-slash');
    const out = join(dir, 'out');
    const file = join(dir, 'job.yaml');
    expect((await run(file, sim.baseUrl, out, [EVENTS])).state).toBe('complete');

    // With the slash, a stream added: the checkpoint is resumed (events complete), not refused.
    const slashed = await run(file, `${sim.baseUrl}/`, out, [EVENTS, ASSETS]);
    expect(slashed).toMatchObject({ state: 'complete', resumed: true, rows: 40 });
    expect(readCheckpoint(out).baseUrl).toBe(sim.baseUrl);

    // A checkpoint that recorded the slash (as one written before it was dropped) resumes without it.
    const path = join(out, '_checkpoint.json');
    const recorded = JSON.parse(readFileSync(path, 'utf8')) as { baseUrl: string };
    // Such a version (5 or earlier) wrote no digest.
    writeFileSync(path, `${JSON.stringify({ ...recorded, baseUrl: `${sim.baseUrl}/`, version: 5, digest: undefined }, null, 2)}\n`);
    expect(readCheckpoint(out).baseUrl).toBe(`${sim.baseUrl}/`);
    const bare = await run(file, sim.baseUrl, out, [EVENTS, ASSETS, { ...ASSETS, name: 'more-assets' }]);
    expect(bare).toMatchObject({ state: 'complete', resumed: true, rows: 40 });
  });
});
