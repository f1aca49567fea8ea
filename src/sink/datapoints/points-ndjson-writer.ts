import type { CommittedShard } from '../shard-writer.js';
import { NdjsonWriter } from '../ndjson-writer.js';
import type { PointBatch, PointList, PointShardWriter, SeriesPoints } from './point-batch.js';

const NEWLINE = 0x0a;

/**
 * Datapoints as NDJSON: one line per point, the point as the platform sent it (its value as sent:
 * `"NaN"` stays a string, a Good status stays absent) with the series' `id` and `externalId`
 * first. Lines come in the order of the answers: each series' points in time order.
 */
export class PointsNdjsonWriter implements PointShardWriter {
  readonly format = 'ndjson';

  private constructor(private readonly lines: NdjsonWriter) {}

  static async create(path: string, gzip: boolean): Promise<PointsNdjsonWriter> {
    return new PointsNdjsonWriter(await NdjsonWriter.create(path, gzip));
  }

  get rows(): number {
    return this.lines.rows;
  }

  get bytes(): number {
    return this.lines.bytes;
  }

  /** The batch's lines in one buffer: each the series' prefix, then the point's bytes after its opening brace. */
  async append(batch: PointBatch): Promise<void> {
    const series = batch.map(lineParts);
    let size = 0;
    let count = 0;
    for (const { prefix, points, texts } of series) {
      size += points.length * (prefix.length + 1) + (texts === undefined ? spans(points) : bytesOf(texts));
      count += points.length;
    }
    if (count === 0) return;
    const lines = Buffer.allocUnsafe(size);
    let at = 0;
    for (const { prefix, points, texts } of series) {
      for (let k = 0; k < points.length; k++) {
        at += prefix.copy(lines, at);
        if (texts === undefined) at = copyBytes(points.body!, points.start(k) + 1, points.end(k), lines, at);
        else at += texts[k]!.copy(lines, at);
        lines[at++] = NEWLINE;
      }
    }
    await this.lines.appendLines(lines, count);
  }

  commit(): Promise<CommittedShard> {
    return this.lines.commit();
  }

  abort(): Promise<void> {
    return this.lines.abort();
  }
}

/**
 * A series' part of the lines: its fields (`{"id":..,"externalId":..,`), its points, and, for points
 * given as values (an answer that was parsed), each one's JSON text without its opening brace.
 */
function lineParts({ id, externalId, points }: SeriesPoints): { prefix: Buffer; points: PointList; texts?: Buffer[] } {
  const prefix = Buffer.from(`{"id":${id}${externalId === undefined ? '' : `,"externalId":${JSON.stringify(externalId)}`},`);
  if (points.body !== undefined) return { prefix, points };
  const texts = Array.from({ length: points.length }, (_, k) => Buffer.from(JSON.stringify(points.value(k)).slice(1)));
  return { prefix, points, texts };
}

function bytesOf(texts: readonly Buffer[]): number {
  return texts.reduce((sum, text) => sum + text.length, 0);
}

/** The bytes of scanned points, each without its opening brace. */
function spans(points: PointList): number {
  let bytes = 0;
  for (let k = 0; k < points.length; k++) bytes += points.end(k) - points.start(k) - 1;
  return bytes;
}

/**
 * Copies [start, end) of `from` to `to` at `at`; the position after it. A loop, as a point is a few
 * dozen bytes: Buffer.copy and subarray cost more per call than the copy itself.
 */
function copyBytes(from: Buffer, start: number, end: number, to: Buffer, at: number): number {
  let o = at;
  for (let i = start; i < end; i++) to[o++] = from[i]!;
  return o;
}
