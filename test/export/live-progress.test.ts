import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readStatus } from '../../src/export/inspect/read-status.js';
import { planPartitions } from '../../src/export/plan/partitions.js';
import { LiveProgressFile } from '../../src/export/run/live-progress.js';
import { checkpointText, newCheckpoint, streamOf } from '../../src/export/state/checkpoint.js';
import { progressKeyOf } from '../../src/export/state/live-progress.js';
import { outputAt } from '../../src/export/state/output-target.js';
import type { StreamPlan } from '../../src/export/state/stream-plan.js';
import { streamPlan } from '../support/streams.js';
import { silentLogger } from '../../src/log.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';

afterEach(removeTempDirs);

const STREAM: StreamPlan = streamPlan({ partitions: 3, safetyLagMs: 0 });

/** An output folder with a checkpoint whose partition 1 is done with 700 rows and 2 has 300 committed. */
function setUp() {
  const dir = tempDir();
  const checkpoint = newCheckpoint('https://acme.example.com/api/v1/projects/acme', [STREAM], '2026-01-01T00:00:00.000Z');
  const parts = streamOf(checkpoint, 'events').parts;
  Object.assign(parts['1']!, { rows: 700, nextSeq: 1, done: true });
  Object.assign(parts['2']!, { rows: 300, nextSeq: 1, cursor: 'c2' });
  writeFileSync(join(dir, '_checkpoint.json'), checkpointText(checkpoint));
  const output = outputAt(dir, silentLogger);
  const plans = planPartitions([STREAM], (name) => streamOf(checkpoint, name));
  return { dir, output, checkpoint, plans };
}

describe('progressKeyOf: beside the lock', () => {
  it.each([
    ['.lock', '.progress.json'],
    ['_workers/worker-1-of-3.lock', '_workers/worker-1-of-3.progress.json'],
  ])('%s -> %s', (lock, progress) => expect(progressKeyOf(lock)).toBe(progress));
});

describe('LiveProgressFile', () => {
  it('names the partitions not done with the rows committed, adds the rows read, drops the ended ones, and goes at stop', async () => {
    const { dir, output, checkpoint, plans } = setUp();
    const live = new LiveProgressFile(output.store, '.lock', plans, checkpoint, silentLogger, { everyMs: 3_600_000 });
    const file = join(dir, '.progress.json');
    const parts = () => (JSON.parse(readFileSync(file, 'utf8')) as { parts: unknown }).parts;
    await live.start();
    expect(parts()).toEqual({ 'events/2': { rows: 300 }, 'events/3': { rows: 0 } });
    live.onRows(plans[1]!, 50);
    live.onRows(plans[2]!, 20);
    live.onEnded(plans[2]!);
    await live.flush();
    expect(parts()).toEqual({ 'events/2': { rows: 350 } });
    await live.stop();
    expect(existsSync(file)).toBe(false);
    await output.store.close();
  });

  it('writes the first rows read at once, not at the next tick', async () => {
    const { dir, output, checkpoint, plans } = setUp();
    const live = new LiveProgressFile(output.store, '.lock', plans, checkpoint, silentLogger, { everyMs: 3_600_000 });
    const file = join(dir, '.progress.json');
    const parts = () => (JSON.parse(readFileSync(file, 'utf8')) as { parts: unknown }).parts;
    await live.start();
    live.onRows(plans[2]!, 40);
    await expect.poll(parts).toEqual({ 'events/2': { rows: 300 }, 'events/3': { rows: 40 } });
    // Later rows wait for the tick (or a flush).
    live.onRows(plans[2]!, 5);
    await live.flush();
    expect(parts()).toEqual({ 'events/2': { rows: 300 }, 'events/3': { rows: 45 } });
    await live.stop();
    await output.store.close();
  });

  it('holds each stream\'s figures (rows, rows/s over its writes, totals, series), which status shows while the run holds the lock', async () => {
    const { dir, output, checkpoint, plans } = setUp();
    let at = Date.UTC(2026, 0, 1);
    const figures = { name: 'events', rows: 1000, total: 4000, partitions: 3, done: 1, series: 3, seriesTotal: 12 };
    const live = new LiveProgressFile(output.store, '.lock', plans, checkpoint, silentLogger, {
      everyMs: 3_600_000,
      now: () => at,
      streams: () => [{ ...figures }],
    });
    const file = join(dir, '.progress.json');
    const streams = () => (JSON.parse(readFileSync(file, 'utf8')) as { streams: unknown }).streams;
    await live.start();
    expect(streams(), 'no rate from one write').toEqual({ events: { rows: 1000, total: 4000, series: 3, seriesTotal: 12 } });
    at += 5000;
    figures.rows = 3000;
    live.onRows(plans[1]!, 2000);
    await live.flush();
    expect(streams()).toEqual({ events: { rows: 3000, rowsPerSecond: 400, total: 4000, series: 3, seriesTotal: 12 } });
    // Status reads the figures only while the run that wrote them holds the lock.
    expect((await readStatus(output))?.streams[0]?.running).toBeUndefined();
    await live.stop();
    await output.store.close();
  });

  it('at stop, leaves a progress file that is not its own (another run\'s token)', async () => {
    const { dir, output, checkpoint, plans } = setUp();
    const live = new LiveProgressFile(output.store, '.lock', plans, checkpoint, silentLogger, { everyMs: 3_600_000 });
    await live.start();
    const file = join(dir, '.progress.json');
    const other = { ...(JSON.parse(readFileSync(file, 'utf8')) as object), token: '0123456789abcdef' };
    writeFileSync(file, JSON.stringify(other));
    await live.stop();
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(other);
    await output.store.close();
  });
});

