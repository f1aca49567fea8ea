import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { ConfigError } from '../../src/errors.js';
import { runJob } from '../../src/export/run/run-job.js';
import { silentLogger } from '../../src/log.js';
import type { Simulator } from '../../src/simulator/index.js';
import { openDuck, parquetAt } from '../support/export-duckdb.js';
import { loadJob } from '../support/export-harness.js';
import { createFakeClock } from '../support/fake-clock.js';
import { type Job, listFiles, newJob, newSimulator, type StreamSpec, tempDir } from '../support/resume-harness.js';

/**
 * `metadataColumns`: chosen metadata keys also as STRING columns `metadata_<key>` of the Parquet
 * files, the map kept whole, NDJSON unchanged; refused where it cannot work, and a resume that
 * changes them is drift.
 */
const KEY = 'metadata-columns-key-1';
let sim: Simulator;

beforeAll(async () => {
  sim = await newSimulator({ assets: 50, events: 1500, seed: 3, apiKeys: [KEY] });
});

function jobOf(stream: StreamSpec, prefix: string): Job {
  return newJob(sim, [stream], { formats: ['parquet', 'ndjson'], maxRows: 400 }, prefix);
}

async function run(target: Job) {
  return runJob({ config: loadConfig(target.file, { SIM_KEY: KEY }), logger: silentLogger, clock: createFakeClock() });
}

/** The metadata keys the events carry most often. */
function commonKeys(count: number): string[] {
  const seen = new Map<string, number>();
  for (let i = 0; i < sim.dataset.events.count; i++) {
    for (const key of Object.keys(sim.dataset.events.item(i).metadata ?? {})) seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  return [...seen.entries()].sort((a, b) => b[1] - a[1]).slice(0, count).map(([key]) => key);
}

describe('metadataColumns', () => {
  it('writes metadata_<key> equal to metadata[key] for every row, keeps the map, and leaves NDJSON byte for byte', async () => {
    const keys = [...commonKeys(3), 'no such key'];
    const withColumns = jobOf({ resource: 'events', partitions: 3, limit: 200, metadataColumns: keys }, 'mc-with');
    const without = jobOf({ resource: 'events', partitions: 3, limit: 200 }, 'mc-without');
    const result = await run(withColumns);
    expect(result.errors).toEqual([]);
    expect((await run(without)).errors).toEqual([]);
    expect(result.manifest.streams.events?.metadataColumns).toEqual(keys);

    const duck = await openDuck();
    try {
      const glob = `${withColumns.out}/events/*/*.parquet`;
      const columns = await duck.rows(`DESCRIBE SELECT * FROM ${parquetAt(glob)}`);
      const names = columns.map((row) => String(row.column_name));
      const added = keys.map((key) => `metadata_${key.replace(/[^\p{L}\p{N}_]/gu, '_')}`);
      expect(names.slice(-keys.length - 1)).toEqual([...added, 'extra']);
      expect(names).toContain('metadata');
      for (const [k, key] of keys.entries()) {
        const column = added[k]!;
        const row = await duck.one(
          `SELECT count(*) AS n, count(*) FILTER (WHERE "${column}" IS NOT DISTINCT FROM metadata['${key.replaceAll("'", "''")}']) AS same, count("${column}") AS set FROM ${parquetAt(glob)}`,
        );
        expect(Number(row.same), column).toBe(sim.dataset.events.count);
        if (key !== 'no such key') expect(Number(row.set), column).toBeGreaterThan(0);
        else expect(Number(row.set)).toBe(0);
      }
    } finally {
      duck.close();
    }
    const ndjson = (target: Job) =>
      listFiles(target.out)
        .filter((file) => file.endsWith('.ndjson'))
        .sort()
        .map((file) => readFileSync(join(target.out, file), 'utf8'))
        .join('');
    expect(ndjson(withColumns)).toBe(ndjson(without));
  });

  it('a resume with other metadataColumns is refused as drift, naming them', async () => {
    const first = jobOf({ resource: 'events', partitions: 2, limit: 100, metadataColumns: ['a'] }, 'mc-drift');
    expect((await run(first)).errors).toEqual([]);
    const changed = newJob(sim, [{ resource: 'events', partitions: 2, limit: 100, metadataColumns: ['b'] }], { formats: ['parquet', 'ndjson'], maxRows: 400, outDir: first.out }, 'mc-drift-2');
    await expect(run(changed)).rejects.toThrow(/metadataColumns \[a\] in the checkpoint, \[b\] in the config/);
  });

  it('a checkpoint from before names were recorded resumes when its columns keep their names, and is refused as drift when they would change', async () => {
    const withoutNames = (target: Job) => {
      const file = join(target.out, '_checkpoint.json');
      const checkpoint = JSON.parse(readFileSync(file, 'utf8')) as { streams: Record<string, Record<string, unknown>> };
      expect(checkpoint.streams.events?.metadataColumnNames).toBeDefined();
      delete checkpoint.streams.events?.metadataColumnNames;
      // Such a version (5 or earlier) wrote no digest.
      writeFileSync(file, JSON.stringify({ ...checkpoint, version: 5, digest: undefined }));
    };
    const ascii = jobOf({ resource: 'events', partitions: 2, limit: 100, metadataColumns: ['site_1', 'a b'] }, 'mc-names-ascii');
    expect((await run(ascii)).errors).toEqual([]);
    withoutNames(ascii);
    expect((await run(ascii)).errors).toEqual([]);

    const unicode = jobOf({ resource: 'events', partitions: 2, limit: 100, metadataColumns: ['site', 'ключ'] }, 'mc-names-unicode');
    expect((await run(unicode)).errors).toEqual([]);
    withoutNames(unicode);
    const refused = 'metadataColumns [site, ключ] are the Parquet columns [metadata_site, metadata_____] in the shards written so far, and would be [metadata_site, metadata_ключ] now';
    await expect(run(unicode)).rejects.toThrow(refused);
  });

  it.each([
    [{ resource: 'events', metadataColumns: ['Site', 'site'] }, /'site' and 'Site' become the columns metadata_site and metadata_Site, which readers such as DuckDB and Spark take for one/],
    [{ resource: 'events', metadataColumns: ['Ключ', 'ключ'] }, /'ключ' and 'Ключ' become the columns metadata_ключ and metadata_Ключ/],
    [{ resource: 'events', metadataColumns: ['e\u0301', '\u00e9'] }, /'\u00e9' and 'e\u0301' both become the column metadata_\u00e9/],
    [{ resource: 'relationships', metadataColumns: ['site'] }, /relationships have no metadata to take columns from/],
    [{ resource: 'events', metadataColumns: ['a-b', 'a b'] }, /'a b' and 'a-b' both become the column metadata_a_b/],
    [{ resource: 'events', metadataColumns: ['🔥x', '°x'] }, /'°x' and '🔥x' both become the column metadata__x/],
    [{ resource: 'events', metadataColumns: [] }, /give at least one key/],
    [{ resource: 'events', metadataColumns: [''] }, /a metadata key must not be empty/],
  ])('refuses %j when the job file is read, naming the key', (stream, message) => {
    const dir = tempDir('mc-refused');
    const load = () => loadJob(dir, { baseUrl: sim.baseUrl, out: join(dir, 'out'), streams: [stream] });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(message);
    expect(load).toThrow(/streams\.0\.metadataColumns(\.0)?: /);
  });
});
