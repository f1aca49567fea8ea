import { describe, expect, it } from 'vitest';
import { CheckpointError } from '../../src/errors.js';
import {
  type Checkpoint,
  CHECKPOINT_VERSION,
  checkpointText,
  commitPart,
  newCheckpoint,
  parseCheckpoint,
} from '../../src/export/state/checkpoint.js';
import { canonicalJson, digestOf, withDigest, withoutDigest } from '../../src/export/state/state-digest.js';
import { pointsStreamPlan } from '../support/streams.js';

/**
 * The checkpoint's digest (state-digest.ts): its one writer adds it, its one reader checks it, and
 * it depends on the content only (canonical JSON), so a file reformatted by a JSON tool still matches
 * while any change of a value does not.
 */
const BASE = 'https://acme.example.com/api/v1/projects/acme';
const T0 = '2026-01-01T00:00:00.000Z';
const FILE = '/data/out/_checkpoint.json';

const POINTS = pointsStreamPlan();

/** A datapoints checkpoint with series in flight, as a commit leaves it. */
function written(): Checkpoint {
  const series = [{ id: 7, after: 1_000 }, { id: 8, after: null }];
  const points = { listing: null, listed: true, series, listedSeries: 2, unknown: [] };
  return commitPart(newCheckpoint(BASE, [POINTS], T0), 'points', 1, { cursor: undefined, rows: 10, shards: 1, points }, T0);
}

type Json = Record<string, unknown>;
interface PointsJson {
  window: { until: number };
  parts: Record<string, { points: { series: { after: number | null }[] } }>;
}

/** The written file's JSON changed by hand (the digest left as it was). */
function edited(change: (value: Json & { streams: { points: PointsJson } }) => void): string {
  const value = JSON.parse(checkpointText(written())) as Json & { streams: { points: PointsJson } };
  change(value);
  return JSON.stringify(value, null, 2);
}

function refusal(text: string): string {
  try {
    parseCheckpoint(text, FILE);
  } catch (error) {
    expect(error).toBeInstanceOf(CheckpointError);
    expect(error).toMatchObject({ code: 'E_CHECKPOINT' });
    return (error as CheckpointError).message;
  }
  throw new Error('expected a CheckpointError');
}

/** Every object's keys in reverse order, recursively: the same content, written otherwise. */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).reverse().map(([key, inner]) => [key, reversed(inner)]));
}

describe('the checkpoint\'s digest', () => {
  it('is written last, of the content in canonical JSON; the file reads back to the same checkpoint', () => {
    const checkpoint = written();
    const value = JSON.parse(checkpointText(checkpoint)) as Json;
    expect(value.version).toBe(CHECKPOINT_VERSION);
    expect(Object.keys(value).at(-1)).toBe('digest');
    expect(value.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(value.digest).toBe(digestOf(checkpoint));
    expect(parseCheckpoint(checkpointText(checkpoint), FILE)).toEqual(checkpoint);
  });

  it('depends on the content only: keys in another order, other whitespace, still match', () => {
    const value = JSON.parse(checkpointText(written())) as Json;
    for (const text of [JSON.stringify(reversed(value)), JSON.stringify(value), JSON.stringify(value, null, '\t')]) {
      expect(parseCheckpoint(text, FILE)).toEqual(written());
    }
  });

  it('canonical JSON: keys sorted at every level (integer-like first), no whitespace, undefined members left out', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 'x', c: undefined }, null, 2.5], é: true, Z: -0 })).toBe('{"Z":0,"a":[{"d":"x"},null,2.5],"b":1,"é":true}');
    expect(canonicalJson(JSON.parse('{"b":{"10":1,"9":2,"x":3},"__proto__":{"a":1}}'))).toBe('{"__proto__":{"a":1},"b":{"9":2,"10":1,"x":3}}');
    expect(digestOf({ a: 1, b: [1, 2] })).toBe(digestOf({ b: [1, 2], a: 1 }));
    expect(digestOf({ a: 1, b: [1, 2] })).not.toBe(digestOf({ a: 1, b: [2, 1] }));
  });

  const edits: [string, string][] = [
    ['a series\' `after` moved forward', edited((v) => { v.streams.points.parts['1']!.points.series[0]!.after = 2_000; })],
    ['a series left out', edited((v) => { v.streams.points.parts['1']!.points.series.splice(0, 1); })],
    ['the window\'s end lowered', edited((v) => { v.streams.points.window.until -= 86_400_000; })],
    ['`listed` set to false', edited((v) => { (v.streams.points.parts['1']!.points as unknown as Json).listed = false; })],
    ['a value of the same length', edited((v) => { v.createdAt = '2026-01-01T00:00:00.001Z'; })],
    ['the digest itself damaged', edited((v) => { v.digest = `sha256:${'0'.repeat(64)}`; })],
    ['a digest that is no digest', edited((v) => { v.digest = 'sha256:xyz'; })],
  ];

  it.each(edits)('%s: refused, naming the file and what to do', (_, text) => {
    expect(refusal(text)).toBe(
      `${FILE} does not match its digest: it was changed after bulk-extract wrote it (edited, or damaged), and resuming from it could lose or repeat rows. Restore it as it was, or run with --fresh to start over.`,
    );
  });

  it('removed from a checkpoint of version 6: refused (its version says it had one)', () => {
    const text = edited((v) => {
      delete v.digest;
    });
    expect(refusal(text)).toMatch(
      new RegExp(`^${FILE} has no digest, which every checkpoint of version 6 on carries, .* Restore it as it was, or run with --fresh to start over\\.$`),
    );
  });

  it('a checkpoint of version 5 (no digest) is taken: an export begun by an earlier version goes on', () => {
    const text = JSON.stringify({ ...written(), version: 5 });
    expect(parseCheckpoint(text, FILE)).toEqual(written());
  });

  it('a digest made again does not pass what bulk-extract never writes (impossibleState)', () => {
    const value = withoutDigest(JSON.parse(edited((v) => {
      (v.streams.points.parts['1']!.points as unknown as Json).listed = false;
    })) as Json);
    expect(refusal(JSON.stringify(withDigest(value)))).toContain(
      `${FILE} holds what bulk-extract never writes (streams.points.parts.1.points.listed: false with no listing cursor`,
    );
  });
});
