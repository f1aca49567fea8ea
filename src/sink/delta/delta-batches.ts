import type { RecordBatch, Schema } from 'apache-arrow';
import { deltaDataSchema, toDeltaBatch } from './schema.js';
import { DeltaStatsCollector, deltaStatsJson } from './stats.js';

/**
 * The batches of one Delta data file on their way to its spill file: each converted to the Delta
 * data schema (timestamps in microseconds, as the protocol wants them) and counted into the file's
 * stats as it passes, so that the shard commits with its `add` stats without reading its file back.
 * A Parquet shard writer holds one when its stream is a Delta table, none otherwise.
 */
export class DeltaBatches {
  private readonly collector: DeltaStatsCollector;

  /** `schema`: the Arrow schema of the writer's own batches (timestamps in milliseconds). */
  constructor(schema: Schema) {
    this.collector = new DeltaStatsCollector(deltaDataSchema(schema));
  }

  /**
   * `batch` as the data file holds it, its rows counted into the stats. Columns without timestamps
   * are `batch`'s own, not copies: the result is valid as long as `batch` is.
   */
  convert(batch: RecordBatch): RecordBatch {
    const converted = toDeltaBatch(batch);
    this.collector.add(converted);
    return converted;
  }

  /** The stats of every batch converted so far, as the `stats` of the file's `add` action. */
  statsJson(): string {
    return deltaStatsJson(this.collector.stats());
  }
}
