import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { verifyOutput } from '../../src/export/inspect/verify.js';
import { runJob } from '../../src/export/run/run-job.js';
import { runId } from '../../src/export/state/checkpoint.js';
import type { Checkpoint } from '../../src/export/state/checkpoint-schema.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { fencedBlocks } from '../docs/fenced-blocks.js';
import { ndjsonLines, writePointsJob } from '../support/datapoints-export.js';
import { type Duck, openDuck, parquetAt } from '../support/export-duckdb.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';
import { describeExit, type Exit, runCliWith, tempDir } from '../support/resume-harness.js';

/**
 * A datapoints stream that follows the simulator's demo subscription (`sim-all-points`, every
 * series, 4 partitions) while `--churn` writes late points, corrects values and deletes ranges:
 * three runs a minute apart each write the changes made since the run before, and those changes,
 * applied to a plain export made first with the query docs/datapoints.md gives, equal a fresh
 * export of the same window made at the end, point for point. A run killed at a failpoint
 * resumes exactly; a cursor older than the subscription keeps is refused with the way on. Real
 * simulator over HTTP, the run in-process or the built CLI, Parquet read back with DuckDB.
 */
const KEY = 'subscription-stream-key-1';
const T0 = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;
/** Both streams read bad points and their statuses, so that a point corrected to Bad is a change like any other. */
const FLAGS = { includeStatus: true, ignoreBadDataPoints: false };

let clock: FakeClock;
let sim: Simulator;
let duck: Duck;
const outputs: string[] = [];

beforeAll(async () => {
  clock = createFakeClock(T0);
  sim = await startSimulator({ seed: 41, timeseries: 30, datapoints: 120_000, churn: 5, apiKeys: [KEY], clock });
  duck = await openDuck();
});

afterAll(async () => {
  duck.close();
  await sim.close();
  expect(outputs.join('\n')).not.toContain(KEY);
});

/** docs/datapoints.md's query that applies change rows to an export, its paths set to `out`'s streams. */
function appliedQuery(out: string): string {
  const doc = readFileSync(new URL('../../docs/datapoints.md', import.meta.url), 'utf8');
  const block = fencedBlocks(doc, 'docs/datapoints.md').find((b) => b.lang === 'sql' && b.text.includes('current_points'));
  if (block === undefined) throw new Error('docs/datapoints.md has no query that makes current_points');
  const changes = "'out/pt-changes/*/*/*.parquet'";
  const points = "'out/points/*/*.parquet'";
  expect(block.text).toContain(changes);
  expect(block.text).toContain(points);
  return block.text.replace(changes, `'${out}/pt-changes/*/*/*.parquet'`).replace(points, `'${out}/points/*/*.parquet'`);
}

/** A point as the comparison holds it: its key, value and status; times in epoch milliseconds. */
const POINT = 'timeseriesId, epoch_ms(timestamp) AS t, value, valueString, statusCode, statusSymbol';

/** Rows of `a` that `b` lacks, counting repeats (EXCEPT ALL): NaN equals NaN in DuckDB, as in the files. */
async function missingFrom(a: string, b: string): Promise<number> {
  const row = await duck.one(`SELECT count(*)::INTEGER AS n FROM (${a} EXCEPT ALL ${b})`);
  return Number(row.n);
}

async function run(file: string, env: Record<string, string> = {}): Promise<Exit> {
  const exit = await runCliWith(['run', '--config', file, '--log-level', 'warn'], { env: { SIM_KEY: KEY, ...env } });
  outputs.push(exit.stdout, exit.stderr);
  return exit;
}

