import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCheckpoint } from '../../src/export/state/checkpoint.js';
import { shardSeq } from '../../src/export/state/layout.js';
import { EVENT_ID_BASE, EVENT_ID_STRIDE } from '../../src/simulator/index.js';
import { describeExit, type Exit, newSimulator, runCliWith, tempDir, writeJob } from '../support/resume-harness.js';

/**
 * An incremental run killed (SIGKILL, a real process) in the middle of its window is resumed by
 * the next invocation, window and run folder unchanged, before a new window opens; items changed
 * meanwhile wait for that next window. The real clock drives the windows (safetyLag 0).
 */
const KEY = 'incremental-kill-key-01';
const EVENTS = 6000;

type Version = `${number}@${number}`;

/** The versions in a folder's NDJSON shards; with `committed`, only shards below each partition's nextSeq. */
function versionsIn(windowDir: string, committed?: Record<string, { nextSeq: number }>): Version[] {
  const versions: Version[] = [];
  for (const part of readdirSync(windowDir).filter((name) => name.startsWith('part='))) {
    const nextSeq = committed?.[/^part=(\d+)-/.exec(part)?.[1] ?? '']?.nextSeq ?? Infinity;
    const shards = readdirSync(join(windowDir, part)).filter((name) => name.endsWith('.ndjson') && shardSeq(name)! < nextSeq);
    for (const file of shards) {
      for (const line of readFileSync(join(windowDir, part, file), 'utf8').split('\n')) {
        if (line === '') continue;
        const item = JSON.parse(line) as { id: number; lastUpdatedTime: number };
        versions.push(`${item.id}@${item.lastUpdatedTime}`);
      }
    }
  }
  return versions.sort();
}

describe('mode: incremental, killed mid-window', () => {
  it('the next invocation resumes the same window; changes made meanwhile go to the window after', async () => {
    const sim = await newSimulator({ events: EVENTS, assets: 10, seed: 5, apiKeys: [KEY] });
    const dir = tempDir('incremental-kill');
    const out = join(dir, 'out');
    const file = writeJob(join(dir, 'job.yaml'), {
      baseUrl: sim.baseUrl,
      outDir: out,
      streams: [{ resource: 'events', mode: 'incremental', safetyLag: 0, partitions: 2, limit: 100 }],
      formats: ['ndjson'],
      maxRows: 200,
    });
    const run = (env: Record<string, string> = {}): Promise<Exit> =>
      runCliWith(['run', '--config', file], { cwd: dir, env: { SIM_KEY: KEY, ...env } });
    const checkpoint = () => {
      const path = join(out, '_checkpoint.json');
      const state = parseCheckpoint(readFileSync(path, 'utf8'), path).streams.events;
      if (state === undefined) throw new Error('no events stream in the checkpoint');
      return state;
    };

    const first = await run();
    expect(first.code, describeExit(first)).toBe(0);
    const run1 = checkpoint();

    // A changes after run 1's window closed: run 2 must read it, in 6 partitions' worth of pages.
    const a = Array.from({ length: 1200 }, (_, k) => k * 5); // 0..5995
    const aAt = Date.now();
    sim.update('events', a, aAt);
    // Killed after its second shard commit (the first checkpoint write is the run's start).
    const killed = await run({ BULK_EXTRACT_CRASH_AT: 'after-checkpoint-write:3' });
    expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
    const run2 = checkpoint();
    expect(run2.run).not.toBe(run1.run);
    expect(run2.window?.from).toBe(run1.window?.until);
    expect(Object.values(run2.parts).some((part) => !part.done)).toBe(true);
    expect(Object.values(run2.parts).some((part) => part.rows > 0)).toBe(true);

    // B changes while run 2 is unfinished: after run 2's window, so the run after it reads B.
    const b = Array.from({ length: 300 }, (_, k) => 1 + k * 20); // 1..5981, none of A
    const bAt = Date.now();
    expect(bAt).toBeGreaterThanOrEqual(run2.window?.until ?? Infinity);
    sim.update('events', b, bAt);

    const resumed = await run();
    expect(resumed.code, describeExit(resumed)).toBe(0);
    expect(resumed.stderr).toMatch(/resuming export/);
    const after = checkpoint();
    expect({ run: after.run, window: after.window }).toEqual({ run: run2.run, window: run2.window });
    const idOf = (i: number) => EVENT_ID_BASE + i * EVENT_ID_STRIDE;
    expect(versionsIn(join(out, 'events', `run=${run2.run}`))).toEqual(a.map((i) => `${idOf(i)}@${aAt}`).sort());

    const next = await run();
    expect(next.code, describeExit(next)).toBe(0);
    const run3 = checkpoint();
    expect(run3.window?.from).toBe(run2.window?.until);
    expect(run3.watermark).toBe(run2.window?.until);
    expect(versionsIn(join(out, 'events', `run=${run3.run}`))).toEqual(b.map((i) => `${idOf(i)}@${bAt}`).sort());

    const folders = readdirSync(join(out, 'events')).sort();
    expect(folders).toEqual([run1, run2, run3].map((state) => `run=${state.run}`).sort());
    for (const folder of folders) expect(readdirSync(join(out, 'events', folder))).toContain('_SUCCESS');

    const status = await runCliWith(['status', '--config', file], { cwd: dir, env: { SIM_KEY: KEY } });
    expect(status.code, describeExit(status)).toBe(0);
    const iso = (ms: number | undefined) => new Date(ms ?? Number.NaN).toISOString();
    expect(status.stdout).toContain(
      `  events: incremental, run=${run3.run}, lastUpdatedTime from ${iso(run3.window?.from ?? undefined)} to before ${iso(run3.window?.until)}; watermark ${iso(run3.window?.until)}\n`,
    );
  });
});

