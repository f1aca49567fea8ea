import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CheckpointError } from '../../src/errors.js';
import {
  type Checkpoint,
  CHECKPOINT_VERSION,
  checkpointText,
  commitPart,
  findDrift,
  isComplete,
  newCheckpoint,
  newStreamState,
  nextWindow,
  type PartState,
  parseCheckpoint,
  partOf,
  restartPart,
} from '../../src/export/state/checkpoint.js';
import { type Manifest, type ManifestFile, newManifest, reconcile } from '../../src/export/state/manifest.js';
import { withDigest, withoutDigest } from '../../src/export/state/state-digest.js';
import type { StreamPlan } from '../../src/export/state/stream-plan.js';
import { type PlanOverrides, pointsStreamPlan, streamPlan } from '../support/streams.js';

const BASE = 'https://acme.example.com/api/v1/projects/acme';
const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:01:00.000Z';
const T2 = '2026-01-01T00:02:00.000Z';

const plan = (overrides: PlanOverrides = {}): StreamPlan =>
  streamPlan({ params: [['limit', '1000'], ['type', 'alarm']], partitions: 3, ...overrides });

describe('newCheckpoint', () => {
  it('starts every partition of every stream at its first page', () => {
    const checkpoint = newCheckpoint(BASE, [plan(), plan({ name: 'assets', resource: 'assets', partitions: 1 })], T0);
    expect(checkpoint).toEqual({
      version: CHECKPOINT_VERSION,
      baseUrl: BASE,
      createdAt: T0,
      updatedAt: T0,
      streams: {
        events: {
          resource: 'events',
          mode: 'full',
          params: plan().params,
          // A full export is pinned at the run's start: a resumed run reads the same snapshot.
          window: { from: null, until: Date.parse(T0) },
          run: null,
          watermark: null,
          partitions: 3,
          formats: ['parquet'],
          schemaVersion: 1,
          parts: {
            1: { cursor: null, nextSeq: 0, rows: 0, done: false, updatedAt: T0 },
            2: { cursor: null, nextSeq: 0, rows: 0, done: false, updatedAt: T0 },
            3: { cursor: null, nextSeq: 0, rows: 0, done: false, updatedAt: T0 },
          },
        },
        assets: {
          resource: 'assets',
          mode: 'full',
          params: plan().params,
          window: { from: null, until: Date.parse(T0) },
          run: null,
          watermark: null,
          partitions: 1,
          formats: ['parquet'],
          schemaVersion: 2,
          parts: { 1: { cursor: null, nextSeq: 0, rows: 0, done: false, updatedAt: T0 } },
        },
      },
    });
  });

  it('round-trips through JSON and parseCheckpoint', () => {
    const checkpoint = commitPart(newCheckpoint(BASE, [plan()], T0), 'events', 2, { cursor: 'c1', rows: 5, shards: 1 }, T1);
    expect(parseCheckpoint(checkpointText(checkpoint), '/x/_checkpoint.json')).toEqual(checkpoint);
  });
});

