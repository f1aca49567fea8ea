import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJob } from '../../src/export/run/run-job.js';
import { verifyOutput } from '../../src/export/inspect/verify.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { openDuck, type Duck, parquetAt } from '../support/export-duckdb.js';
import { loadJob, removeTempDirs, SIM_KEY, tempDir } from '../support/export-harness.js';
import { createFakeClock } from '../support/fake-clock.js';
import { liveKeys } from '../support/instances.js';

/**
 * `mode: snapshot` for instances: each run after a completed one reads the whole view again into
 * a run folder of its own, sealed with `_SUCCESS`; `_LATEST` names the newest; `keep` prunes.
 */
let sim: Simulator;
let duck: Duck;

beforeAll(async () => {
  const instances = { assets: 300, activities: 50, timeseries: 20, edges: 40 };
  sim = await startSimulator({ seed: 37, apiKeys: [SIM_KEY], instances });
  duck = await openDuck();
});

afterAll(async () => {
  duck.close();
  await sim.close();
  removeTempDirs();
});

describe('instances, mode: snapshot', () => {
  it('writes the whole view in each run, as it is then; _LATEST names the newest; keep: 1 prunes the older', async () => {
    const dir = tempDir('instances-snapshot-');
    const out = join(dir, 'out');
    const view = { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };
    const stream = { resource: 'instances', name: 'assets', view, mode: 'snapshot', keep: 1, limit: 70 };
    const config = loadJob(dir, { baseUrl: sim.baseUrl, out, streams: [stream], output: { formats: ['parquet'] } });
    const clock = createFakeClock(Date.UTC(2026, 6, 1));
    const run = async () => {
      clock.advance(60_000);
      return runJob({ config, logger: silentLogger, clock });
    };
    const keysOf = async (run: string) => {
      const rows = await duck.rows(`SELECT space || ':' || externalId AS k FROM ${parquetAt(`${out}/assets/${run}/*/*.parquet`)} ORDER BY k`);
      return rows.map((row) => String(row.k));
    };

    expect((await run()).state).toBe('complete');
    const [first] = readdirSync(join(out, 'assets')).filter((name) => name.startsWith('run='));
    expect(await keysOf(first!)).toEqual(liveKeys(sim, 'asset').sort());
    const before = liveKeys(sim, 'asset');

    const gone = sim.instances.instance('asset', 4);
    sim.deleteInstances([{ instanceType: 'node', space: gone.space, externalId: gone.externalId }]);
    sim.insertInstances('asset', 5);
    expect((await run()).state).toBe('complete');
    const runs = readdirSync(join(out, 'assets')).filter((name) => name.startsWith('run='));
    expect(runs).toHaveLength(1);
    const [second] = runs;
    expect(second).not.toBe(first);
    const now = liveKeys(sim, 'asset').sort();
    expect(now).toHaveLength(before.length + 4);
    expect(await keysOf(second!)).toEqual(now);
    expect(readFileSync(join(out, 'assets', '_LATEST'), 'utf8').trim()).toBe(second);
    expect(existsSync(join(out, 'assets', second!, '_SUCCESS'))).toBe(true);
    const sealed = JSON.parse(readFileSync(join(out, 'assets', second!, '_manifest.json'), 'utf8')) as Record<string, unknown>;
    expect(sealed).toMatchObject({ resource: 'instances', window: null, rows: now.length });
    expect(sealed.sync).toBeUndefined();
    const verified = await verifyOutput(out, { keys: true });
    expect(verified.problems).toEqual([]);
  });
});
