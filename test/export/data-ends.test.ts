import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dataEndOf, readDataEnds } from '../../src/export/inspect/data-ends.js';
import { type Checkpoint, checkpointText, newCheckpoint, newStreamState, nextWindow } from '../../src/export/state/checkpoint.js';
import type { StreamState } from '../../src/export/state/checkpoint.js';
import { outputAt } from '../../src/export/state/output-target.js';
import type { StreamPlan } from '../../src/export/state/stream-plan.js';
import { type PlanOverrides, streamPlan } from '../support/streams.js';
import { silentLogger } from '../../src/log.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';

afterEach(removeTempDirs);

const BASE = 'https://acme.example.com/api/v1/projects/acme';
const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T01:00:00.000Z';
const LAG = 300_000;

const plan = (overrides: PlanOverrides = {}): StreamPlan =>
  streamPlan({ partitions: 2, mode: 'incremental', safetyLagMs: LAG, ...overrides });

/** `state` with every partition read to its end. */
function completed(state: StreamState): StreamState {
  const parts = Object.entries(state.parts).map(([m, part]) => [m, { ...part, cursor: null, done: true }]);
  return { ...state, parts: Object.fromEntries(parts) };
}

describe('dataEndOf: the end of the last completed window', () => {
  const incremental = plan();
  const first = newStreamState(incremental, T0);
  const second = nextWindow(completed(first), incremental, T1)!;

  it.each([
    ['incremental, its first window not complete: none yet', first, undefined, undefined],
    ['incremental, its first window complete: its end (the run\'s start minus the lag)', completed(first), undefined, Date.parse(T0) - LAG],
    ['incremental, the next window going on: the watermark, the end of the one before', second, undefined, Date.parse(T0) - LAG],
    ['incremental, the next window complete: its end', completed(second), undefined, Date.parse(T1) - LAG],
    ['instances incremental (no lag): the start of the last completed run', completed(newStreamState(plan({ resource: 'instances', safetyLagMs: 0 }), T0)), undefined, Date.parse(T0)],
    ['full, complete: none (a full stream has no windows)', completed(newStreamState(plan({ mode: 'full' }), T0)), undefined, undefined],
    ['snapshot: the start of the run _LATEST names', newStreamState(plan({ mode: 'snapshot' }), T1), 'run=20260101T000000.000Z\n', Date.parse(T0)],
    ['snapshot, none sealed yet: none', completed(newStreamState(plan({ mode: 'snapshot' }), T0)), undefined, undefined],
    ['snapshot, a _LATEST that names no run: none', newStreamState(plan({ mode: 'snapshot' }), T0), 'run=yesterday\n', undefined],
  ])('%s', (_name, state, latest, want) => {
    expect(dataEndOf(state, latest)).toBe(want);
  });
});

describe('readDataEnds: from an output folder', () => {
  it('no checkpoint: none; then each incremental and snapshot stream\'s end, from the checkpoint and _LATEST', async () => {
    const dir = tempDir();
    const output = outputAt(dir, silentLogger);
    expect(await readDataEnds(output)).toEqual(new Map());
    const streams = [plan(), plan({ name: 'assets', resource: 'assets', mode: 'full' }), plan({ name: 'files', resource: 'files', mode: 'snapshot' })];
    const checkpoint: Checkpoint = newCheckpoint(BASE, streams, T1);
    checkpoint.streams.events = completed(checkpoint.streams.events!);
    checkpoint.streams.assets = completed(checkpoint.streams.assets!);
    writeFileSync(join(dir, '_checkpoint.json'), checkpointText(checkpoint));
    mkdirSync(join(dir, 'files'));
    writeFileSync(join(dir, 'files', '_LATEST'), 'run=20260101T000000.000Z\n');
    expect(await readDataEnds(output)).toEqual(new Map([['events', Date.parse(T1) - LAG], ['files', Date.parse(T0)]]));
    await output.store.close();
  });
});