describe('commitPart / restartPart', () => {
  it('a shard commit advances the cursor, nextSeq and rows of that partition only', () => {
    const before = newCheckpoint(BASE, [plan()], T0);
    const snapshot = structuredClone(before);
    const after = commitPart(before, 'events', 2, { cursor: 'abc', rows: 700, shards: 1 }, T1);
    expect(partOf(after, 'events', 2)).toEqual({ cursor: 'abc', nextSeq: 1, rows: 700, done: false, updatedAt: T1 });
    expect(partOf(after, 'events', 1)).toEqual(partOf(before, 'events', 1));
    expect(partOf(after, 'events', 3)).toEqual(partOf(before, 'events', 3));
    expect(after.updatedAt).toBe(T1);
    expect(after.createdAt).toBe(T0);
    expect(before).toEqual(snapshot);
  });

  it('the last commit (no cursor) marks the partition done with a null cursor', () => {
    let checkpoint = newCheckpoint(BASE, [plan()], T0);
    checkpoint = commitPart(checkpoint, 'events', 1, { cursor: 'c1', rows: 10, shards: 1 }, T1);
    checkpoint = commitPart(checkpoint, 'events', 1, { cursor: undefined, rows: 3, shards: 1 }, T2);
    expect(partOf(checkpoint, 'events', 1)).toEqual({ cursor: null, nextSeq: 2, rows: 13, done: true, updatedAt: T2 });
  });

  it('an empty partition drained with no shard is done with nextSeq 0', () => {
    const checkpoint = commitPart(newCheckpoint(BASE, [plan()], T0), 'events', 3, { cursor: undefined, rows: 0, shards: 0 }, T1);
    expect(partOf(checkpoint, 'events', 3)).toMatchObject({ cursor: null, nextSeq: 0, rows: 0, done: true });
  });

  it('restartPart forgets the progress of one partition', () => {
    let checkpoint = newCheckpoint(BASE, [plan()], T0);
    checkpoint = commitPart(checkpoint, 'events', 1, { cursor: 'c1', rows: 10, shards: 1 }, T1);
    checkpoint = commitPart(checkpoint, 'events', 2, { cursor: 'c2', rows: 20, shards: 1 }, T1);
    const restarted = restartPart(checkpoint, 'events', 1, T2);
    expect(partOf(restarted, 'events', 1)).toEqual({ cursor: null, nextSeq: 0, rows: 0, done: false, updatedAt: T2 });
    expect(partOf(restarted, 'events', 2)).toEqual(partOf(checkpoint, 'events', 2));
    expect(partOf(checkpoint, 'events', 1).rows).toBe(10);
  });

  it('an unknown stream or partition is a CheckpointError naming it', () => {
    const checkpoint = newCheckpoint(BASE, [plan()], T0);
    expect(() => commitPart(checkpoint, 'nope', 1, { cursor: 'x', rows: 1, shards: 1 }, T1)).toThrow(CheckpointError);
    expect(() => commitPart(checkpoint, 'nope', 1, { cursor: 'x', rows: 1, shards: 1 }, T1)).toThrow(/nope/);
    expect(() => commitPart(checkpoint, 'events', 4, { cursor: 'x', rows: 1, shards: 1 }, T1)).toThrow(/partition 4/);
    expect(() => restartPart(checkpoint, 'nope', 1, T1)).toThrow(CheckpointError);
    expect(() => partOf(checkpoint, 'events', 0)).toThrow(CheckpointError);
  });

  it('property: rows = sum of committed rows, nextSeq = shard commits, done only after a commit without cursor', () => {
    const commit = fc.record({
      m: fc.integer({ min: 1, max: 3 }),
      cursor: fc.option(fc.string({ minLength: 1, maxLength: 12 }), { nil: undefined }),
      rows: fc.nat({ max: 100_000 }),
      shards: fc.constantFrom(0, 1),
    });
    fc.assert(
      fc.property(fc.array(commit, { maxLength: 60 }), (commits) => {
        let checkpoint = newCheckpoint(BASE, [plan()], T0);
        for (const c of commits) checkpoint = commitPart(checkpoint, 'events', c.m, c, T1);
        for (let m = 1; m <= 3; m++) {
          const mine = commits.filter((c) => c.m === m);
          const part = partOf(checkpoint, 'events', m);
          expect(part.rows).toBe(mine.reduce((sum, c) => sum + c.rows, 0));
          expect(part.nextSeq).toBe(mine.filter((c) => c.shards === 1).length);
          const last = mine.at(-1);
          expect(part.done).toBe(last !== undefined && last.cursor === undefined);
          expect(part.cursor).toBe(last?.cursor ?? null);
        }
        expect(parseCheckpoint(checkpointText(checkpoint), 'cp.json')).toEqual(checkpoint);
      }),
    );
  });
});

