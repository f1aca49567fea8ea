import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJob } from '../../src/export/run/run-job.js';
import { verifyOutput } from '../../src/export/inspect/verify.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { openDuck, type Duck, ndjsonAt, parquetAt } from '../support/export-duckdb.js';
import { loadJob, removeTempDirs, SIM_KEY, tempDir } from '../support/export-harness.js';
import { liveKeys } from '../support/instances.js';

/**
 * `resource: instances` end to end against the simulator's data model: every node of a view once,
 * in both formats, with and without a split into several queries; Parquet read back by DuckDB.
 */
let sim: Simulator;
let duck: Duck;

beforeAll(async () => {
  const instances = { assets: 900, activities: 300, timeseries: 200, edges: 100 };
  sim = await startSimulator({ seed: 29, apiKeys: [SIM_KEY], instances });
  duck = await openDuck();
});

afterAll(async () => {
  duck.close();
  await sim.close();
  removeTempDirs();
});

const ASSET_VIEW = { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };

async function exportAssets(stream: Record<string, unknown>) {
  const dir = tempDir('instances-e2e-');
  const out = join(dir, 'out');
  const config = loadJob(dir, {
    baseUrl: sim.baseUrl,
    out,
    streams: [{ resource: 'instances', name: 'assets', view: ASSET_VIEW, limit: 200, ...stream }],
    output: { formats: ['parquet', 'ndjson'] },
  });
  const result = await runJob({ config, logger: silentLogger });
  return { out, result };
}

async function keysIn(glob: string, reader: (glob: string) => string): Promise<string[]> {
  const rows = await duck.rows(`SELECT space || ':' || externalId AS k FROM ${reader(glob)} ORDER BY k`);
  return rows.map((row) => String(row.k));
}

describe('instances: a full export of one view', () => {
  for (const split of [undefined, 'space'] as const) {
    it(`writes every node of the view once, in both formats${split === undefined ? '' : ', split by space'}`, async () => {
      const spaces = split === undefined ? undefined : ['sim_site_a', 'sim_site_b', 'sim_site_c'];
      const { out, result } = await exportAssets({ ...(split === undefined ? {} : { split, spaces }) });
      expect(result.state).toBe('complete');
      const expected = liveKeys(sim, 'asset').sort();
      expect(expected.length).toBe(900);
      expect(await keysIn(`${out}/assets/**/*.parquet`, parquetAt)).toEqual(expected);
      expect(await keysIn(`${out}/assets/**/*.ndjson`, ndjsonAt)).toEqual(expected);
      const parts = readdirSync(join(out, 'assets'));
      expect(parts).toHaveLength(split === undefined ? 1 : 3);
      const verified = await verifyOutput(out, { keys: true });
      expect(verified.problems).toEqual([]);
      expect(verified.success).toBe(true);
    });
  }
});