describe('readStatus with a progress file', () => {
  const progress = (pid: number) => ({
    version: 1,
    pid,
    host: hostname(),
    startedAt: '2026-01-01T00:00:00.000Z',
    token: 'fedcba9876543210',
    updatedAt: '2026-01-01T00:00:05.000Z',
    parts: { 'events/1': { rows: 700 }, 'events/2': { rows: 450 }, 'events/3': { rows: 80 } },
  });

  it('a live run holding the lock beside it: its partitions are fetching, with the rows read (a done one stays done)', async () => {
    const { dir, output } = setUp();
    // The parent of this process runs, and is not this process: a live owner.
    const owner = { pid: process.ppid, host: hostname(), startedAt: '2026-01-01T00:00:00.000Z' };
    writeFileSync(join(dir, '.lock'), JSON.stringify(owner));
    writeFileSync(join(dir, '.progress.json'), JSON.stringify(progress(process.ppid)));
    const status = await readStatus(output);
    const parts = status?.parts.map(({ partition, rows, done, live, rowsRead }) => {
      return { partition, rows, done, live, rowsRead };
    });
    expect(parts).toEqual([
      { partition: '1/3', rows: 700, done: true, live: undefined, rowsRead: undefined },
      { partition: '2/3', rows: 300, done: false, live: 'fetching', rowsRead: 450 },
      { partition: '3/3', rows: 0, done: false, live: 'fetching', rowsRead: 80 },
    ]);
    await output.store.close();
  });

  it('its writer gone (no lock, or a lock of another process): stopped, with the checkpoint\'s rows', async () => {
    const { dir, output } = setUp();
    writeFileSync(join(dir, '.progress.json'), JSON.stringify(progress(process.ppid)));
    const gone = await readStatus(output);
    expect(gone?.parts.map((p) => [p.live, p.rowsRead, p.rows])).toEqual([
      [undefined, undefined, 700],
      ['stopped', undefined, 300],
      ['stopped', undefined, 0],
    ]);
    writeFileSync(join(dir, '.lock'), JSON.stringify({ pid: process.ppid, host: hostname(), startedAt: 'x' }));
    writeFileSync(join(dir, '.progress.json'), JSON.stringify(progress(2 ** 22 + 1)));
    const other = await readStatus(output);
    expect(other?.parts.map((p) => p.live)).toEqual([undefined, 'stopped', 'stopped']);
    await output.store.close();
  });

  it.each([
    ['truncated', (text: string) => text.slice(0, 30)],
    ['not a progress file', () => JSON.stringify({ version: 2, parts: [] })],
    ['empty', () => ''],
  ])('a damaged file (%s) is passed over: the checkpoint\'s figures, no failure', async (_name, damage) => {
    const { dir, output } = setUp();
    writeFileSync(join(dir, '.progress.json'), damage(JSON.stringify(progress(process.ppid))));
    const status = await readStatus(output);
    expect(status?.parts.map((p) => [p.live, p.rows])).toEqual([[undefined, 700], [undefined, 300], [undefined, 0]]);
    await output.store.close();
  });
});