describe('findDrift', () => {
  const saved = newCheckpoint(BASE, [plan()], T0);

  it('no drift for the same settings, or for a stream the checkpoint does not know', () => {
    expect(findDrift(saved, BASE, [plan()])).toEqual([]);
    // A trailing slash is the same project root, either way.
    expect(findDrift(saved, `${BASE}/`, [plan()])).toEqual([]);
    expect(findDrift(newCheckpoint(`${BASE}/`, [plan()], T0), BASE, [plan()])).toEqual([]);
    expect(findDrift(saved, BASE, [plan(), plan({ name: 'other', resource: 'assets', partitions: 5 })])).toEqual([]);
  });

  const cases: [string, StreamPlan, RegExp[]][] = [
    [
      'limit',
      plan({ params: [['limit', '500'], ['type', 'alarm']] }),
      [/stream 'events'/, /limit/, /=1000 in the checkpoint/, /=500 in the config/],
    ],
    [
      'a filter added',
      plan({ params: [['limit', '1000'], ['type', 'alarm'], ['source', 'SAP']] }),
      [/stream 'events'/, /source/, /\(not set\) in the checkpoint/, /=SAP in the config/],
    ],
    [
      'a filter removed',
      plan({ params: [['limit', '1000']] }),
      [/stream 'events'/, /type/, /=alarm in the checkpoint/, /\(not set\) in the config/],
    ],
    [
      'a filter changed',
      plan({ params: [['limit', '1000'], ['type', 'failure']] }),
      [/stream 'events'/, /type/, /=alarm in the checkpoint/, /=failure in the config/],
    ],
    ['partitions', plan({ partitions: 5 }), [/stream 'events'/, /partitions/, /3 in the checkpoint/, /5 in the config/]],
    [
      'formats',
      plan({ formats: ['parquet', 'ndjson'] }),
      [/stream 'events'/, /formats/, /parquet in the checkpoint/, /parquet\+ndjson in the config/],
    ],
    ['resource', plan({ resource: 'assets' }), [/stream 'events'/, /resource/, /events in the checkpoint/, /assets in the config/]],
    ['mode', plan({ mode: 'incremental' }), [/stream 'events'/, /mode/, /full in the checkpoint/, /incremental in the config/]],
  ];

  it.each(cases)('%s: one message naming the stream, the key and both values', (_, changed, patterns) => {
    const drift = findDrift(saved, BASE, [changed]);
    expect(drift).toHaveLength(1);
    for (const pattern of patterns) expect(drift[0]).toMatch(pattern);
  });

  it('baseUrl: a message naming source.baseUrl and both values', () => {
    const other = 'https://other.example.com/api/v1/projects/acme';
    const drift = findDrift(saved, other, [plan()]);
    expect(drift).toHaveLength(1);
    expect(drift[0]).toContain('source.baseUrl');
    expect(drift[0]).toContain(`'${BASE}' in the checkpoint`);
    expect(drift[0]).toContain(`'${other}' in the config`);
  });

  it('several differences give one message each', () => {
    const drift = findDrift(saved, BASE, [plan({ partitions: 4, params: [['limit', '10']], formats: ['ndjson'] })]);
    expect(drift).toHaveLength(4);
    expect(new Set(drift).size).toBe(4);
  });
});

