import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { type AggregatesAsked, type AskedQuery, readAnswer, type SeriesAnswer } from '../../src/export/kinds/datapoints/points-answer.js';
import { readScannedAnswer } from '../../src/export/kinds/datapoints/points-scan.js';
import { BulkExtractError } from '../../src/errors.js';
import { bucketReachMs, pointColumns, type PointsShape } from '../../src/resources/index.js';
import { PointTable } from '../../src/sink/datapoints/point-table.js';
import { PointsNdjsonWriter } from '../../src/sink/datapoints/points-ndjson-writer.js';

/**
 * The two ways an answer of `POST /timeseries/data/list` is read (export/kinds/datapoints/point-requests.ts):
 * from its bytes (readScannedAnswer, which leaves an answer that is not the plain case to
 * JSON.parse and readAnswer) and parsed (JSON.parse, then readAnswer); and what each gives to the
 * writers, for the differential tests of the scan.
 */

const CTX = { method: 'POST', path: '/api/v1/projects/p/timeseries/data/list' } as const;

export type Read = { series: SeriesAnswer[]; unknown: number[] } | { error: string; code: string };

function attempt(read: () => { series: SeriesAnswer[]; unknown: number[] }): Read {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof BulkExtractError)) throw error;
    return { error: error.message, code: error.code };
  }
}

/** Read as the export reads it: from the bytes when the scan takes them, else parsed. */
export function readScanned(body: Buffer, queries: readonly AskedQuery[], aggregates?: AggregatesAsked): Read {
  // The scan names no problem: it reads the answer, or leaves it to JSON.parse and readAnswer.
  return readScannedAnswer(body, queries, aggregates, CTX) ?? readParsed(body, queries, aggregates);
}

export function readParsed(body: Buffer, queries: readonly AskedQuery[], aggregates?: AggregatesAsked): Read {
  return attempt(() => readAnswer(JSON.parse(body.toString('utf8')), queries, aggregates, CTX));
}

/** What a read gives the writers: each series' fields and points (as values), the Parquet rows, the NDJSON lines. */
export async function writtenOf(read: Read, shape: PointsShape) {
  if ('error' in read) return { read };
  const series = read.series.map(({ points, ...fields }) => ({
    ...fields,
    timestamps: Array.from({ length: points.length }, (_, k) => points.timestamp(k)),
    values: Array.from({ length: points.length }, (_, k) => points.value(k)),
  }));
  const table = new PointTable(pointColumns(shape), shape);
  for (const one of read.series) table.add(one);
  const rows = Array.from({ length: table.rows }, (_, row) => [
    table.seriesId(row),
    table.externalId(row),
    table.timestamp(row),
    ...table.valueColumns.map((_, c) => table.value(c, row)),
  ]);
  return { series, unknown: read.unknown, rows, lines: await ndjsonLines(read.series) };
}

/** The lines the NDJSON writer writes for `series`, each parsed. */
async function ndjsonLines(series: readonly SeriesAnswer[]): Promise<unknown[]> {
  const dir = await mkdtemp(join(tmpdir(), 'points-paths-'));
  try {
    const path = join(dir, 'points.ndjson');
    const writer = await PointsNdjsonWriter.create(path, false);
    await writer.append(series);
    if (writer.rows === 0) {
      await writer.abort();
      return [];
    }
    await writer.commit();
    const text = await readFile(path, 'utf8');
    return text.split('\n').slice(0, -1).map((line) => JSON.parse(line) as unknown);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The lines a read's series should make: the series' id and externalId, then the point's fields as
 * the platform sent them; for points given as values, as JSON.stringify writes them (-0 as 0, a
 * number too large for a double as null).
 */
function expectedLines(series: readonly SeriesAnswer[]): unknown[] {
  return series.flatMap(({ id, externalId, points }) =>
    Array.from({ length: points.length }, (_, k) => {
      const line = { id, ...(externalId === undefined ? {} : { externalId }), ...points.value(k) };
      return points.body === undefined ? (JSON.parse(JSON.stringify(line)) as unknown) : line;
    }),
  );
}

/** A stream's shape, and the time zone of its aggregates. */
export type TestShape = PointsShape & { timeZone?: string };

/** The aggregates a stream of `shape` asks for, as its answers are checked (point-requests.ts). */
function aggregatesOf(shape: TestShape): AggregatesAsked | undefined {
  const { aggregates, granularity, timeZone } = shape;
  return aggregates === undefined ? undefined : { names: aggregates, reachMs: bucketReachMs(granularity ?? '', timeZone) };
}

/**
 * Reads `body` both ways and expects the same: the same series (fields, timestamps, points as
 * values), the same Parquet column values, the same error; and NDJSON lines that are the points
 * as received (the bytes of a scanned item; a parsed one's through JSON.stringify). Returns the
 * scanned read.
 */
export async function expectSameReads(
  body: Buffer,
  queries: readonly AskedQuery[],
  shape: TestShape,
): Promise<Read> {
  const scanned = readScanned(body, queries, aggregatesOf(shape));
  const parsed = readParsed(body, queries, aggregatesOf(shape));
  const { lines: scannedLines, ...fromBytes } = await writtenOf(scanned, shape);
  const { lines: parsedLines, ...fromValues } = await writtenOf(parsed, shape);
  expect(fromBytes).toEqual(fromValues);
  if ('series' in scanned && 'series' in parsed) {
    expect(scannedLines).toEqual(expectedLines(scanned.series));
    expect(parsedLines).toEqual(expectedLines(parsed.series));
  }
  return scanned;
}

/** How many of a read's series hold their points as bytes of the answer (the scan took the item). */
export function scannedSeries(read: Read): number {
  return 'series' in read ? read.series.filter(({ points }) => points.body !== undefined).length : 0;
}
