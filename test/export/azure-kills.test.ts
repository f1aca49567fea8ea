import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { createAzureStore } from '../../src/output/azure-store.js';
import { AZURITE_ACCOUNT, AZURITE_KEY, type Azurite, startAzurite } from '../support/azurite.js';
import {
  describeExit,
  type Exit,
  jobYaml,
  type JobSpec,
  listFiles,
  newSimulator,
  runCliWith,
  seededRandom,
  sha256,
  spawnCli,
  type StreamSpec,
  tempDir,
} from '../support/resume-harness.js';
import { downloadAll } from '../support/s3-download.js';
import { openDuck, parquetAt } from '../support/export-duckdb.js';
import { createFakeClock } from '../support/fake-clock.js';
import type { InstancesStreamSpec } from '../support/torture-instances.js';
import type { PointsStreamSpec } from '../support/torture-points.js';

/**
 * Exactly once into Azure, shown against a local folder: the six collections, a datapoints stream
 * and an instances stream exported to abfss:// on Azurite by a CLI killed with SIGKILL again and
 * again (at failpoints between the steps of a commit, in the middle of an upload, and from outside
 * at a log line), each run resuming the one before; then the same job exported once, unharmed, to
 * a local folder. The simulator serves the same pages to both (no faults), so the collections'
 * and the instances' shards are cut at the same rows: the container holds them key by key with
 * the same bytes. A datapoints shard is cut where its run began as well as by size, so after a
 * resume its keys differ: its rows are compared instead, every point once in both (NDJSON line by
 * line, Parquet row by row through DuckDB).
 */
const KEY = 'azure-kills-key-0001';
const KILLS = Number(process.env.AZURE_KILLS ?? 6);
const FAILPOINTS = ['after-append', 'after-upload-part', 'after-shard-rename', 'after-manifest-write', 'after-checkpoint-write'] as const;

let azurite: Azurite;

beforeAll(async () => {
  azurite = await startAzurite();
  await azurite.container('lake');
});
afterAll(async () => {
  await azurite.close();
});

