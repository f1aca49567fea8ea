import type { CommittedShard } from '../shard-writer.js';
import { NdjsonWriter } from '../ndjson-writer.js';
import type { PointBatch, PointShardWriter } from './point-batch.js';

const NEWLINE = Buffer.from('\n');

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

  async append(batch: PointBatch): Promise<void> {
    const parts: Buffer[] = [];
    let count = 0;
    for (const series of batch) {
      const { points } = series;
      const externalId = series.externalId === undefined ? '' : `,"externalId":${JSON.stringify(series.externalId)}`;
      const prefix = Buffer.from(`{"id":${series.id}${externalId},`);
      for (let k = 0; k < points.length; k++) {
        const bytes = points.bytes(k);
        // The point's own opening brace gives way to the series' fields.
        const point =
          bytes === undefined
            ? Buffer.from(JSON.stringify(points.value(k)).slice(1))
            : bytes.body.subarray(bytes.start + 1, bytes.end);
        parts.push(prefix, point, NEWLINE);
      }
      count += points.length;
    }
    if (count > 0) await this.lines.appendLines(Buffer.concat(parts), count);
  }

  commit(): Promise<CommittedShard> {
    return this.lines.commit();
  }

  abort(): Promise<void> {
    return this.lines.abort();
  }
}
