import { existsSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readStatus } from '../../src/export/inspect/read-status.js';
import { verifyOutput } from '../../src/export/inspect/verify.js';
import { runJob } from '../../src/export/run/run-job.js';
import { runId } from '../../src/export/state/checkpoint.js';
import { outputAt } from '../../src/export/state/output-target.js';
import { silentLogger } from '../../src/log.js';
import { createLocalStore, type DeltaSnapshot, readDeltaLog } from '../../src/output/index.js';
import { EVENT_ID_BASE, EVENT_ID_STRIDE, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { asNumber, type Duck, openDuck } from '../support/export-duckdb.js';
import { closedFormIdSum, loadJob, removeTempDirs, SIM_KEY, tempDir } from '../support/export-harness.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';

/**
 * `output.table: delta`: each stream's folder is a Delta table, one version per completed run.
 * Every version is read back twice: by the log reader verify uses (the same reader that reads
 * Spark's golden tables), and by DuckDB over exactly the files that version names.
 */
const EVENTS = 1200;
const T0 = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;

let sim: Simulator;
let duck: Duck;

beforeEach(async () => {
  sim = await startSimulator({ assets: 300, events: EVENTS, seed: 44, apiKeys: [SIM_KEY] });
  duck = await openDuck();
});

afterEach(async () => {
  duck.close();
  await sim.close();
  removeTempDirs();
});

function job(out: string, stream: Record<string, unknown>) {
  return loadJob(join(out, '..'), {
    baseUrl: sim.baseUrl,
    out,
    streams: [{ partitions: 3, limit: 100, ...stream }],
    output: { table: 'delta', formats: ['parquet'], shard: { maxRows: 250 }, parquet: { rowGroupRows: 1000 } },
  });
}

async function run(out: string, stream: Record<string, unknown>, clock: FakeClock, fresh = false) {
  const result = await runJob({ config: job(out, stream), logger: silentLogger, clock, fresh });
  expect(result.errors).toEqual([]);
  expect(result.state).toBe('complete');
  return result;
}

function table(out: string, stream: string, asOf?: number): Promise<DeltaSnapshot> {
  return readDeltaLog(createLocalStore(out, silentLogger), stream, asOf === undefined ? {} : { asOf });
}

/** DuckDB over exactly the files of a version: rows, distinct ids, their sum. */
async function rowsOf(snapshot: DeltaSnapshot, out: string): Promise<{ rows: number; ids: number; sum: bigint }> {
  if (snapshot.files.length === 0) return { rows: 0, ids: 0, sum: 0n };
  const files = snapshot.files.map((file) => `'${join(out, file.key)}'`).join(', ');
  const row = await duck.one(
    `SELECT count(*) AS n, count(DISTINCT id) AS ids, sum(id)::VARCHAR AS total FROM read_parquet([${files}], hive_partitioning = false)`,
  );
  return { rows: asNumber(row.n), ids: asNumber(row.ids), sum: BigInt(String(row.total)) };
}

/** Every file of the version has the stats Spark would write, their numRecords the file's rows. */
async function expectStats(snapshot: DeltaSnapshot, out: string): Promise<void> {
  for (const file of snapshot.files) {
    expect(file.stats, file.key).toBeDefined();
    const row = await duck.one(`SELECT count(*) AS n FROM read_parquet('${join(out, file.key)}')`);
    expect(file.stats?.numRecords, file.key).toBe(asNumber(row.n));
  }
}

function runFolders(out: string, stream: string): string[] {
  return readdirSync(join(out, stream)).filter((name) => name.startsWith('run=')).sort();
}

const ALL_EVENTS = { rows: EVENTS, ids: EVENTS, sum: closedFormIdSum(EVENT_ID_BASE, EVENT_ID_STRIDE, EVENTS) };

describe('output.table: delta', () => {
  it('full: one version when the export completes; --fresh is a new version that removes the old files', async () => {
    const out = join(tempDir(), 'out');
    const clock = createFakeClock(T0);
    await run(out, { resource: 'events' }, clock);
    const v0 = await table(out, 'events');
    expect(v0.version).toBe(0);
    expect(v0.protocol).toEqual({ minReaderVersion: 1, minWriterVersion: 2 });
    expect(v0.txns.get('bulk-extract')?.version).toBe(T0);
    expect(await rowsOf(v0, out)).toEqual(ALL_EVENTS);
    expect(v0.files.every((file) => file.key.startsWith(`events/run=${runId(T0)}/part=`))).toBe(true);
    await expectStats(v0, out);

    // A rerun of a complete export has nothing to commit.
    clock.advance(MINUTE);
    await runJob({ config: job(out, { resource: 'events' }), logger: silentLogger, clock });
    expect((await table(out, 'events')).version).toBe(0);

    // Temporaries a killed commit, checkpoint or _last_checkpoint write left: the next commit removes them, only them.
    const log = join(out, 'events', '_delta_log');
    const left = ['00000000000000000001.json.4242-0a1b2c3d.inprogress', '_last_checkpoint.inprogress'];
    for (const name of [...left, 'notes.txt']) writeFileSync(join(log, name), 'x');
    clock.advance(MINUTE);
    await run(out, { resource: 'events' }, clock, true);
    expect(readdirSync(log).sort()).toEqual(['00000000000000000000.json', '00000000000000000001.json', 'notes.txt']);
    const v1 = await table(out, 'events');
    expect(v1.version).toBe(1);
    expect(await rowsOf(v1, out)).toEqual(ALL_EVENTS);
    expect(v1.files.every((file) => file.key.startsWith(`events/run=${runId(T0 + 2 * MINUTE)}/`))).toBe(true);
    expect(runFolders(out, 'events'), 'the old version\'s files go once the new version is committed').toEqual([
      `run=${runId(T0 + 2 * MINUTE)}`,
    ]);
    expect((await table(out, 'events', 0)).files.every((file) => !existsSync(join(out, file.key)))).toBe(true);
    const verified = await verifyOutput(out);
    expect(verified.problems).toEqual([]);
    expect(verified.tables).toEqual({ events: { version: 1, files: v1.files.length, rows: EVENTS } });
    const status = await readStatus(outputAt(out, silentLogger));
    expect(status?.streams[0]?.table).toEqual({
      version: 1,
      committedAt: expect.any(Number) as number,
      run: runId(T0 + 2 * MINUTE),
      files: v1.files.length,
    });
  });

  it('refuses to start plain files in a stream folder that is a Delta table, and a table switched to files is drift', async () => {
    const out = join(tempDir(), 'out');
    const clock = createFakeClock(T0);
    await run(out, { resource: 'events' }, clock);
    const before = await table(out, 'events');
    const files = loadJob(join(out, '..'), {
      baseUrl: sim.baseUrl,
      out,
      streams: [{ resource: 'events', partitions: 3, limit: 100 }],
      output: { formats: ['parquet'] },
    });
    await expect(runJob({ config: files, logger: silentLogger, clock })).rejects.toThrow(
      "stream 'events': table delta in the checkpoint, files in the config",
    );
    await expect(runJob({ config: files, logger: silentLogger, clock, fresh: true })).rejects.toThrow(
      `${join(out, 'events')} is a Delta table (it has a _delta_log), and the job makes stream 'events' plain files: give it table: delta, or another name or output.dir`,
    );
    expect(await table(out, 'events')).toEqual(before);
    expect(before.files.every((file) => existsSync(join(out, file.key)))).toBe(true);
  });

  it('a plain export made a table with --fresh: the plain files go once the first version is committed', async () => {
    const out = join(tempDir(), 'out');
    const clock = createFakeClock(T0);
    const plain = loadJob(join(out, '..'), {
      baseUrl: sim.baseUrl,
      out,
      streams: [{ resource: 'events', partitions: 3, limit: 100 }],
      output: { formats: ['parquet'] },
    });
    expect((await runJob({ config: plain, logger: silentLogger, clock })).state).toBe('complete');
    expect(readdirSync(join(out, 'events')).filter((name) => name.startsWith('part='))).toHaveLength(3);
    writeFileSync(join(out, 'events', 'part=1-of-3', 'notes.txt'), 'theirs');
    clock.advance(MINUTE);
    await run(out, { resource: 'events' }, clock, true);
    expect(await rowsOf(await table(out, 'events'), out)).toEqual(ALL_EVENTS);
    expect(readdirSync(join(out, 'events')).filter((name) => name.startsWith('part='))).toEqual(['part=1-of-3']);
    expect(readdirSync(join(out, 'events', 'part=1-of-3'))).toEqual(['notes.txt']);
    expect((await verifyOutput(out)).problems).toEqual([]);
  });

  it('repair: a damaged file of a committed run, read again, is a new version that replaces it', async () => {
    const out = join(tempDir(), 'out');
    const clock = createFakeClock(T0);
    await run(out, { resource: 'events' }, clock);
    const v0 = await table(out, 'events');
    const damaged = v0.files[0]!;
    truncateSync(join(out, damaged.key), 100);
    expect((await verifyOutput(out)).problems.length).toBeGreaterThan(0);
    // Items of the run's window changed since: the partition read again holds fewer rows, in a file of another size.
    sim.update('events', [0, 3, 6, 9, 12, 15], T0 + 10 * MINUTE);
    clock.advance(MINUTE);
    const repaired = await runJob({ config: job(out, { resource: 'events' }), logger: silentLogger, clock, repair: true });
    expect(repaired.errors).toEqual([]);
    const v1 = await table(out, 'events');
    expect(v1.version).toBe(1);
    expect(v1.txns.get('bulk-extract')?.version).toBe(T0);
    const replaced = v1.files.find((file) => file.key === damaged.key);
    expect(replaced?.size).not.toBe(damaged.size);
    expect(v1.files.map((file) => file.key).sort()).toEqual(v0.files.map((file) => file.key).sort());
    expect(await rowsOf(v1, out)).toMatchObject({ rows: (await rowsOf(v1, out)).ids });
    await expectStats(v1, out);
    expect((await verifyOutput(out)).problems).toEqual([]);
    // Sealed again with nothing changed: no version more.
    clock.advance(MINUTE);
    await runJob({ config: job(out, { resource: 'events' }), logger: silentLogger, clock });
    expect((await table(out, 'events')).version).toBe(1);
  });

  it('verify reports a file the table references that is gone, and a sealed run the table lacks', async () => {
    const out = join(tempDir(), 'out');
    const clock = createFakeClock(T0);
    await run(out, { resource: 'events' }, clock);
    const v0 = await table(out, 'events');
    rmSync(join(out, v0.files[0]!.key));
    const gone = await verifyOutput(out);
    expect(gone.problems).toContain(`${v0.files[0]!.key}: version 0 of the Delta table events references it, but it is missing`);

    // A version lost (here by hand): the newest sealed run is not in the version the log now ends at.
    const other = join(tempDir(), 'out');
    const otherClock = createFakeClock(T0);
    await run(other, { resource: 'events' }, otherClock);
    otherClock.advance(MINUTE);
    await run(other, { resource: 'events' }, otherClock, true);
    const sealed = (await table(other, 'events')).files[0]!.key;
    rmSync(join(other, 'events', '_delta_log', '00000000000000000001.json'));
    const behind = await verifyOutput(other);
    expect(behind.problems).toContain(`${sealed}: sealed in run=${runId(T0 + MINUTE)} but not in version 0 of the Delta table events`);

    rmSync(join(other, 'events', '_delta_log'), { recursive: true });
    const lost = await verifyOutput(other);
    expect(lost.problems.some((problem) => problem.endsWith('_delta_log: missing, but the stream is a Delta table with sealed runs'))).toBe(true);
  });

  it('snapshot with keep 2: each snapshot an overwrite version; files of the two newest versions stay', async () => {
    const out = join(tempDir(), 'out');
    const clock = createFakeClock(T0);
    const stream = { resource: 'events', mode: 'snapshot', keep: 2 };
    const runs: string[] = [];
    for (let k = 0; k < 4; k++) {
      if (k > 0) sim.update('events', [k, k + 10], T0 + k * MINUTE - 1);
      await run(out, stream, clock);
      runs.push(`run=${runId(T0 + k * MINUTE)}`);
      clock.advance(MINUTE);
      const latest = await table(out, 'events');
      expect(latest.version).toBe(k);
      expect(await rowsOf(latest, out)).toEqual(ALL_EVENTS);
      await expectStats(latest, out);
    }
    expect(runFolders(out, 'events')).toEqual(runs.slice(2));
    for (const version of [2, 3]) {
      const kept = await table(out, 'events', version);
      expect(kept.files.every((file) => existsSync(join(out, file.key)))).toBe(true);
      expect(await rowsOf(kept, out)).toEqual(ALL_EVENTS);
    }
    const verified = await verifyOutput(out);
    expect(verified.problems).toEqual([]);
    expect(verified.tables?.events?.version).toBe(3);
  });

  it('incremental: an append per window with its txn, the current state by the latest row of each id; a checkpoint at version 10', async () => {
    const out = join(tempDir(), 'out');
    const clock = createFakeClock(T0);
    const stream = { resource: 'events', mode: 'incremental', safetyLag: '1m' };
    const updatedAt = new Map<number, number>();
    let rows = 0;
    for (let k = 0; k < 12; k++) {
      if (k > 0) {
        const changed = [k, 3 * k, 7 * k + 1];
        const at = T0 + (k - 1) * 10 * MINUTE + 1000;
        sim.update('events', changed, at);
        for (const i of changed) updatedAt.set(i, at);
        rows += new Set(changed).size;
      } else {
        rows += EVENTS;
      }
      await run(out, stream, clock);
      clock.advance(10 * MINUTE);
      const latest = await table(out, 'events');
      expect(latest.version).toBe(k);
      expect(latest.txns.get('bulk-extract')?.version).toBe(T0 + k * 10 * MINUTE);
      expect((await rowsOf(latest, out)).rows).toBe(rows);
    }
    expect(existsSync(join(out, 'events', '_delta_log', '00000000000000000010.checkpoint.parquet'))).toBe(true);
    const latest = await table(out, 'events');
    expect(latest.checkpoint).toBe(10);
    await expectStats(latest, out);
    // The current state: the newest row of each id, as the docs' query takes it.
    const files = latest.files.map((file) => `'${join(out, file.key)}'`).join(', ');
    const current = await duck.one(
      `SELECT count(*) AS n, count(DISTINCT id) AS ids FROM (SELECT id, lastUpdatedTime, row_number() OVER (PARTITION BY id ORDER BY lastUpdatedTime DESC) AS r FROM read_parquet([${files}], hive_partitioning = false)) WHERE r = 1`,
    );
    expect(asNumber(current.n)).toBe(EVENTS);
    expect(asNumber(current.ids)).toBe(EVENTS);
    const verified = await verifyOutput(out);
    expect(verified.problems).toEqual([]);
    expect(verified.tables).toEqual({ events: { version: 11, files: latest.files.length, rows, checkpoint: 10 } });
  });
});
