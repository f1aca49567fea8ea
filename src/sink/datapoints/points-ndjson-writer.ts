import type { CommittedShard } from '../shard-writer.js';
import { NdjsonWriter } from '../ndjson-writer.js';
import type { PointBatch, PointShardWriter } from './point-batch.js';

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
    let text = '';
    let count = 0;
    for (const series of batch) {
      const prefix = `{"id":${series.id}${series.externalId === undefined ? '' : `,"externalId":${JSON.stringify(series.externalId)}`},`;
      for (const point of series.points) text += `${prefix}${JSON.stringify(point).slice(1)}\n`;
      count += series.points.length;
    }
    if (count > 0) await this.lines.appendLines(Buffer.from(text), count);
  }

  commit(): Promise<CommittedShard> {
    return this.lines.commit();
  }

  abort(): Promise<void> {
    return this.lines.abort();
  }
}
