import type { CommittedShard } from '../shard-writer.js';
import { NdjsonWriter } from '../ndjson-writer.js';
import type { PointBatch, PointList, PointShardWriter, SeriesPoints } from './point-batch.js';

const NEWLINE = 0x0a;

/**
 * Lines are made in one buffer of this size per shard, written whenever it is full and used again:
 * an answer's lines (several MB) then allocate nothing, and the garbage collector has less to do
 * (bench/RESULTS.md, "Datapoints: fewer buffers per answer").
 */
const CHUNK_BYTES = 256 * 1024;

/**
 * Datapoints as NDJSON: one line per point, the point as the platform sent it (its value as sent:
 * `"NaN"` stays a string, a Good status stays absent) with the series' `id` and `externalId`
 * first, and for a stream of data-model series (`nodes`) its node's `instanceSpace` and
 * `instanceExternalId` after them, named as the Parquet columns. Lines come in the order of the
 * answers: each series' points in time order.
 */
export class PointsNdjsonWriter implements PointShardWriter {
  readonly format = 'ndjson';
  private chunk: Buffer | undefined;

  private constructor(
    private readonly lines: NdjsonWriter,
    private readonly nodes: boolean,
  ) {}

  /** `nodes`: the stream's series are data-model nodes (PointsShape.instanceColumns): lines carry their keys. */
  static async create(path: string, gzip: boolean, nodes = false): Promise<PointsNdjsonWriter> {
    return new PointsNdjsonWriter(await NdjsonWriter.create(path, gzip), nodes);
  }

  get rows(): number {
    return this.lines.rows;
  }

  get bytes(): number {
    return this.lines.bytes;
  }

  /** The batch's lines: each the series' prefix, then the point's bytes after its opening brace. */
  async append(batch: PointBatch): Promise<void> {
    const chunk = (this.chunk ??= Buffer.allocUnsafe(CHUNK_BYTES));
    let at = 0;
    let count = 0;
    for (const { prefix, points, texts } of batch.map((series) => lineParts(series, this.nodes))) {
      for (let k = 0; k < points.length; k++) {
        const size = prefix.length + (texts === undefined ? points.end(k) - points.start(k) - 1 : texts[k]!.length) + 1;
        if (at + size > chunk.length) {
          // The chunk is written (and free again) before it takes more; a longer line goes alone.
          if (at > 0) await this.lines.appendLines(chunk.subarray(0, at), count);
          at = 0;
          count = 0;
          if (size > chunk.length) {
            await this.lines.appendLines(lineOf(prefix, points, texts, k, Buffer.allocUnsafe(size)), 1);
            continue;
          }
        }
        at = copyLine(prefix, points, texts, k, chunk, at);
        count++;
      }
    }
    if (at > 0) await this.lines.appendLines(chunk.subarray(0, at), count);
  }

  commit(): Promise<CommittedShard> {
    return this.lines.commit();
  }

  abort(): Promise<void> {
    return this.lines.abort();
  }
}

/**
 * A series' part of the lines: its fields (`{"id":..,"externalId":..,`, and with `nodes` its node's
 * `"instanceSpace":..,"instanceExternalId":..,`, null when it has none), its points, and, for points
 * given as values (an answer that was parsed), each one's JSON text without its opening brace.
 */
function lineParts(
  { id, externalId, instanceId, points }: SeriesPoints,
  nodes: boolean,
): { prefix: Buffer; points: PointList; texts?: Buffer[] } {
  const named = externalId === undefined ? '' : `,"externalId":${JSON.stringify(externalId)}`;
  const node = !nodes
    ? ''
    : `,"instanceSpace":${JSON.stringify(instanceId?.space ?? null)},"instanceExternalId":${JSON.stringify(instanceId?.externalId ?? null)}`;
  const prefix = Buffer.from(`{"id":${id}${named}${node},`);
  if (points.body !== undefined) return { prefix, points };
  const texts = Array.from({ length: points.length }, (_, k) => Buffer.from(JSON.stringify(points.value(k)).slice(1)));
  return { prefix, points, texts };
}

/** Point `k`'s line, alone in `to`. */
function lineOf(prefix: Buffer, points: PointList, texts: Buffer[] | undefined, k: number, to: Buffer): Buffer {
  copyLine(prefix, points, texts, k, to, 0);
  return to;
}

/** Copies point `k`'s line to `to` at `at`; the position after it. */
function copyLine(
  prefix: Buffer,
  points: PointList,
  texts: Buffer[] | undefined,
  k: number,
  to: Buffer,
  at: number,
): number {
  let o = at + prefix.copy(to, at);
  if (texts === undefined) o = copyBytes(points.body!, points.start(k) + 1, points.end(k), to, o);
  else o += texts[k]!.copy(to, o);
  to[o++] = NEWLINE;
  return o;
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
