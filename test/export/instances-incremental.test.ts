import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runJob } from '../../src/export/run/run-job.js';
import { verifyOutput } from '../../src/export/inspect/verify.js';
import { silentLogger } from '../../src/log.js';
import { createLocalStore, readDeltaLog } from '../../src/output/index.js';
import { type InstanceKind, type InstanceRef, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { fencedBlocks } from '../docs/fenced-blocks.js';
import { openDuck, type Duck, parquetAt } from '../support/export-duckdb.js';
import { loadJob, removeTempDirs, SIM_KEY, tempDir } from '../support/export-harness.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';
import { keyOf, liveKeys } from '../support/instances.js';
import { describeExit, jobYaml, runCliWith } from '../support/resume-harness.js';

/**
 * `mode: incremental` for instances, end to end against the simulator's sync feed: a backfill,
 * then changes made in the simulator, then a run that exports exactly those changes with deletes
 * marked; the rule docs/instances.md gives for applying the runs, run by DuckDB, gives the view as
 * the simulator holds it; an expired cursor is refused with its choices; a killed change run resumes.
 */
const ASSET_VIEW = { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };
const LINK_VIEW = { space: 'sim_model', externalId: 'ActivityLink', version: 'v1' };
const SPACES = ['sim_site_a', 'sim_site_b', 'sim_site_c'];
const DAY = 86_400_000;

let duck: Duck;
const open: Simulator[] = [];

beforeAll(async () => {
  duck = await openDuck();
});
afterAll(() => duck.close());
afterEach(async () => {
  await Promise.all(open.splice(0).map((sim) => sim.close()));
  removeTempDirs();
});

/** A simulator on its own clock, which the test moves (changes get their times from it; cursors expire by it). */
async function simulator(): Promise<{ sim: Simulator; clock: FakeClock }> {
  const clock = createFakeClock();
  const sim = await startSimulator({
    seed: 31,
    apiKeys: [SIM_KEY],
    clock,
    instances: { assets: 600, activities: 100, timeseries: 50, edges: 200 },
  });
  open.push(sim);
  return { sim, clock };
}

const STREAMS = [
  { resource: 'instances', name: 'assets', view: ASSET_VIEW, spaces: SPACES, split: 'space', mode: 'incremental', limit: 100 },
  { resource: 'instances', name: 'links', view: LINK_VIEW, instanceType: 'edge', mode: 'incremental', limit: 150 },
];

/** Runs the job in process, each run a minute after the one before (its run folder is named by its start). */
function runner(sim: Simulator, streams: readonly Record<string, unknown>[] = STREAMS, table: 'files' | 'delta' = 'files') {
  const dir = tempDir('instances-incremental-');
  const out = join(dir, 'out');
  const clock = createFakeClock(Date.UTC(2026, 5, 1));
  const formats = table === 'delta' ? ['parquet'] : ['parquet', 'ndjson'];
  const config = loadJob(dir, { baseUrl: sim.baseUrl, out, streams: [...streams], output: { formats, table } });
  return {
    out,
    dir,
    run: async () => {
      clock.advance(60_000);
      return runJob({ config, logger: silentLogger, clock });
    },
  };
}

/** The run folders of a stream, oldest first. */
function runsOf(out: string, stream: string): string[] {
  return readdirSync(join(out, stream)).filter((name) => name.startsWith('run=')).sort();
}

interface Row {
  k: string;
  version: number;
  deleted: boolean;
}

/** The rows of Parquet shards: key, version, deleted. */
async function rowsIn(glob: string): Promise<Row[]> {
  return rowsOf(`SELECT space || ':' || externalId AS k, version, deletedTime IS NOT NULL AS deleted FROM ${parquetAt(glob)}`);
}

/** The rows of NDJSON shards, each line as the platform sent it (only a deleted instance has `deletedTime`). */
async function linesIn(glob: string): Promise<Row[]> {
  return rowsOf(
    `SELECT (json->>'space') || ':' || (json->>'externalId') AS k, json->>'version' AS version, (json->'deletedTime') IS NOT NULL AS deleted
     FROM read_ndjson_objects('${glob}')`,
  );
}

async function rowsOf(select: string): Promise<Row[]> {
  const rows = await duck.rows(`SELECT k, version::INTEGER AS version, deleted FROM (${select}) ORDER BY k, version`);
  return rows.map((row) => ({ k: String(row.k), version: Number(row.version), deleted: row.deleted === true }));
}

/** What the simulator holds now for these keys: each key's version, and whether it is deleted. */
function simRows(sim: Simulator, kind: InstanceKind, keys: Iterable<string>): Row[] {
  const wanted = new Set(keys);
  const rows: Row[] = [];
  for (let index = 0; index < sim.instances.count(kind); index++) {
    const instance = sim.instances.instance(kind, index);
    const k = keyOf(instance);
    if (wanted.has(k)) rows.push({ k, version: instance.version, deleted: sim.instances.isDeleted(kind, index) });
  }
  return rows.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : a.version - b.version));
}

