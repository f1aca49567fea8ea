import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJob } from '../../src/export/run/run-job.js';
import { verifyOutput } from '../../src/export/inspect/verify.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { openDuck, type Duck, ndjsonAt, parquetAt } from '../support/export-duckdb.js';
import { loadJob, removeTempDirs, SIM_KEY, tempDir } from '../support/export-harness.js';
import { liveKeys } from '../support/instances.js';
import { describeExit, jobYaml, runCliWith } from '../support/resume-harness.js';
import { writeFileSync } from 'node:fs';

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

/** A column as the checkpoint keeps it (instanceColumns' output). */
interface Column {
  name: string;
  kind: string;
  list: boolean;
  from: { field: string } | { property: string } | { extra: true };
}

/** DuckDB's reading of a column, as text or a number that compares exactly with the instance's value. */
function selectOf(column: Column): string {
  const name = `"${column.name}"`;
  if (column.list || column.kind === 'node-ref') return `to_json(${name})::VARCHAR AS ${name}`;
  if (column.kind === 'timestamp') return `epoch_ms(${name}) AS ${name}`;
  if (column.kind === 'date' || column.kind === 'int64') return `${name}::VARCHAR AS ${name}`;
  return name;
}

/** The instance's value as selectOf reads its column. */
function expectedOf(column: Column, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (column.list || column.kind === 'node-ref') return JSON.stringify(value);
  if (column.kind === 'timestamp') return typeof value === 'number' ? value : Date.parse(value as string);
  if (column.kind === 'int64') return typeof value === 'number' ? String(value) : value;
  if (column.kind === 'float') return Math.fround(value as number);
  return value;
}

describe('instances: edges, a filter, a split by a property', () => {
  it('exports the edges of an edge view once, with their start and end nodes', async () => {
    const view = { space: 'sim_model', externalId: 'ActivityLink', version: 'v1' };
    const { out, result } = await exportAssets({ name: 'links', view, instanceType: 'edge' });
    expect(result.state).toBe('complete');
    const expected = liveKeys(sim, 'edge').sort();
    expect(expected.length).toBe(100);
    expect(await keysIn(`${out}/links/**/*.parquet`, parquetAt)).toEqual(expected);
    const ends = await duck.one(
      `SELECT count(*)::INTEGER AS n, count(startNode)::INTEGER AS starts, count(endNode)::INTEGER AS ends
       FROM ${parquetAt(`${out}/links/**/*.parquet`)} WHERE instanceType = 'edge'`,
    );
    expect(ends).toEqual({ n: 100, starts: 100, ends: 100 });
  });

  it('exports only what the filter keeps', async () => {
    const filter = { in: { property: ['node', 'space'], values: ['sim_site_a', 'sim_site_c'] } };
    const { out } = await exportAssets({ filter });
    const expected = liveKeys(sim, 'asset', (instance) => instance.space !== 'sim_site_b').sort();
    expect(expected.length).toBeGreaterThan(100);
    expect(await keysIn(`${out}/assets/**/*.parquet`, parquetAt)).toEqual(expected);
  });

  it('a split by externalId reads every node once across its queries', async () => {
    const ids = liveKeys(sim, 'asset').map((key) => key.split(':')[1]!).sort();
    const at = [ids[300]!, ids[600]!];
    const { out } = await exportAssets({ split: { property: 'externalId', at } });
    expect(readdirSync(join(out, 'assets'))).toEqual(['part=1-of-3', 'part=2-of-3', 'part=3-of-3']);
    expect(await keysIn(`${out}/assets/**/*.ndjson`, ndjsonAt)).toEqual(liveKeys(sim, 'asset').sort());
  });
});

describe('instances: every typed column value for value', () => {
  it('DuckDB reads each column of the view as the instance holds it (NDJSON, as received)', async () => {
    const { out } = await exportAssets({});
    const checkpoint = JSON.parse(readFileSync(join(out, '_checkpoint.json'), 'utf8')) as {
      streams: { assets: { instances: { columns: Column[] } } };
    };
    const columns = checkpoint.streams.assets.instances.columns;
    expect(columns.map((c) => c.kind)).toEqual(expect.arrayContaining(['date', 'timestamp', 'node-ref', 'int32', 'boolean']));
    const lines = readdirSync(join(out, 'assets/part=1-of-1'))
      .filter((file) => file.endsWith('.ndjson'))
      .flatMap((file) => readFileSync(join(out, 'assets/part=1-of-1', file), 'utf8').trim().split('\n'));
    const items = new Map(
      lines.map((line) => {
        const item = JSON.parse(line) as Record<string, unknown> & { space: string; externalId: string };
        return [`${item.space}:${item.externalId}`, item];
      }),
    );
    const rows = await duck.rows(`SELECT ${columns.map(selectOf).join(', ')} FROM ${parquetAt(`${out}/assets/**/*.parquet`)}`);
    expect(rows).toHaveLength(items.size);
    let compared = 0;
    for (const row of rows) {
      const item = items.get(`${String(row.space)}:${String(row.externalId)}`)!;
      const properties = (item.properties as Record<string, Record<string, Record<string, unknown>>>)['cdf_cdm']!['CogniteAsset/v1']!;
      for (const column of columns) {
        if ('extra' in column.from) {
          expect(row[column.name], `${column.name} of ${String(row.externalId)}`).toBeNull();
          continue;
        }
        const value = 'field' in column.from ? item[column.from.field] : properties[column.from.property];
        const got = column.kind === 'json' && row[column.name] !== null ? JSON.parse(String(row[column.name])) : row[column.name];
        const want = column.kind === 'json' ? (value ?? null) : expectedOf(column, value);
        expect(typeof got === 'bigint' ? Number(got) : got, `${column.name} of ${String(row.externalId)}`).toEqual(want);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(900 * 20);
  });
});

describe('instances: killed, then resumed', () => {
  it('a SIGKILL after a shard commit, then a rerun: every node once, shards verified', async () => {
    const dir = tempDir('instances-kill-');
    const out = join(dir, 'out');
    const job = join(dir, 'job.yaml');
    const stream = { resource: 'instances', name: 'assets', view: ASSET_VIEW, limit: 100, split: 'space', spaces: ['sim_site_a', 'sim_site_b', 'sim_site_c'] };
    // The harness's job file, with an instances stream in place of a collection's.
    writeFileSync(job, jobYaml({ baseUrl: sim.baseUrl, outDir: out, streams: [stream as never], maxRows: 120 }));
    const env = { SIM_KEY };
    const killed = await runCliWith(['run', '--config', job, '--log-level', 'warn'], { env: { ...env, BULK_EXTRACT_CRASH_AT: 'after-shard-rename:3' } });
    expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
    const rerun = await runCliWith(['run', '--config', job, '--log-level', 'warn', '--verify'], { env });
    expect(rerun.code, describeExit(rerun)).toBe(0);
    expect(rerun.stdout + rerun.stderr).toMatch(/every key is unique|keys checked/);
    expect(await keysIn(`${out}/assets/**/*.parquet`, parquetAt)).toEqual(liveKeys(sim, 'asset').sort());
    expect(await keysIn(`${out}/assets/**/*.ndjson`, ndjsonAt)).toEqual(liveKeys(sim, 'asset').sort());
  }, 120_000);
});
