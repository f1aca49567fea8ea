import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { WindowManifest } from '../../src/export/state/manifest.js';
import {
  closedForm,
  describeExit,
  listFiles,
  newSimulator,
  readCheckpoint,
  readManifest,
  runCliWith,
  tempDir,
  withDuckDb,
  writeJob,
} from '../support/resume-harness.js';

/**
 * mode: snapshot: each scheduled run after a sealed snapshot reads the whole
 * collection again into `<stream>/run=<id>/`, pinned at its start, resumable, sealed with its own
 * manifest and `_SUCCESS`; `_LATEST` names the newest sealed run; `keep` deletes older sealed
 * snapshots only once a newer one is sealed. Three runs through the real CLI, the third killed and
 * resumed; every sealed run is checked row for row with DuckDB.
 */
const KEY = 'snapshot-key-0001';
const ASSETS = 2400;

describe('mode: snapshot, three scheduled runs', () => {
  it('seals a full copy per run, moves _LATEST, keeps 2, resumes a killed run in its own folder', { timeout: 120_000 }, async () => {
    const sim = await newSimulator({ assets: ASSETS, events: 10, seed: 41, apiKeys: [KEY] });
    const dir = tempDir('snapshot');
    const out = join(dir, 'out');
    const file = writeJob(join(dir, 'job.yaml'), {
      baseUrl: sim.baseUrl,
      outDir: out,
      streams: [{ resource: 'assets', partitions: 2, limit: 500, mode: 'snapshot', keep: 2 }],
      formats: ['parquet', 'ndjson'],
      maxRows: 600,
    });
    const run = (env: Record<string, string> = {}) => runCliWith(['run', '--config', file], { cwd: dir, env: { SIM_KEY: KEY, ...env } });
    const runs = () => readdirSync(join(out, 'assets')).filter((name) => name.startsWith('run=')).sort();
    const latest = () => readFileSync(join(out, 'assets', '_LATEST'), 'utf8').trim();

    const first = await run();
    expect(first.code, describeExit(first)).toBe(0);
    const [run1] = runs();
    expect(runs()).toHaveLength(1);
    expect(latest()).toBe(run1);
    await expectSnapshot(out, run1 ?? '', new Map());

    // Updated between runs: the next snapshot holds their new versions.
    const updatedAt2 = Date.now();
    sim.update('assets', [0, 1, 2, 3, 4], updatedAt2);
    const second = await run();
    expect(second.code, describeExit(second)).toBe(0);
    const run2 = runs()[1];
    expect(runs()).toHaveLength(2);
    expect(latest()).toBe(run2);
    await expectSnapshot(out, run2 ?? '', new Map([0, 1, 2, 3, 4].map((i) => [i, updatedAt2])));

    // The third run is killed after its second shard: the first two snapshots stay, _LATEST too.
    const updatedAt3 = Date.now() + 1;
    sim.update('assets', [7], updatedAt3);
    const killed = await run({ BULK_EXTRACT_CRASH_AT: 'after-shard-rename:2' });
    expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
    const afterKill = runs();
    expect(afterKill).toHaveLength(3);
    const run3 = afterKill[2] ?? '';
    expect(existsSync(join(out, 'assets', run3, '_SUCCESS'))).toBe(false);
    expect(latest(), 'an unsealed snapshot never becomes _LATEST').toBe(run2);
    expect(afterKill.slice(0, 2), 'keep deletes nothing before the new snapshot is sealed').toEqual([run1, run2]);

    // Resumed in the same folder, sealed: now the oldest goes.
    const resumed = await run();
    expect(resumed.code, describeExit(resumed)).toBe(0);
    expect(resumed.stderr).toContain('"msg":"resuming export"');
    expect(runs()).toEqual([run2, run3]);
    expect(latest()).toBe(run3);
    const versions3 = new Map([0, 1, 2, 3, 4].map((i) => [i, updatedAt2])).set(7, updatedAt3);
    await expectSnapshot(out, run3, versions3);
    await expectSnapshot(out, run2 ?? '', new Map([0, 1, 2, 3, 4].map((i) => [i, updatedAt2])));

    // The root records the current run; verify checks every sealed run and _LATEST; status names it.
    expect(readManifest(out).streams.assets?.run).toBe(run3.slice('run='.length));
    expect(readCheckpoint(out).streams.assets?.mode).toBe('snapshot');
    const verify = await runCliWith(['verify', out]);
    expect(verify.code, describeExit(verify)).toBe(0);
    const status = await runCliWith(['status', '--out', out]);
    expect(status.stdout).toContain(`latest complete snapshot: ${run3} (2 kept)`);
  });
});

/**
 * One sealed snapshot: its `_SUCCESS` and manifest, which lists exactly its shards; in each format
 * every asset exactly once (count, distinct, sum of ids in closed form), and `updated` items (index
 * -> lastUpdatedTime) in their new version.
 */
async function expectSnapshot(out: string, run: string, updated: ReadonlyMap<number, number>): Promise<void> {
  const folder = join(out, 'assets', run);
  expect(existsSync(join(folder, '_SUCCESS')), `${run} sealed`).toBe(true);
  const manifest = JSON.parse(readFileSync(join(folder, '_manifest.json'), 'utf8')) as WindowManifest;
  expect(manifest.rows).toBe(ASSETS);
  const shards = listFiles(folder).filter((path) => path.startsWith('part='));
  expect(manifest.files.map((f) => f.path).sort()).toEqual(shards.map((path) => `assets/${run}/${path}`).sort());
  const ids = closedForm('assets', ASSETS);
  await withDuckDb(async (query) => {
    for (const format of ['parquet', 'ndjson'] as const) {
      const glob = join(folder, '*', format === 'parquet' ? '*.parquet' : '*.ndjson');
      const source =
        format === 'parquet' ? `read_parquet('${glob}')` : `read_json('${glob}', format = 'newline_delimited', columns = {id: 'BIGINT', lastUpdatedTime: 'BIGINT'})`;
      const got = await query(`SELECT count(*) AS n, count(DISTINCT id) AS d, sum(id) AS s FROM ${source}`);
      expect({ n: got.n, d: got.d, s: got.s }, `${run} as ${format}`).toEqual({ n: BigInt(ASSETS), d: BigInt(ASSETS), s: ids.sum });
      for (const [index, at] of updated) {
        const id = ids.min + BigInt(index) * ((ids.max - ids.min) / BigInt(ASSETS - 1));
        const time = format === 'parquet' ? 'epoch_ms(lastUpdatedTime)' : 'lastUpdatedTime';
        const row = await query(`SELECT ${time} AS t FROM ${source} WHERE id = ${id}`);
        expect(Number(row.t), `${run}: asset ${index} in its version of ${at}`).toBe(at);
      }
    }
  });
}
