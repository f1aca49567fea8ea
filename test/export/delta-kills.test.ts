import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyOutput } from '../../src/export/inspect/verify.js';
import { silentLogger } from '../../src/log.js';
import { createLocalStore, type DeltaSnapshot, readDeltaLog } from '../../src/output/index.js';
import { asNumber, openDuck } from '../support/export-duckdb.js';
import { describeExit, newSimulator, runCliWith, tempDir, writeJob } from '../support/resume-harness.js';

/**
 * A Delta table stream killed (SIGKILL, the real process) at each step of committing a run: before
 * its version is written, with the version's file written under its temporary name only, and after
 * the version but before its checkpoint, cleanup and `_SUCCESS`. The rerun commits the run exactly
 * once, leaves no temporary behind, and every version replays to whole runs, read by DuckDB.
 */
const KEY = 'delta-kills-key-0001';
const EVENTS = 900;
/** Each case spawns the CLI three to five times: seconds each on two busy cores. */
const TIMEOUT_MS = 180_000;

async function setUp(stream: Record<string, unknown>) {
  const sim = await newSimulator({ assets: 10, events: EVENTS, seed: 45, apiKeys: [KEY] });
  const dir = tempDir('delta-kills');
  const out = join(dir, 'out');
  const file = writeJob(join(dir, 'job.yaml'), {
    baseUrl: sim.baseUrl,
    outDir: out,
    streams: [{ resource: 'events', partitions: 2, limit: 200, ...stream }],
    formats: ['parquet'],
    maxRows: 300,
    table: 'delta',
  });
  const run = (crashAt?: string, args: string[] = []) =>
    runCliWith(['run', '--config', file, ...args], {
      cwd: dir,
      env: { SIM_KEY: KEY, ...(crashAt === undefined ? {} : { BULK_EXTRACT_CRASH_AT: crashAt }) },
    });
  return { sim, out, run };
}

function table(out: string, asOf?: number): Promise<DeltaSnapshot> {
  return readDeltaLog(createLocalStore(out, silentLogger), 'events', asOf === undefined ? {} : { asOf });
}

/** Rows and distinct ids in exactly the files of the version. */
async function rowsOf(out: string, snapshot: DeltaSnapshot): Promise<{ rows: number; ids: number }> {
  const duck = await openDuck();
  try {
    const files = snapshot.files.map((file) => `'${join(out, file.key)}'`).join(', ');
    const row = await duck.one(`SELECT count(*) AS n, count(DISTINCT id) AS ids FROM read_parquet([${files}], hive_partitioning = false)`);
    return { rows: asNumber(row.n), ids: asNumber(row.ids) };
  } finally {
    duck.close();
  }
}

/** The log folder's files; none before the first version (a folder store makes it with the first file). */
function logFiles(out: string): string[] {
  const log = join(out, 'events', '_delta_log');
  return existsSync(log) ? readdirSync(log).sort() : [];
}

describe('a Delta table stream killed while it commits', () => {
  it.each(['before-table-commit:1', 'after-create-temp:1', 'after-table-commit:1'])(
    'full export killed at %s: the rerun commits version 0 once, whole',
    { timeout: TIMEOUT_MS },
    async (point) => {
      const { out, run } = await setUp({});
      const killed = await run(point);
      expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
      const committed = existsSync(join(out, 'events', '_delta_log', '00000000000000000000.json'));
      expect(committed, 'the version exists only once the kill came after it').toBe(point.startsWith('after-table-commit'));
      const temps = logFiles(out).filter((name) => name.endsWith('.inprogress'));
      expect(temps, 'a kill mid-commit leaves the temporary, not the version').toHaveLength(point.startsWith('after-create-temp') ? 1 : 0);
      const rerun = await run();
      expect(rerun.code, describeExit(rerun)).toBe(0);
      const latest = await table(out);
      expect(latest.version).toBe(0);
      expect(await rowsOf(out, latest)).toEqual({ rows: EVENTS, ids: EVENTS });
      expect(logFiles(out).filter((name) => name.endsWith('.inprogress'))).toEqual([]);
      expect((await verifyOutput(out)).problems).toEqual([]);
    },
  );

  it('snapshot keep 1 killed after its second version: the rerun commits nothing again and deletes the first snapshot\'s files', { timeout: TIMEOUT_MS }, async () => {
    const { out, run } = await setUp({ mode: 'snapshot', keep: 1 });
    expect((await run()).code).toBe(0);
    const first = await table(out);
    const killed = await run('after-table-commit:1');
    expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
    expect((await table(out)).version).toBe(1);
    expect(first.files.every((file) => existsSync(join(out, file.key))), 'not deleted before the cleanup ran').toBe(true);
    const rerun = await run();
    expect(rerun.code, describeExit(rerun)).toBe(0);
    // The rerun sealed the second snapshot (no new version), then began and committed a third.
    const versions = logFiles(out).filter((name) => name.endsWith('.json'));
    expect(versions).toEqual(['00000000000000000000.json', '00000000000000000001.json', '00000000000000000002.json']);
    const latest = await table(out);
    expect(await rowsOf(out, latest)).toEqual({ rows: EVENTS, ids: EVENTS });
    expect(first.files.some((file) => existsSync(join(out, file.key)))).toBe(false);
    expect((await table(out, 1)).files.some((file) => existsSync(join(out, file.key))), 'keep 1: only the latest version keeps its files').toBe(false);
    expect((await verifyOutput(out)).problems).toEqual([]);
  });

  it('incremental killed before and after committing a window: each window is in the table once', { timeout: TIMEOUT_MS }, async () => {
    const { sim, out, run } = await setUp({ mode: 'incremental', safetyLag: '0s' });
    expect((await run()).code).toBe(0);
    // Window 2 is read and sealed, the kill comes before its version.
    sim.update('events', [1, 2, 3], Date.now() - 1);
    const beforeCommit = await run('before-table-commit:1');
    expect(beforeCommit.signal, describeExit(beforeCommit)).toBe('SIGKILL');
    expect((await table(out)).version).toBe(0);
    // The next run commits window 2 first, and is killed right after that version.
    sim.update('events', [4, 5], Date.now() - 1);
    const afterCommit = await run('after-table-commit:1');
    expect(afterCommit.signal, describeExit(afterCommit)).toBe('SIGKILL');
    expect((await table(out)).version).toBe(1);
    // The rerun finds window 2 committed, seals it, then reads and commits window 3.
    const rerun = await run();
    expect(rerun.code, describeExit(rerun)).toBe(0);
    const latest = await table(out);
    expect(latest.version).toBe(2);
    expect(await rowsOf(out, latest)).toEqual({ rows: EVENTS + 5, ids: EVENTS });
    expect((await verifyOutput(out)).problems).toEqual([]);
  });

  it('a split job of two workers, one killed after its share: the last to finish commits version 0 once', { timeout: TIMEOUT_MS }, async () => {
    const { out, run } = await setUp({ partitions: 4 });
    const [first, killed] = await Promise.all([run(undefined, ['--shard', '0/2']), run('after-shard-rename:2', ['--shard', '1/2'])]);
    expect(first.code, describeExit(first)).toBe(0);
    expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
    expect(existsSync(join(out, 'events', '_delta_log')), 'no version before every share is done').toBe(false);
    const resumed = await run(undefined, ['--shard', '1/2']);
    expect(resumed.code, describeExit(resumed)).toBe(0);
    const latest = await table(out);
    expect(latest.version).toBe(0);
    expect(await rowsOf(out, latest)).toEqual({ rows: EVENTS, ids: EVENTS });
    expect((await verifyOutput(out)).problems).toEqual([]);
  });
});