describe('a datapoints stream that follows a subscription', () => {
  it('three runs write the changes churn made; applied to a first export they give a fresh export', { timeout: 180_000 }, async () => {
    const dir = tempDir('subscription-stream');
    const out = join(dir, 'out');
    clock.advance(MINUTE);
    const t1 = clock.now();
    const window = { end: new Date(t1).toISOString(), partitions: 2, ...FLAGS };
    const file = writePointsJob(join(dir, 'job.yaml'), {
      baseUrl: sim.baseUrl,
      out,
      maxRows: 500,
      streams: [
        { resource: 'datapoints', name: 'points', ...window },
        { resource: 'datapoints', name: 'pt-changes', subscription: 'sim-all-points', partitions: 3, includeStatus: true },
      ],
    });
    const config = loadConfig(file, { SIM_KEY: KEY });
    let before = T0;
    for (const at of [t1, t1 + MINUTE, t1 + 2 * MINUTE]) {
      clock.advance(at - clock.now());
      const result = await runJob({ config, logger: silentLogger, clock });
      expect(result.errors).toEqual([]);
      expect(result.state).toBe('complete');
      const folder = join(out, 'pt-changes', `run=${runId(at)}`);
      const counts = await duck.one(
        `SELECT count(*) FILTER (WHERE change = 'delete')::INTEGER AS deletes,
                count(*) FILTER (WHERE change = 'upsert' AND epoch_ms(timestamp) < ${before})::INTEGER AS late,
                count(*)::INTEGER AS rows
         FROM ${parquetAt(`${folder}/*/*.parquet`)}`,
      );
      const when = `the run at ${new Date(at).toISOString()}`;
      // A minute of churn at 5 changes a second: about 60 deleted ranges and 150 late points.
      expect(Number(counts.deletes), `${when}: deleted ranges`).toBeGreaterThan(10);
      expect(Number(counts.late), `${when}: points written before the run before`).toBeGreaterThan(10);
      expect(result.manifest.streams['pt-changes']?.rows).toBe(Number(counts.rows));
      // The NDJSON shards hold the same rows, a bad value as the platform's text.
      expect(ndjsonLines(folder)).toHaveLength(Number(counts.rows));
      before = at;
    }
    // The subscription's partitions (4) spread over the stream's 3: the first reads two.
    expect(readdirSync(join(out, 'pt-changes', `run=${runId(t1)}`)).filter((name) => name.startsWith('part=')).sort())
      .toEqual(['part=1-of-3', 'part=2-of-3', 'part=3-of-3']);
    expect((await verifyOutput(out)).problems).toEqual([]);

    // A fresh export of the first export's window, now.
    const freshOut = join(dir, 'fresh');
    const freshFile = writePointsJob(join(dir, 'fresh.yaml'), {
      baseUrl: sim.baseUrl,
      out: freshOut,
      formats: ['parquet'],
      streams: [{ resource: 'datapoints', name: 'points', ...window }],
    });
    const fresh = await runJob({ config: loadConfig(freshFile, { SIM_KEY: KEY }), logger: silentLogger, clock });
    expect(fresh.state).toBe('complete');

    await duck.rows(appliedQuery(out));
    const applied = `SELECT ${POINT} FROM current_points WHERE epoch_ms(timestamp) < ${t1}`;
    const now = `SELECT ${POINT} FROM ${parquetAt(`${freshOut}/points/*/*.parquet`)}`;
    const first = `SELECT ${POINT} FROM ${parquetAt(`${out}/points/*/*.parquet`)}`;
    // The churn changed the window since the first export: otherwise the comparison proves nothing.
    expect(await missingFrom(first, now), 'points of the first export changed or deleted since').toBeGreaterThan(50);
    expect(await missingFrom(now, first), 'points written into the window or corrected since').toBeGreaterThan(50);
    expect(await missingFrom(applied, now), 'points the changes leave that a fresh export lacks').toBe(0);
    expect(await missingFrom(now, applied), 'points of a fresh export the changes do not give').toBe(0);
    expect(Number((await duck.one(`SELECT count(*)::INTEGER AS n FROM (${now})`)).n)).toBe(fresh.rows);
  });

  it('resumes a run killed at each failpoint exactly: the same change rows as a run never killed', { timeout: 240_000 }, async () => {
    // The clock stands still while the CLI runs: the subscription's feed is the same for every run.
    clock.advance(3 * MINUTE);
    const job = (name: string) => {
      const dir = tempDir(`subscription-${name}`);
      const out = join(dir, 'out');
      // Answers of about 100 points: a partition's feed is many pages, and a kill lands among them.
      const stream = { resource: 'datapoints', name: 'changes', subscription: 'sim-all-points', partitions: 2, limit: 100, includeStatus: true };
      return { out, file: writePointsJob(join(dir, 'job.yaml'), { baseUrl: sim.baseUrl, out, maxRows: 300, streams: [stream] }) };
    };
    const whole = job('whole');
    const once = await run(whole.file);
    expect(once.code, describeExit(once)).toBe(0);

    const killed = job('killed');
    for (const failpoint of ['after-append:3', 'after-shard-rename:2', 'after-checkpoint-write:3']) {
      const exit = await run(killed.file, { BULK_EXTRACT_CRASH_AT: failpoint });
      expect(exit.signal, `${failpoint}: ${describeExit(exit)}`).toBe('SIGKILL');
    }
    const resumed = await run(killed.file);
    expect(resumed.code, describeExit(resumed)).toBe(0);
    // A kill after the last partition's commit leaves the run to be sealed by the next, which then
    // reads on in a run of its own: the feed stands still, so that run holds no change.
    const runs = readdirSync(join(killed.out, 'changes')).filter((name) => name.startsWith('run=')).sort();
    expect(runs.length).toBeLessThanOrEqual(2);
    for (const later of runs.slice(1)) expect(ndjsonLines(join(killed.out, 'changes', later))).toEqual([]);

    const rows = (out: string) => `SELECT * FROM ${parquetAt(`${out}/changes/*/*/*.parquet`)}`;
    const total = Number((await duck.one(`SELECT count(*)::INTEGER AS n FROM (${rows(whole.out)})`)).n);
    expect(total, 'several shards in each partition').toBeGreaterThan(2000);
    expect(await missingFrom(rows(whole.out), rows(killed.out))).toBe(0);
    expect(await missingFrom(rows(killed.out), rows(whole.out))).toBe(0);
    const lines = (out: string) => ndjsonLines(join(out, 'changes')).sort();
    expect(lines(killed.out)).toEqual(lines(whole.out));
    expect((await verifyOutput(killed.out)).problems).toEqual([]);
  });

  it('refuses a cursor older than the subscription keeps, with the way on, and changes nothing', { timeout: 120_000 }, async () => {
    // The simulator keeps 10 minutes of changes instead of the platform's 7 days.
    const shortClock = createFakeClock(T0);
    const faults = { cursorTtlMs: 10 * MINUTE };
    const sizes = { seed: 42, timeseries: 20, datapoints: 20_000 };
    const short = await startSimulator({ ...sizes, apiKeys: [KEY], clock: shortClock, faults });
    const dir = tempDir('subscription-expired');
    const out = join(dir, 'out');
    const stream = { resource: 'datapoints', name: 'changes', subscription: 'sim-all-points', partitions: 4 };
    const file = writePointsJob(join(dir, 'job.yaml'), { baseUrl: short.baseUrl, out, streams: [stream] });
    shortClock.advance(MINUTE);
    const first = await run(file);
    expect(first.code, describeExit(first)).toBe(0);
    const cursors = () => {
      const checkpoint = JSON.parse(readFileSync(join(out, '_checkpoint.json'), 'utf8')) as Checkpoint;
      return Object.values(checkpoint.streams.changes?.parts ?? {}).map((part) => part.cursor);
    };
    const saved = cursors();

    shortClock.advance(20 * MINUTE);
    const refused = await run(file);
    expect(refused.code, describeExit(refused)).toBe(2);
    const named = /streams \(changes\), partition \d\/4: the platform refused the cursor of subscription 'sim-all/;
    expect(refused.stderr).toMatch(named);
    expect(refused.stderr).toMatch(/Cursor has expired/);
    expect(refused.stderr).toContain('run with --fresh --stream changes');
    expect(refused.stderr).toContain('E_SYNC_CURSOR');
    expect(cursors(), 'the cursors saved stay as they were').toEqual(saved);
    await short.close();
  });
});
