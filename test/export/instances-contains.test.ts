import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJob } from '../../src/export/run/run-job.js';
import { silentLogger } from '../../src/log.js';
import { type Instance, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { type Duck, ndjsonAt, openDuck, parquetAt } from '../support/export-duckdb.js';
import { loadJob, removeTempDirs, SIM_KEY, tempDir } from '../support/export-harness.js';
import { liveKeys, valueIn } from '../support/instances.js';

/**
 * A `resource: instances` stream whose filter is `containsAny` on a list property (CogniteAsset's
 * `tags`), exported end to end: the job file takes it, the simulator serves it, and the output
 * holds exactly the matching nodes, as DuckDB reads them back.
 */
let sim: Simulator;
let duck: Duck;

beforeAll(async () => {
  const instances = { assets: 600, activities: 200, timeseries: 100, edges: 50 };
  sim = await startSimulator({ seed: 31, apiKeys: [SIM_KEY], instances, recordRequests: true });
  duck = await openDuck();
});

afterAll(async () => {
  duck.close();
  await sim.close();
  removeTempDirs();
});

const ASSET_VIEW = { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };
const WANTED = ['pump', 'offshore'];

async function keysIn(glob: string, reader: (glob: string) => string): Promise<string[]> {
  const rows = await duck.rows(`SELECT space || ':' || externalId AS k FROM ${reader(glob)} ORDER BY k`);
  return rows.map((row) => String(row.k));
}

/** Whether a generated asset's tags hold one of WANTED: computed from the instance, not by the simulator. */
function tagged(instance: Instance): boolean {
  const tags = (valueIn(instance, 'cdf_cdm:CogniteDescribable', 'tags') as string[] | null) ?? [];
  return tags.some((tag) => WANTED.includes(tag));
}

describe('instances: a containsAny filter on a list property', () => {
  it('writes exactly the nodes whose tags hold one of the values, in both formats', async () => {
    const dir = tempDir('instances-contains-');
    const out = join(dir, 'out');
    const filter = { containsAny: { property: ['cdf_cdm', 'CogniteAsset/v1', 'tags'], values: WANTED } };
    const config = loadJob(dir, {
      baseUrl: sim.baseUrl,
      out,
      streams: [{ resource: 'instances', name: 'assets', view: ASSET_VIEW, limit: 100, filter }],
      output: { formats: ['parquet', 'ndjson'] },
    });
    const result = await runJob({ config, logger: silentLogger });
    expect(result.state).toBe('complete');

    const expected = liveKeys(sim, 'asset', tagged).sort();
    const all = liveKeys(sim, 'asset').length;
    expect(expected.length).toBeGreaterThan(50);
    expect(expected.length).toBeLessThan(all - 50);
    expect(await keysIn(`${out}/assets/**/*.parquet`, parquetAt)).toEqual(expected);
    expect(await keysIn(`${out}/assets/**/*.ndjson`, ndjsonAt)).toEqual(expected);

    // DuckDB's own reading of the exported tags column agrees: every row holds a wanted tag.
    const missing = await duck.one(
      `SELECT count(*)::INTEGER AS n FROM ${parquetAt(`${out}/assets/**/*.parquet`)}
       WHERE NOT coalesce(list_has_any(tags, ['pump', 'offshore']), false)`,
    );
    expect(missing).toEqual({ n: 0 });

    // The filter went to the platform as written, not applied after reading.
    const sent = sim.requests().filter((request) => request.route.includes('/models/instances/list'));
    expect(sent.length).toBeGreaterThan(0);
    for (const request of sent) expect(JSON.stringify(request.body)).toContain('"containsAny"');
  });
});