describe('mode: full, killed mid-run', () => {
  it('the resumed run reads the snapshot of the first start: items changed since are left out, none repeated', async () => {
    const sim = await newSimulator({ events: EVENTS, assets: 10, seed: 6, apiKeys: [KEY] });
    const dir = tempDir('full-pin-kill');
    const out = join(dir, 'out');
    const file = writeJob(join(dir, 'job.yaml'), {
      baseUrl: sim.baseUrl,
      outDir: out,
      streams: [{ resource: 'events', partitions: 2, limit: 500 }],
      formats: ['ndjson'],
      maxRows: 1000,
    });
    const run = (env: Record<string, string> = {}): Promise<Exit> =>
      runCliWith(['run', '--config', file], { cwd: dir, env: { SIM_KEY: KEY, ...env } });
    const stateOf = () => {
      const path = join(out, '_checkpoint.json');
      return parseCheckpoint(readFileSync(path, 'utf8'), path).streams.events;
    };
    const pinOf = () => stateOf()?.window?.until;

    const killed = await run({ BULK_EXTRACT_CRASH_AT: 'after-checkpoint-write:3' });
    expect(killed.signal, describeExit(killed)).toBe('SIGKILL');
    const pin = pinOf();
    expect(pin).toBeDefined();
    // What the killed run committed (a shard renamed but not checkpointed is a leftover, read again).
    const before = new Set(versionsIn(join(out, 'events'), stateOf()?.parts));
    expect(before.size).toBeGreaterThan(0);
    expect(before.size).toBeLessThan(EVENTS);

    // Every item changes after the pin: what was read keeps its old version, the rest is left to
    // a later (incremental) run, and nothing is read twice.
    const changed = Array.from({ length: EVENTS }, (_, i) => i).filter((i) => i % 3 === 0);
    sim.update('events', changed, Date.now());
    const resumed = await run();
    expect(resumed.code, describeExit(resumed)).toBe(0);
    expect(pinOf()).toBe(pin);

    const idOf = (i: number) => EVENT_ID_BASE + i * EVENT_ID_STRIDE;
    const changedIds = new Set(changed.map(idOf));
    const exported = versionsIn(join(out, 'events'));
    const ids = exported.map((v) => Number(v.split('@')[0]));
    expect(new Set(ids).size).toBe(ids.length);
    expect(exported.every((v) => Number(v.split('@')[1]) < (pin ?? 0))).toBe(true);
    const readBeforeKill = new Set([...before].map((v) => Number(v.split('@')[0])));
    const want = Array.from({ length: EVENTS }, (_, i) => idOf(i))
      .filter((id) => !changedIds.has(id) || readBeforeKill.has(id))
      .sort();
    expect([...ids].sort()).toEqual(want);
  });
});
