import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readStatus } from '../../src/export/inspect/read-status.js';
import { type Checkpoint, checkpointText, newCheckpoint, nextWindow, type StreamState } from '../../src/export/state/checkpoint.js';
import { outputAt } from '../../src/export/state/output-target.js';
import type { StreamPlan } from '../../src/export/state/stream-plan.js';
import { type PlanOverrides, streamPlan } from '../support/streams.js';
import { silentLogger } from '../../src/log.js';
import { runCli } from '../support/cli.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';

afterEach(removeTempDirs);

const BASE = 'https://acme.example.com/api/v1/projects/acme';
const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T01:00:00.000Z';
const LAG = 300_000;

const plan = (name: string, overrides: PlanOverrides = {}): StreamPlan =>
  streamPlan({ name, partitions: 2, mode: 'incremental', safetyLagMs: LAG, ...overrides });

const STREAMS = [
  plan('events'),
  plan('points', { resource: 'datapoints', points: { ids: [1], start: { at: 0 }, options: {} } }),
  plan('nodes', { resource: 'instances', safetyLagMs: 0 }),
  plan('assets', { resource: 'assets', mode: 'full' }),
];

function completed(state: StreamState): StreamState {
  const parts = Object.entries(state.parts).map(([m, part]) => [m, { ...part, cursor: null, done: true }]);
  return { ...state, parts: Object.fromEntries(parts) };
}

/** Every stream of `checkpoint` through `step`. */
function each(checkpoint: Checkpoint, step: (state: StreamState, stream: StreamPlan) => StreamState): Checkpoint {
  const streams = Object.fromEntries(STREAMS.map((s) => [s.name, step(checkpoint.streams[s.name]!, s)]));
  return { ...checkpoint, streams };
}

function outputOf(checkpoint: Checkpoint): string {
  const dir = tempDir();
  writeFileSync(join(dir, '_checkpoint.json'), checkpointText(checkpoint));
  return dir;
}

async function watermarks(checkpoint: Checkpoint): Promise<Record<string, number | null>> {
  const dir = outputOf(checkpoint);
  const output = outputAt(dir, silentLogger);
  try {
    const status = await readStatus(output);
    return Object.fromEntries((status?.streams ?? []).map((s) => [s.stream, s.watermark]));
  } finally {
    await output.store.close();
  }
}

describe('status: the watermark of an incremental stream is the end of its last completed window', () => {
  const first = newCheckpoint(BASE, STREAMS, T0);
  const firstDone = each(first, completed);
  const second = each(firstDone, (state, stream) => nextWindow(state, stream, T1) ?? state);
  const secondDone = each(second, completed);

  it('the first window going on: none yet', async () => {
    expect(await watermarks(first)).toEqual({ events: null, points: null, nodes: null, assets: null });
  });

  it('the first window complete: its end (collections and datapoints: the run\'s start minus the lag; instances: the run\'s start)', async () => {
    const end = Date.parse(T0) - LAG;
    expect(await watermarks(firstDone)).toEqual({ events: end, points: end, nodes: Date.parse(T0), assets: null });
  });

  it('the next window going on: still the end of the first; once complete, its own end, not its start', async () => {
    const firstEnd = Date.parse(T0) - LAG;
    const going = { events: firstEnd, points: firstEnd, nodes: Date.parse(T0), assets: null };
    expect(await watermarks(second)).toEqual(going);
    const end = Date.parse(T1) - LAG;
    expect(await watermarks(secondDone)).toEqual({ events: end, points: end, nodes: Date.parse(T1), assets: null });
  });

  it('status prints it on each incremental stream\'s line', async () => {
    const done = await runCli(['status', '--out', outputOf(secondDone), '--runs', '0']);
    expect(done.code, done.stderr).toBe(0);
    const line = (name: string) => done.stdout.split('\n').find((l) => l.startsWith(`  ${name}: `)) ?? '';
    const iso = (ms: number) => new Date(ms).toISOString();
    expect(line('events')).toMatch(new RegExp(`^  events: incremental, .*; watermark ${iso(Date.parse(T1) - LAG)}$`));
    expect(line('points')).toMatch(new RegExp(`; watermark ${iso(Date.parse(T1) - LAG)}$`));
    expect(line('nodes')).toMatch(new RegExp(`; watermark ${iso(Date.parse(T1))}$`));
    expect(line('assets')).not.toContain('watermark');
  });
});
