import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { type PointBatch, PointList, type PointValue, type SeriesPoints } from '../../src/sink/datapoints/point-batch.js';
import { PointsNdjsonWriter } from '../../src/sink/datapoints/points-ndjson-writer.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';

/**
 * The NDJSON datapoints writer makes its lines in one buffer that it writes whenever it is full and
 * then fills again: lines across the buffer's edges, a line longer than the buffer, many batches
 * and gzip must all give exactly the lines, in order, and no buffer may be filled again before its
 * bytes were taken.
 */
afterEach(removeTempDirs);

/** The buffer's size in points-ndjson-writer.ts, which the batches here must exceed several times. */
const CHUNK_BYTES = 256 * 1024;

/** Points of series `s` lying in one body, as a scan leaves them: each `{...}` between commas. */
function scanned(s: number, count: number, text = ''): PointList {
  const points: string[] = [];
  for (let k = 0; k < count; k++) {
    const value = text === '' ? (s * 1.5 + k / 7).toString() : JSON.stringify(`${text}${k}`);
    points.push(`{"timestamp":${1_600_000_000_000 + k * 1000},"value":${value}}`);
  }
  const body = Buffer.from(`[${points.join(',')}]`);
  const bounds: number[] = [];
  let at = 1;
  for (const point of points) {
    bounds.push(at, at + Buffer.byteLength(point));
    at += Buffer.byteLength(point) + 1;
  }
  return PointList.scanned(body, bounds, points.map((_, k) => 1_600_000_000_000 + k * 1000));
}

function series(id: number, externalId: string | undefined, points: PointList): SeriesPoints {
  return { id, externalId, isString: false, points };
}

function expectedLines(batches: readonly PointBatch[]): string {
  return batches
    .flat()
    .flatMap(({ id, externalId, points }) =>
      Array.from({ length: points.length }, (_, k) => {
        const bytes = points.bytes(k);
        const point = bytes === undefined ? JSON.stringify(points.value(k)) : bytes.body.toString('utf8', bytes.start, bytes.end);
        return `{"id":${id}${externalId === undefined ? '' : `,"externalId":${JSON.stringify(externalId)}`},${point.slice(1)}\n`;
      }),
    )
    .join('');
}

/** Compares line by line, so that a failure shows the first wrong line, not a diff of megabytes. */
function expectSameLines(text: string, expected: string): void {
  const lines = text.split('\n');
  const want = expected.split('\n');
  const first = want.findIndex((line, k) => lines[k] !== line);
  const wrong =
    first === -1 ? undefined : { line: first, got: lines[first]?.slice(0, 200), want: want[first]!.slice(0, 200) };
  expect(wrong).toBeUndefined();
  expect(lines.length).toBe(want.length);
}

async function written(gzip: boolean, batches: readonly PointBatch[]): Promise<{ text: string; rows: number }> {
  const path = join(tempDir('points-ndjson-'), gzip ? 'points.ndjson.gz' : 'points.ndjson');
  const writer = await PointsNdjsonWriter.create(path, gzip);
  for (const batch of batches) await writer.append(batch);
  const committed = await writer.commit();
  const bytes = readFileSync(path);
  return { text: (gzip ? gunzipSync(bytes) : bytes).toString('utf8'), rows: committed.rows };
}

/** Batches of several series each, together many times the buffer, string series among them. */
function batches(): PointBatch[] {
  return Array.from({ length: 3 }, (_, b) =>
    Array.from({ length: 8 }, (_, i) => {
      const s = b * 8 + i;
      const points = s % 3 === 2 ? scanned(s, 1500, `état ${s} 温度 `) : scanned(s, 9000);
      return { id: 1000 + s, externalId: s % 4 === 1 ? undefined : `ts-${s}"q"`, isString: s % 3 === 2, points };
    }),
  );
}

describe('PointsNdjsonWriter', () => {
  for (const gzip of [false, true]) {
    it(`writes every line exactly, across the buffer's edges and batches (${gzip ? 'gzip' : 'plain'})`, async () => {
      const input = batches();
      const expected = expectedLines(input);
      expect(Buffer.byteLength(expected)).toBeGreaterThan(10 * CHUNK_BYTES);
      const { text, rows } = await written(gzip, input);
      expect(rows).toBe(input.flat().reduce((sum, { points }) => sum + points.length, 0));
      expectSameLines(text, expected);
    });

    it(`writes a line longer than its buffer alone, between the others (${gzip ? 'gzip' : 'plain'})`, async () => {
      const long = 'x'.repeat(CHUNK_BYTES + 100);
      const values: PointValue[] = [
        { timestamp: 1, value: 'a' },
        { timestamp: 2, value: long },
        { timestamp: 3, value: 'b' },
      ];
      const input: PointBatch[] = [
        [
          series(1, 'before', scanned(1, 3000)),
          { ...series(2, 'parsed', PointList.of(values)), isString: true },
          { ...series(3, undefined, scanned(3, 2, long)), isString: true },
          series(4, 'after', scanned(4, 10)),
        ],
      ];
      const { text, rows } = await written(gzip, input);
      expect(rows).toBe(3015);
      expectSameLines(text, expectedLines(input));
      expect(text.split('\n').filter((line) => line.length > CHUNK_BYTES)).toHaveLength(3);
    });
  }

  it('an empty batch and series without points write nothing', async () => {
    const path = join(tempDir('points-ndjson-'), 'points.ndjson');
    const writer = await PointsNdjsonWriter.create(path, false);
    await writer.append([]);
    await writer.append([series(1, 'none', PointList.of([]))]);
    expect(writer.rows).toBe(0);
    await writer.append([series(2, undefined, scanned(2, 1))]);
    await writer.commit();
    expect(readFileSync(path, 'utf8')).toBe(expectedLines([[series(2, undefined, scanned(2, 1))]]));
  });

  it('with nodes (a stream of data-model series), each line carries its node\'s key after externalId; null without one', async () => {
    const path = join(tempDir('points-ndjson-'), 'points.ndjson');
    const writer = await PointsNdjsonWriter.create(path, false, true);
    const node = { space: 'sp "a"', externalId: 'CTS-1' };
    await writer.append([
      { ...series(1, 'one', scanned(1, 2)), instanceId: node },
      { ...series(2, undefined, PointList.of([{ timestamp: 5, value: 'x' }])), instanceId: node },
      series(3, 'three', scanned(3, 1)),
    ]);
    await writer.commit();
    const lines = readFileSync(path, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as unknown);
    expect(lines).toEqual([
      { id: 1, externalId: 'one', instanceSpace: 'sp "a"', instanceExternalId: 'CTS-1', timestamp: 1_600_000_000_000, value: 1.5 },
      { id: 1, externalId: 'one', instanceSpace: 'sp "a"', instanceExternalId: 'CTS-1', timestamp: 1_600_000_001_000, value: 1.5 + 1 / 7 },
      { id: 2, instanceSpace: 'sp "a"', instanceExternalId: 'CTS-1', timestamp: 5, value: 'x' },
      { id: 3, externalId: 'three', instanceSpace: null, instanceExternalId: null, timestamp: 1_600_000_000_000, value: 4.5 },
    ]);
  });
});