describe('parseCheckpoint', () => {
  const FILE = '/data/out/_checkpoint.json';
  const valid = checkpointText(newCheckpoint(BASE, [plan()], T0));
  /** The valid file changed by `change`, with its digest made again: what the schema alone must refuse. */
  const redigested = (change: (value: Record<string, unknown>) => Record<string, unknown>) =>
    JSON.stringify(withDigest(change(withoutDigest(JSON.parse(valid) as Record<string, unknown>))));

  function failure(text: string): CheckpointError {
    try {
      parseCheckpoint(text, FILE);
    } catch (error) {
      expect(error).toBeInstanceOf(CheckpointError);
      expect(error).toMatchObject({ code: 'E_CHECKPOINT' });
      return error as CheckpointError;
    }
    throw new Error('expected a CheckpointError');
  }

  const cases: [string, string, RegExp][] = [
    ['truncated JSON', valid.slice(0, valid.length / 2), /not valid JSON \(damaged or truncated\)/],
    ['an empty file', '', /not valid JSON \(empty\)/],
    ['not an object', '[1, 2, 3]', /is not a bulk-extract checkpoint \(\(root\)/],
    ['the wrong shape', redigested((value) => ({ ...value, streams: { events: { resource: 'events' } } })), /is not a bulk-extract checkpoint \(streams\.events\./],
    ['a newer version', JSON.stringify({ ...JSON.parse(valid), version: CHECKPOINT_VERSION + 1 }), new RegExp(`newer bulk-extract \\(checkpoint version ${CHECKPOINT_VERSION + 1}, this one reads ${CHECKPOINT_VERSION}\\)`)],
  ];

  it.each(cases)('%s: a CheckpointError naming the file, what is wrong and what to do', (_, text, pattern) => {
    const error = failure(text);
    expect(error.message).toContain(FILE);
    expect(error.message).toMatch(pattern);
    expect(error.message).toMatch(/--fresh/);
    expect(error.message).toMatch(/Move it away|Upgrade bulk-extract/);
  });

  it('each kind of damage has its own message', () => {
    const messages = cases.map(([, text]) => failure(text).message);
    expect(new Set(messages).size).toBe(cases.length);
  });

  it('JSON null and a bare number are not checkpoints either', () => {
    expect(failure('null').message).toMatch(/is not a bulk-extract checkpoint/);
    expect(failure('42').message).toMatch(/is not a bulk-extract checkpoint/);
  });

  it('an unknown key is refused (strict shape)', () => {
    const text = redigested((value) => ({ ...value, extra: 1 }));
    expect(failure(text).message).toMatch(/not a bulk-extract checkpoint/);
  });

  it('a valid file parses to the same checkpoint', () => {
    expect(parseCheckpoint(valid, FILE)).toEqual(withoutDigest(JSON.parse(valid) as Record<string, unknown>));
  });
});

describe('manifest reconcile', () => {
  function file(stream: string, m: number, n: number, seq: number, format: 'parquet' | 'ndjson' = 'parquet'): ManifestFile {
    const ext = format === 'parquet' ? 'parquet' : 'ndjson';
    return {
      path: `${stream}/part=${m}-of-${n}/${String(seq).padStart(6, '0')}.${ext}`,
      stream,
      m,
      n,
      seq,
      format,
      rows: 10,
      bytes: 100,
      sha256: 'ab'.repeat(32),
    };
  }

  function setup(): { checkpoint: Checkpoint; manifest: Manifest } {
    let checkpoint = newCheckpoint(BASE, [plan({ formats: ['parquet', 'ndjson'] })], T0);
    checkpoint = commitPart(checkpoint, 'events', 1, { cursor: 'a', rows: 10, shards: 1 }, T1);
    checkpoint = commitPart(checkpoint, 'events', 1, { cursor: 'b', rows: 10, shards: 1 }, T1);
    checkpoint = commitPart(checkpoint, 'events', 2, { cursor: undefined, rows: 10, shards: 1 }, T1);
    const manifest: Manifest = {
      ...newManifest(BASE, T0),
      files: [
        file('events', 1, 3, 0),
        file('events', 1, 3, 0, 'ndjson'),
        file('events', 1, 3, 1),
        file('events', 1, 3, 2),
        file('events', 1, 3, 2, 'ndjson'),
        file('events', 2, 3, 0),
        file('events', 2, 3, 1),
        file('events', 3, 3, 0),
        file('events', 1, 5, 0),
        file('events', 2, 2, 0),
        file('gone', 1, 3, 0),
      ],
    };
    return { checkpoint, manifest };
  }

  it('keeps only files below each partition\'s nextSeq, of the checkpointed n and of known streams', () => {
    const { checkpoint, manifest } = setup();
    const result = reconcile(manifest, checkpoint);
    expect(result.files.map((f) => f.path)).toEqual([
      'events/part=1-of-3/000000.parquet',
      'events/part=1-of-3/000000.ndjson',
      'events/part=1-of-3/000001.parquet',
      'events/part=2-of-3/000000.parquet',
    ]);
  });

  it('recomputes the stream summary from the checkpoint', () => {
    const { checkpoint, manifest } = setup();
    const result = reconcile(manifest, checkpoint);
    expect(result.streams.events).toEqual({
      resource: 'events',
      key: 'id',
      mode: 'full',
      window: { minLastUpdatedTime: null, maxLastUpdatedTime: Date.parse(T0) - 1 },
      run: null,
      watermark: null,
      partitions: 3,
      formats: ['parquet', 'ndjson'],
      params: plan().params,
      rows: 30,
      files: 4,
      done: false,
      cursors: { 1: 'b', 2: null, 3: null },
    });
    expect(Object.keys(result.streams)).toEqual(['events']);
    expect(manifest.files).toHaveLength(11);
  });
});

describe('windows', () => {
  const incremental = plan({ mode: 'incremental', safetyLagMs: 60_000 });
  const start = Date.parse(T0);

  it('full: pinned at the run\'s start, or at the filter\'s own maxLastUpdatedTime when that is earlier', () => {
    expect(newStreamState(plan(), T0).window).toEqual({ from: null, until: start });
    const bounded = plan({ updatedBetween: { min: 5, max: start - 1000 } });
    expect(newStreamState(bounded, T0).window).toEqual({ from: 5, until: start - 999 });
    const future = plan({ updatedBetween: { min: undefined, max: start + 1000 } });
    expect(newStreamState(future, T0).window).toEqual({ from: null, until: start });
    expect(newStreamState(plan(), T0).run).toBeNull();
  });

  it('incremental: the first run reads up to its start minus the lag, into run=<its start>', () => {
    const state = newStreamState(incremental, T0);
    expect(state).toMatchObject({ mode: 'incremental', window: { from: null, until: start - 60_000 }, watermark: null });
    expect(state.run).toBe('20260101T000000.000Z');
  });

  it('nextWindow: the watermark moves to the completed window\'s end; the new window runs to now minus the lag', () => {
    let done = newStreamState(incremental, T0);
    for (const m of [1, 2, 3]) {
      done = commitPart({ ...newCheckpoint(BASE, [], T0), streams: { events: done } }, 'events', m, { cursor: undefined, rows: 1, shards: 1 }, T0).streams.events ?? done;
    }
    expect(isComplete(done)).toBe(true);
    const next = nextWindow(done, incremental, T2);
    expect(next).toMatchObject({
      window: { from: start - 60_000, until: Date.parse(T2) - 60_000 },
      watermark: start - 60_000,
      run: '20260101T000200.000Z',
    });
    expect(Object.values(next?.parts ?? {}).every((p) => p.cursor === null && p.nextSeq === 0 && !p.done)).toBe(true);
    // Another run at the same instant (the clock not past the last run's start) has no window: no run.
    expect(nextWindow(done, incremental, T0)).toBeUndefined();
  });

  it('datapoints snapshot: each run reads start..end resolved at its own start; an absolute window is read again whole', () => {
    const DAY = 86_400_000;
    const rolling = pointsStreamPlan({ mode: 'snapshot', points: { start: { agoMs: 30 * DAY }, options: {} } });
    let done = newStreamState(rolling, T0);
    expect(done).toMatchObject({ mode: 'snapshot', window: { from: start - 30 * DAY, until: start }, run: '20260101T000000.000Z' });
    for (const m of [1, 2]) {
      done = commitPart({ ...newCheckpoint(BASE, [], T0), streams: { points: done } }, 'points', m, { cursor: undefined, rows: 1, shards: 1 }, T0).streams.points ?? done;
    }
    const next = nextWindow(done, rolling, T2);
    expect(next).toMatchObject({
      window: { from: Date.parse(T2) - 30 * DAY, until: Date.parse(T2) },
      watermark: null,
      run: '20260101T000200.000Z',
    });
    const fresh = (p: PartState) => p.cursor === null && p.nextSeq === 0 && !p.done && p.points === undefined;
    expect(Object.values(next?.parts ?? {}).every(fresh), 'every partition starts again, no series in flight').toBe(true);
    const fixed = pointsStreamPlan({ mode: 'snapshot', points: { start: { at: 1000 }, end: { agoMs: 60_000 }, options: {} } });
    expect(nextWindow(done, fixed, T2)?.window).toEqual({ from: 1000, until: Date.parse(T2) - 60_000 });
    expect(nextWindow(done, rolling, T0), 'a second run at the same instant is no new snapshot').toBeUndefined();
  });

  it('a version 1 checkpoint reads as a full export with no window (its chains keep their params)', () => {
    const v1 = {
      version: 1,
      baseUrl: BASE,
      createdAt: T0,
      updatedAt: T0,
      streams: {
        events: {
          resource: 'events',
          params: [['limit', '1000']],
          partitions: 1,
          formats: ['parquet'],
          parts: { 1: { cursor: 'abc', nextSeq: 2, rows: 20, done: false, updatedAt: T0 } },
        },
      },
    };
    const parsed = parseCheckpoint(JSON.stringify(v1), '/x/_checkpoint.json');
    expect(parsed.version).toBe(CHECKPOINT_VERSION);
    expect(parsed.streams.events).toMatchObject({ mode: 'full', window: null, run: null, watermark: null });
    expect(findDrift(parsed, BASE, [plan({ params: [['limit', '1000']], partitions: 1 })])).toEqual([]);
  });
});