/** The key of every asset the simulator holds, deleted ones included. */
function allAssetKeys(sim: Simulator): string[] {
  return Array.from({ length: sim.instances.count('asset') }, (_, index) => keyOf(sim.instances.instance('asset', index)));
}

function refOf(sim: Simulator, kind: InstanceKind, index: number): InstanceRef {
  const { space, externalId } = sim.instances.instance(kind, index);
  return { instanceType: kind === 'edge' ? 'edge' : 'node', space, externalId };
}

/** docs/instances.md's query that applies a stream's runs: the latest row of each key, deletes dropped. */
function appliedQuery(out: string, stream: string): string {
  const blocks = fencedBlocks(readFileSync(join(import.meta.dirname, '../../docs/instances.md'), 'utf8'), 'docs/instances.md');
  const sql = blocks.find((block) => block.lang === 'sql' && block.text.includes('file_row_number'));
  if (sql === undefined) throw new Error('docs/instances.md has no sql block that applies the runs');
  return sql.text.replaceAll("'out/assets/", `'${out}/${stream}/`).replace(/;\s*$/, '');
}

describe('instances, mode: incremental', () => {
  it('backfills, then exports exactly the changes made since, deletes marked; the runs applied give the view', async () => {
    const { sim, clock } = await simulator();
    const job = runner(sim);
    expect((await job.run()).state).toBe('complete');
    const [backfill] = runsOf(job.out, 'assets');
    const firstRows = await rowsIn(`${job.out}/assets/${backfill}/*/*.parquet`);
    expect(firstRows.map((row) => row.k)).toEqual(liveKeys(sim, 'asset').sort());
    expect(firstRows.every((row) => !row.deleted)).toBe(true);
    expect((await rowsIn(`${job.out}/links/${runsOf(job.out, 'links')[0]}/*/*.parquet`)).length).toBe(200);
    const sealed = JSON.parse(readFileSync(join(job.out, 'assets', backfill!, '_manifest.json'), 'utf8')) as { sync?: string };
    expect(sealed.sync).toBe('backfill');

    clock.advance(5_000);
    const updated = [3, 40, 41, 333, 599].map((i) => refOf(sim, 'asset', i));
    sim.updateInstances(updated);
    const inserted = sim.insertInstances('asset', 4);
    const deleted = [7, 250].map((i) => refOf(sim, 'asset', i));
    sim.deleteInstances(deleted);
    sim.updateInstances([updated[0]!]);
    sim.updateInstances([refOf(sim, 'activity', 5)]);
    const deletedLink = refOf(sim, 'edge', 11);
    sim.deleteInstances([deletedLink]);

    const second = await job.run();
    expect(second.state).toBe('complete');
    const changeRun = runsOf(job.out, 'assets')[1]!;
    const changedKeys = [...updated, ...inserted, ...deleted].map(keyOf);
    const expected = simRows(sim, 'asset', changedKeys);
    expect(expected).toHaveLength(11);
    expect(expected.filter((row) => row.deleted)).toHaveLength(2);
    expect(await rowsIn(`${job.out}/assets/${changeRun}/*/*.parquet`)).toEqual(expected);
    expect(await linesIn(`${job.out}/assets/${changeRun}/*/*.ndjson`)).toEqual(expected);
    const linkRows = await rowsIn(`${job.out}/links/${runsOf(job.out, 'links')[1]}/*/*.parquet`);
    expect(linkRows).toEqual(simRows(sim, 'edge', [keyOf(deletedLink)]));
    expect(linkRows[0]?.deleted).toBe(true);
    const changes = JSON.parse(readFileSync(join(job.out, 'assets', changeRun, '_manifest.json'), 'utf8')) as { sync?: string; rows: number };
    expect(changes).toMatchObject({ sync: 'changes', rows: 11 });

    // The docs' rule over every run: the view exactly as the simulator holds it now.
    const applied = await duck.rows(`SELECT space || ':' || externalId AS k, version::INTEGER AS version FROM (${appliedQuery(job.out, 'assets')}) ORDER BY k`);
    const live = liveKeys(sim, 'asset');
    expect(applied.map((row) => String(row.k))).toEqual([...live].sort());
    expect(applied.map((row) => Number(row.version))).toEqual(simRows(sim, 'asset', live).map((row) => row.version));

    // Nothing changed since: the next run reads the feed, finds it caught up, and writes nothing.
    const third = await job.run();
    expect(third.state).toBe('complete');
    expect(runsOf(job.out, 'assets')).toHaveLength(3);
    const idle = JSON.parse(readFileSync(join(job.out, 'assets', runsOf(job.out, 'assets')[2]!, '_manifest.json'), 'utf8')) as { rows: number };
    expect(idle.rows).toBe(0);
    const verified = await verifyOutput(job.out, { keys: true });
    expect(verified.problems).toEqual([]);
    // Every row is of a change feed (both streams are incremental): each has its key, none is held to be unique.
    expect(verified).toMatchObject({ keysChecked: 0, changeRows: 600 + 11 + 200 + 1 });
  });

  it('with churn going on, a run ends once the feed gives a short page; the next one reads what changed after it, both exact', async () => {
    // The simulator's clock moves TICK_MS each time it is read while `ticking`, so every request
    // brings changes (its churn), as many on a slow machine as on a fast one; far fewer than a page.
    const TICK_MS = 2;
    let now = Date.UTC(2026, 5, 1);
    let ticking = true;
    const clock = {
      now: () => (ticking ? (now += TICK_MS) : now),
      sleep: (ms: number) => {
        now += ms;
        return Promise.resolve();
      },
    };
    const sim = await startSimulator({
      seed: 47,
      apiKeys: [SIM_KEY],
      clock,
      churn: 3000,
      instances: { assets: 1500, activities: 0, timeseries: 0, edges: 0 },
    });
    open.push(sim);
    const job = runner(sim, [{ resource: 'instances', name: 'assets', view: ASSET_VIEW, mode: 'incremental', limit: 100 }]);
    /** Each asset's version and whether it is deleted, as the simulator holds it now. */
    const state = () => new Map(simRows(sim, 'asset', allAssetKeys(sim)).map((row) => [row.k, row]));
    const applied = async () =>
      (await duck.rows(`SELECT space || ':' || externalId AS k, version::INTEGER AS version FROM (${appliedQuery(job.out, 'assets')}) ORDER BY k`))
        .map((row) => [String(row.k), Number(row.version)]);
    const live = () => simRows(sim, 'asset', liveKeys(sim, 'asset')).map((row) => [row.k, row.version]);

    expect((await job.run()).state).toBe('complete');
    ticking = false;
    const afterFirst = state();
    const firstChanges = sim.instances.log.lastSeq;
    // The churn went on while the backfill read: its changes came after it, and the run still ended.
    expect(firstChanges).toBeGreaterThan(150);
    expect(sim.instances.count('asset')).toBeGreaterThan(1500);
    const [backfill] = runsOf(job.out, 'assets');
    const firstRows = await rowsIn(`${job.out}/assets/${backfill}/*/*.parquet`);
    expect(firstRows.length).toBeGreaterThan(1500);
    expect(await applied()).toEqual(live());

    // More churn between the runs, and during the second.
    ticking = true;
    now += 2_000;
    expect((await job.run()).state).toBe('complete');
    ticking = false;
    expect(sim.instances.log.lastSeq).toBeGreaterThan(firstChanges + 1000);
    const changed = [...state().values()].filter((row) => {
      const before = afterFirst.get(row.k);
      return before === undefined || before.version !== row.version || before.deleted !== row.deleted;
    });
    expect(changed.length).toBeGreaterThan(100);
    const changeRun = runsOf(job.out, 'assets')[1]!;
    const secondRows = await rowsIn(`${job.out}/assets/${changeRun}/*/*.parquet`);
    // Exactly the instances changed after the first run: each key of them, none other, its last row as it is now.
    expect([...new Set(secondRows.map((row) => row.k))].sort()).toEqual(changed.map((row) => row.k).sort());
    const lastOf = new Map(secondRows.map((row) => [row.k, row]));
    expect(changed.filter((row) => {
      const last = lastOf.get(row.k);
      return last?.version !== row.version || last.deleted !== row.deleted;
    })).toEqual([]);
    expect(await linesIn(`${job.out}/assets/${changeRun}/*/*.ndjson`)).toEqual(secondRows);
    expect(await applied()).toEqual(live());
  });

  it('as a Delta table: the backfill is version 0, the changes an append; the docs\' rule over its files gives the view', async () => {
    const { sim, clock } = await simulator();
    const job = runner(sim, STREAMS.slice(0, 1), 'delta');
    expect((await job.run()).state).toBe('complete');
    clock.advance(5_000);
    sim.updateInstances([3, 40, 333].map((i) => refOf(sim, 'asset', i)));
    sim.insertInstances('asset', 2);
    sim.deleteInstances([7, 250].map((i) => refOf(sim, 'asset', i)));
    expect((await job.run()).state).toBe('complete');
    const table = await readDeltaLog(createLocalStore(job.out, silentLogger), 'assets');
    expect(table.version).toBe(1);
    const runFiles = runsOf(job.out, 'assets').flatMap((run) =>
      readdirSync(join(job.out, 'assets', run), { recursive: true, encoding: 'utf8' })
        .filter((name) => name.endsWith('.parquet'))
        .map((name) => `assets/${run}/${name.split('\\').join('/')}`),
    );
    expect(table.files.map((file) => file.key).sort()).toEqual(runFiles.sort());
    const files = `[${table.files.map((file) => `'${join(job.out, file.key)}'`).join(', ')}]`;
    const applied = appliedQuery(job.out, 'assets').replace(`'${job.out}/assets/run=*/part=*/*.parquet'`, files);
    expect(applied).toContain(files);
    const rows = await duck.rows(`SELECT space || ':' || externalId AS k FROM (${applied}) ORDER BY k`);
    expect(rows.map((row) => String(row.k))).toEqual([...liveKeys(sim, 'asset')].sort());
    expect((await verifyOutput(job.out)).problems).toEqual([]);
  });

  it('refuses a cursor the platform has expired, with the two ways on; each of them works', async () => {
    const { sim, clock } = await simulator();
    const dir = tempDir('instances-expired-');
    const out = join(dir, 'out');
    const jobFile = join(dir, 'job.yaml');
    const write = (extra: Record<string, unknown>): void => {
      const streams = [{ ...STREAMS[0], ...extra } as never];
      writeFileSync(jobFile, jobYaml({ baseUrl: sim.baseUrl, outDir: out, streams }));
    };
    write({});
    const env = { SIM_KEY };
    const first = await runCliWith(['run', '--config', jobFile, '--log-level', 'warn'], { env });
    expect(first.code, describeExit(first)).toBe(0);
    const status = await runCliWith(['status', '--config', jobFile], { env });
    const backfill = 'assets: incremental, run=\\d{8}T[\\d.]+Z, the sync feed from its start \\(every instance of the view, then the changes made meanwhile\\)';
    expect(status.stdout).toMatch(new RegExp(backfill));

    clock.advance(3 * DAY + 3_600_000);
    const deleted = refOf(sim, 'asset', 12);
    sim.deleteInstances([deleted]);
    const refused = await runCliWith(['run', '--config', jobFile, '--log-level', 'warn'], { env });
    expect(refused.code, describeExit(refused)).toBe(2);
    expect(refused.stderr).toMatch(/streams \(assets\), query \d\/3: the platform refused the sync cursor this stream/);
    expect(refused.stderr).toMatch(/Cursor has expired/);
    expect(refused.stderr).toContain('run with --fresh --stream assets');
    expect(refused.stderr).toContain('set allowExpiredCursorsAndAcceptMissedDeletes: true on stream assets');
    expect(refused.stderr).toContain('E_SYNC_CURSOR');

    // Accepting missed deletes: the feed goes on from the expired cursors (the delete is recent, so it is read).
    write({ allowExpiredCursorsAndAcceptMissedDeletes: true });
    const accepted = await runCliWith(['run', '--config', jobFile, '--log-level', 'warn'], { env });
    expect(accepted.code, describeExit(accepted)).toBe(0);
    const runs = runsOf(out, 'assets');
    expect(await rowsIn(`${out}/assets/${runs[runs.length - 1]}/*/*.parquet`)).toEqual(simRows(sim, 'asset', [keyOf(deleted)]));

    // A new backfill instead: --fresh starts the stream over from the feed's start.
    clock.advance(4 * DAY);
    write({});
    const again = await runCliWith(['run', '--config', jobFile, '--log-level', 'warn'], { env });
    expect(again.code, describeExit(again)).toBe(2);
    const fresh = await runCliWith(['run', '--config', jobFile, '--log-level', 'warn', '--fresh', '--stream', 'assets'], { env });
    expect(fresh.code, describeExit(fresh)).toBe(0);
    const [only, ...others] = runsOf(out, 'assets');
    expect(others).toEqual([]);
    expect((await rowsIn(`${out}/assets/${only}/*/*.parquet`)).map((row) => row.k)).toEqual(liveKeys(sim, 'asset').sort());
  }, 120_000);

  it('a change run killed after a shard commit resumes from its committed cursors; a change made meanwhile is one more row', async () => {
    const { sim, clock } = await simulator();
    const dir = tempDir('instances-incremental-kill-');
    const out = join(dir, 'out');
    const jobFile = join(dir, 'job.yaml');
    const stream = { resource: 'instances', name: 'assets', view: ASSET_VIEW, mode: 'incremental', limit: 40 };
    writeFileSync(jobFile, jobYaml({ baseUrl: sim.baseUrl, outDir: out, streams: [stream as never], maxRows: 40 }));
    const env = { SIM_KEY };
    const first = await runCliWith(['run', '--config', jobFile, '--log-level', 'warn'], { env });
    expect(first.code, describeExit(first)).toBe(0);

    clock.advance(1_000);
    const updated = Array.from({ length: 300 }, (_, i) => refOf(sim, 'asset', i * 2));
    sim.updateInstances(updated);
    // One query, one page of 40 per shard: killed as the third shard is renamed, two are committed.
    const killed = await runCliWith(['run', '--config', jobFile, '--log-level', 'warn'], {
      env: { ...env, BULK_EXTRACT_CRASH_AT: 'after-shard-rename:3' },
    });
    expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
    // Changed again before the rerun: 50 of the 80 committed; the feed shows them once more, later.
    clock.advance(1_000);
    const again = updated.slice(0, 50);
    sim.updateInstances(again);
    const rerun = await runCliWith(['run', '--config', jobFile, '--log-level', 'warn', '--verify'], { env });
    expect(rerun.code, describeExit(rerun)).toBe(0);
    const feed = '950 rows of change-feed runs (incremental instances, subscriptions) have their key';
    expect(rerun.stderr).toContain(`verified: every shard matches the manifest; ${feed}`);
    const verified = await runCliWith(['verify', out], { env });
    const verdict = /^OK: every file matches the manifest\n.*; no keys checked; 950 rows of change-feed runs \(/;
    expect(verified.stdout, describeExit(verified)).toMatch(verdict);
    const runs = runsOf(out, 'assets');
    expect(runs).toHaveLength(2);
    const now = simRows(sim, 'asset', updated.map(keyOf));
    const before = simRows(sim, 'asset', again.map(keyOf)).map((row) => ({ ...row, version: row.version - 1 }));
    const expected = [...now, ...before].sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : a.version - b.version));
    expect(expected).toHaveLength(350);
    expect(await rowsIn(`${out}/assets/${runs[1]}/*/*.parquet`)).toEqual(expected);
    expect(await linesIn(`${out}/assets/${runs[1]}/*/*.ndjson`)).toEqual(expected);
    const applied = await duck.rows(`SELECT space || ':' || externalId AS k, version::INTEGER AS version FROM (${appliedQuery(out, 'assets')}) ORDER BY k`);
    const live = liveKeys(sim, 'asset');
    expect(applied.map((row) => [String(row.k), Number(row.version)])).toEqual(simRows(sim, 'asset', live).map((row) => [row.k, row.version]));
  }, 120_000);
});
