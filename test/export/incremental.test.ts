import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Checkpoint, parseCheckpoint, runId } from '../../src/export/state/checkpoint.js';
import type { Manifest } from '../../src/export/state/manifest.js';
import { runJob } from '../../src/export/run/run-job.js';
import type { WindowManifest } from '../../src/export/state/manifest.js';
import { verifyOutput } from '../../src/export/inspect/verify.js';
import { silentLogger } from '../../src/log.js';
import { EVENT_ID_BASE, EVENT_ID_STRIDE, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { asNumber, openDuck, parquetAt } from '../support/export-duckdb.js';
import { loadJob, removeTempDirs, SIM_KEY, tempDir } from '../support/export-harness.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';

const EVENTS = 3000;
const LAG_MS = 60_000;
const T0 = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;

/** An item's version: its id and lastUpdatedTime. */
type Version = `${number}@${number}`;

/** Each test updates items, so each has a simulator of its own. */
let sim: Simulator;

beforeEach(async () => {
  sim = await startSimulator({ assets: 50, events: EVENTS, seed: 23, apiKeys: [SIM_KEY], recordRequests: true });
});

afterEach(async () => {
  await sim.close();
  removeTempDirs();
});

function incrementalJob(out: string) {
  return loadJob(join(out, '..'), {
    baseUrl: sim.baseUrl,
    out,
    streams: [{ resource: 'events', mode: 'incremental', safetyLag: '1m', partitions: 3, limit: 200 }],
    output: { formats: ['parquet', 'ndjson'], shard: { maxRows: 400 } },
  });
}

async function runAt(clock: FakeClock, out: string) {
  const result = await runJob({ config: incrementalJob(out), logger: silentLogger, clock });
  expect(result.errors).toEqual([]);
  expect(result.state).toBe('complete');
  return result;
}

/** The versions the simulator serves with lastUpdatedTime in [from, until). */
function served(from: number | null, until: number): Version[] {
  const set = sim.dataset.events;
  const filter = { ...(from === null ? {} : { minLastUpdatedTime: from }), maxLastUpdatedTime: until - 1 };
  const versions: Version[] = [];
  for (let i = 0; i < set.count; i++) {
    if (set.matches(i, filter)) versions.push(version(set.item(i, false)));
  }
  return versions.sort();
}

function version(item: { id: number; lastUpdatedTime: number }): Version {
  return `${item.id}@${item.lastUpdatedTime}`;
}

/** The versions in a run folder's NDJSON shards. */
function versionsIn(out: string, run: string): Version[] {
  const dir = join(out, 'events', `run=${run}`);
  const versions: Version[] = [];
  for (const part of readdirSync(dir).filter((name) => name.startsWith('part='))) {
    for (const file of readdirSync(join(dir, part)).filter((name) => name.endsWith('.ndjson'))) {
      for (const line of readFileSync(join(dir, part, file), 'utf8').split('\n')) {
        if (line !== '') versions.push(version(JSON.parse(line) as { id: number; lastUpdatedTime: number }));
      }
    }
  }
  return versions.sort();
}

function checkpointOf(out: string): Checkpoint {
  const path = join(out, '_checkpoint.json');
  return parseCheckpoint(readFileSync(path, 'utf8'), path);
}

function idOf(index: number): number {
  return EVENT_ID_BASE + index * EVENT_ID_STRIDE;
}

describe('mode: incremental', () => {
  it('each run reads [watermark, start - safetyLag) into its own folder; the runs hold every version once', async () => {
    const out = join(tempDir(), 'out');
    const clock = createFakeClock(T0);

    // Run 1: no watermark yet, so everything updated before T0 - lag: the whole collection.
    await runAt(clock, out);
    const run1 = runId(T0);
    expect(versionsIn(out, run1)).toEqual(served(null, T0 - LAG_MS));
    expect(versionsIn(out, run1)).toHaveLength(EVENTS);
    const sealed1 = JSON.parse(readFileSync(join(out, 'events', `run=${run1}`, '_manifest.json'), 'utf8')) as WindowManifest;
    expect(sealed1.window).toEqual({ minLastUpdatedTime: null, maxLastUpdatedTime: T0 - LAG_MS - 1 });
    expect(sealed1.rows).toBe(EVENTS);
    expect(existsSync(join(out, 'events', `run=${run1}`, '_SUCCESS'))).toBe(true);
    expect(checkpointOf(out).streams.events?.watermark).toBeNull();

    // Between runs: A is updated after run 1's window; B inside run 2's safety lag.
    const a = Array.from({ length: 100 }, (_, k) => k * 29); // 0..2871
    const b = Array.from({ length: 50 }, (_, k) => EVENTS - 1 - k * 2); // 2901..2999, none of A
    sim.update('events', a, T0 + 1000);
    const t1 = T0 + 15 * MINUTE;
    sim.update('events', b, t1 - 30_000);
    clock.advance(15 * MINUTE);
    const before = sim.requests().length;
    await runAt(clock, out);
    const run2 = runId(t1);
    expect(versionsIn(out, run2)).toEqual(served(T0 - LAG_MS, t1 - LAG_MS));
    expect(versionsIn(out, run2)).toEqual(a.map((i) => `${idOf(i)}@${T0 + 1000}`).sort());
    const windowParams = sim
      .requests()
      .slice(before)
      .filter((r) => r.route === 'GET /events')
      .map((r) => r.params.filter(([key]) => key.endsWith('LastUpdatedTime')));
    expect(new Set(windowParams.map((p) => JSON.stringify(p)))).toEqual(
      new Set([JSON.stringify([['minLastUpdatedTime', String(T0 - LAG_MS)], ['maxLastUpdatedTime', String(t1 - LAG_MS - 1)]])]),
    );
    expect(checkpointOf(out).streams.events).toMatchObject({
      run: run2,
      watermark: T0 - LAG_MS,
      window: { from: T0 - LAG_MS, until: t1 - LAG_MS },
    });

    // C: some of A change again. Run 3 reads B (held back by the lag) and C's newest versions.
    const c = a.slice(0, 20);
    sim.update('events', c, t1 + 5000);
    clock.advance(15 * MINUTE);
    const t2 = t1 + 15 * MINUTE;
    await runAt(clock, out);
    const run3 = runId(t2);
    expect(versionsIn(out, run3)).toEqual(served(t1 - LAG_MS, t2 - LAG_MS));
    expect(versionsIn(out, run3)).toEqual(
      [...b.map((i) => `${idOf(i)}@${t1 - 30_000}`), ...c.map((i) => `${idOf(i)}@${t1 + 5000}`)].sort(),
    );

    // The union: every version that existed once, none twice.
    const all = [run1, run2, run3].flatMap((run) => versionsIn(out, run));
    expect(new Set(all).size).toBe(all.length);
    expect(all).toHaveLength(EVENTS + a.length + b.length + c.length);

    // Parquet holds the same rows as NDJSON in every run folder.
    const duck = await openDuck();
    try {
      for (const run of [run1, run2, run3]) {
        const rows = await duck.rows(
          `SELECT id, epoch_ms(lastUpdatedTime) AS t FROM ${parquetAt(`${out}/events/run=${run}/*/*.parquet`)}`,
        );
        expect(rows.map((row) => `${asNumber(row.id)}@${asNumber(row.t)}`).sort()).toEqual(versionsIn(out, run));
      }
    } finally {
      duck.close();
    }

    // The output folder's manifest lists the current run; verify reads the sealed runs' own.
    const manifest = JSON.parse(readFileSync(join(out, '_manifest.json'), 'utf8')) as Manifest;
    expect(new Set(manifest.files.map((f) => f.run))).toEqual(new Set([run3]));
    const report = await verifyOutput(out);
    expect(report.problems).toEqual([]);
    expect(report.formats.ndjson?.rows).toBe(all.length);
    expect(report.formats.parquet?.rows).toBe(all.length);

    // A run that starts when the last one did (the clock not past its start) has no window:
    // no new folder, no list request.
    const requests = sim.requests().length;
    const again = await runAt(clock, out);
    expect(again.idle).toMatchObject([{ stream: 'events', reason: 'waiting', since: new Date(t2).toISOString() }]);
    expect(readdirSync(join(out, 'events')).sort()).toEqual([run1, run2, run3].map((run) => `run=${run}`));
    expect(sim.requests().slice(requests).filter((r) => r.route === 'GET /events')).toEqual([]);
  });

  it('runs closer together than the lag each write a sealed folder, an empty window too; nothing read twice, nothing lost', async () => {
    const out = join(tempDir(), 'out');
    const clock = createFakeClock(T0);
    await runAt(clock, out);
    const run1 = runId(T0);
    // Written just before run 1 started, inside its lag: none of its window, but of a later one.
    const late = [5, 17, 2999];
    sim.update('events', late, T0 - 2000);

    // Run 2, 50 s later (the lag is 60 s): its window [T0 - 60 s, T0 - 10 s) holds no update.
    const t1 = T0 + 50_000;
    clock.advance(t1 - T0);
    const before = sim.requests().length;
    const second = await runAt(clock, out);
    const run2 = runId(t1);
    expect(second.rows).toBe(0);
    expect(sim.requests().slice(before).filter((r) => r.route === 'GET /events').length, 'it asked').toBeGreaterThan(0);
    const folder2 = join(out, 'events', `run=${run2}`);
    expect(existsSync(join(folder2, '_SUCCESS')), 'sealed').toBe(true);
    const sealed2 = JSON.parse(readFileSync(join(folder2, '_manifest.json'), 'utf8')) as WindowManifest;
    expect(sealed2).toMatchObject({ run: run2, rows: 0, files: [] });
    expect(sealed2.window).toEqual({ minLastUpdatedTime: T0 - LAG_MS, maxLastUpdatedTime: t1 - LAG_MS - 1 });
    expect(versionsIn(out, run2)).toEqual([]);

    // Run 3, 40 s after run 2 (within its lag too): [T0 - 10 s, T0 + 30 s) holds the late updates.
    const t2 = t1 + 40_000;
    clock.advance(t2 - t1);
    // A second passes while it drains: its last commit is later than its start.
    const onStart = () => clock.advance(1000);
    const third = await runJob({ config: incrementalJob(out), logger: silentLogger, clock, onStart });
    expect(third).toMatchObject({ state: 'complete', errors: [], rows: late.length });
    const run3 = runId(t2);
    expect(versionsIn(out, run3)).toEqual(late.map((i) => `${idOf(i)}@${T0 - 2000}`).sort());
    expect(readdirSync(join(out, 'events')).sort()).toEqual([run1, run2, run3].map((run) => `run=${run}`));

    // Every version once: the first export, then the late updates, none twice.
    const all = [run1, run2, run3].flatMap((run) => versionsIn(out, run));
    expect(new Set(all).size).toBe(all.length);
    expect(all).toHaveLength(EVENTS + late.length);
    expect((await verifyOutput(out)).problems).toEqual([]);

    // The clock set back before run 3's start: no window of its own, so no folder; it names that start.
    clock.advance(-31_000);
    const back = await runAt(clock, out);
    expect(back.idle).toMatchObject([{ stream: 'events', reason: 'waiting', since: new Date(t2).toISOString() }]);
    expect(readdirSync(join(out, 'events'))).toHaveLength(3);
  });

  it('a damaged run folder is found by verify: a shard of a sealed run goes missing', async () => {
    const out = join(tempDir(), 'out');
    const clock = createFakeClock(T0);
    await runAt(clock, out);
    const run1 = runId(T0);
    clock.advance(10 * MINUTE);
    sim.update('events', [7], T0 + 1);
    await runAt(clock, out);
    const sealed = JSON.parse(readFileSync(join(out, 'events', `run=${run1}`, '_manifest.json'), 'utf8')) as WindowManifest;
    const victim = sealed.files[0]?.path ?? '';
    rmSync(join(out, victim));
    const report = await verifyOutput(out);
    expect(report.problems).toEqual([`${victim}: missing`]);
  });
});