const STREAMS = [
  { resource: 'assets', partitions: 1, limit: 200 },
  { resource: 'events', partitions: 3, limit: 500 },
  { resource: 'timeseries', partitions: 2, limit: 100 },
  { resource: 'files', partitions: 2, limit: 300 },
  { resource: 'sequences', partitions: 1, limit: 100 },
  { resource: 'relationships', partitions: 2, limit: 400 },
  { resource: 'datapoints', name: 'points', partitions: 2, limit: 100 } satisfies PointsStreamSpec,
  {
    resource: 'instances',
    name: 'nodes',
    view: { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' },
    spaces: ['sim_site_a', 'sim_site_b', 'sim_site_c'],
    split: 'space',
    limit: 200,
  } satisfies InstancesStreamSpec,
] as unknown as StreamSpec[];

/** Whether a key is a shard (data), not a state file, record or marker that holds times of its run. */
function isShard(key: string): boolean {
  return /\.(parquet|ndjson)$/.test(key) && !key.startsWith('_runs/') && !key.startsWith('_workers/');
}

/** The streams whose shards are cut where a run resumed (datapoints): compared by rows, not by keys. */
const BY_ROWS = ['points/'];

/** Every NDJSON line of a stream's shards, sorted. */
function ndjsonLines(root: string, stream: string): string[] {
  return listFiles(root)
    .filter((path) => path.startsWith(stream) && path.endsWith('.ndjson'))
    .flatMap((path) => readFileSync(join(root, path), 'utf8').split('\n').filter((line) => line !== ''))
    .sort();
}

describe('abfss:// killed and resumed against a local folder', () => {
  it(`collections, datapoints and instances: ${KILLS} SIGKILLs, then the local export's shards byte for byte (datapoints row for row)`, { timeout: 300_000 }, async () => {
    const sim = await newSimulator({
      assets: 300, events: 3000, timeseries: 200, files: 600, sequences: 100, relationships: 900, datapoints: 15_000,
      instances: { assets: 600, activities: 100, timeseries: 0, edges: 0 },
      seed: 4343,
      apiKeys: [KEY],
      // A frozen clock: the two exports, minutes apart, read the same datapoints.
      clock: createFakeClock(),
    });
    const spec = (outDir: string): JobSpec => ({ baseUrl: sim.baseUrl, outDir, streams: STREAMS, formats: ['parquet', 'ndjson'], maxRows: 700 });
    const dir = tempDir('azure-kills');
    const url = `abfss://lake@${AZURITE_ACCOUNT}.dfs.core.windows.net/kills`;
    const file = join(dir, 'azure.yaml');
    const azure = `  azure:\n    endpoint: ${azurite.endpoint}\n    staging: ${join(dir, 'staging')}\n`;
    writeFileSync(file, jobYaml(spec(url)).replace(/^output:\n/m, `output:\n${azure}`));
    const env = { SIM_KEY: KEY, AZURE_STORAGE_KEY: AZURITE_KEY };

    const random = seededRandom(4343);
    const landed: string[] = [];
    let finished: Exit | undefined;
    for (let runs = 0; landed.length < KILLS; runs++) {
      expect(runs, `${landed.length} kills in ${runs} runs: the runs end before the kills land`).toBeLessThan(KILLS * 3);
      let exit: Exit;
      if (random() < 0.75) {
        const at = `${FAILPOINTS[Math.floor(random() * FAILPOINTS.length)] ?? 'after-append'}:${1 + Math.floor(random() * 8)}`;
        exit = await runCliWith(['run', '--config', file, '--log-level', 'warn'], { cwd: dir, env: { ...env, BULK_EXTRACT_CRASH_AT: at } });
        if (exit.signal === 'SIGKILL') landed.push(at);
      } else {
        const line = 1 + Math.floor(random() * 40);
        const cli = spawnCli(['run', '--config', file, '--log-level', 'debug'], { cwd: dir, env });
        cli.onStderrLine((_, index) => {
          if (index === line) cli.child.kill('SIGKILL');
        });
        exit = await cli.done;
        if (exit.signal === 'SIGKILL') landed.push(`line ${line}`);
      }
      if (exit.signal !== 'SIGKILL') {
        // The export completed before this kill could land: the remaining kills go to a new export of it.
        expect(exit.code, describeExit(exit)).toBe(0);
        finished = exit;
        const again = await runCliWith(['run', '--config', file, '--fresh', '--log-level', 'warn'], { cwd: dir, env: { ...env, BULK_EXTRACT_CRASH_AT: 'after-append:1' } });
        expect(again.signal, describeExit(again)).toBe('SIGKILL');
      }
    }
    const last = await runCliWith(['run', '--config', file, '--log-level', 'warn'], { cwd: dir, env });
    expect(last.code, `after the kills ${JSON.stringify(landed)}: ${describeExit(last)}`).toBe(0);
    expect(last.stderr + (finished?.stderr ?? '')).not.toContain(AZURITE_KEY);
    const verify = await runCliWith(['verify', '--config', file], { cwd: dir, env });
    expect(verify.code, describeExit(verify)).toBe(0);

    const localDir = tempDir('azure-kills-local');
    const local = join(localDir, 'out');
    writeFileSync(join(localDir, 'job.yaml'), jobYaml(spec(local)));
    const reference = await runCliWith(['run', '--config', join(localDir, 'job.yaml'), '--log-level', 'warn'], { cwd: localDir, env });
    expect(reference.code, describeExit(reference)).toBe(0);

    const store = createAzureStore({ url, endpoint: azurite.endpoint, env: azurite.env, logger: silentLogger });
    try {
      const copy = await downloadAll(store, tempDir('azure-kills-copy'));
      const byKey = (path: string) => isShard(path) && !BY_ROWS.some((stream) => path.startsWith(stream));
      const inAzure = listFiles(copy).filter(byKey).sort();
      const inFolder = listFiles(local).filter(byKey).sort();
      expect(inAzure.length).toBeGreaterThan(20);
      expect(inAzure, `the same shards, key by key, after the kills ${JSON.stringify(landed)}`).toEqual(inFolder);
      for (const key of ['parquet', 'ndjson']) expect(inAzure.some((shard) => shard.endsWith(`.${key}`))).toBe(true);
      for (const stream of ['assets', 'events', 'timeseries', 'files', 'sequences', 'relationships', 'nodes']) {
        expect(inAzure.some((shard) => shard.startsWith(`${stream}/`)), stream).toBe(true);
      }
      const differ = inAzure.filter((shard) => sha256(join(copy, shard)) !== sha256(join(local, shard)));
      expect(differ, 'shards whose bytes differ from the local export').toEqual([]);
      for (const stream of BY_ROWS) {
        const lines = ndjsonLines(copy, stream);
        expect(lines.length, stream).toBeGreaterThan(500);
        expect(new Set(lines).size, `${stream}: every row once`).toBe(lines.length);
        expect(lines, `${stream}: the rows of the local export`).toEqual(ndjsonLines(local, stream));
        const duck = await openDuck();
        try {
          const [a, b] = [copy, local].map((root) => parquetAt(join(root, stream, '*', '*.parquet')));
          const count = async (query: string) => Number((await duck.one(`SELECT count(*) AS n FROM (${query})`)).n);
          expect(await count(`SELECT * FROM ${a}`), `${stream}: Parquet rows`).toBe(lines.length);
          expect(await count(`SELECT * FROM ${a} EXCEPT ALL SELECT * FROM ${b}`), `${stream}: Parquet rows not in the local export`).toBe(0);
          expect(await count(`SELECT * FROM ${b} EXCEPT ALL SELECT * FROM ${a}`), `${stream}: local Parquet rows missing`).toBe(0);
        } finally {
          duck.close();
        }
      }
      const manifest = (root: string) => {
        const parsed = JSON.parse(readFileSync(join(root, '_manifest.json'), 'utf8')) as { rows?: number };
        return parsed.rows;
      };
      expect(manifest(copy)).toBe(manifest(local));
    } finally {
      await store.close();
    }
  });
});
