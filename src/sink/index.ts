/**
 * sink/: shard files in Parquet and NDJSON, written durably, named by their sequence number; the
 * types of their Parquet columns as the manifest names them. Nothing here loads apache-arrow: it
 * loads with the first Parquet shard (shard-sink.ts).
 */
export {
  createShardSink,
  type OpenPointShard,
  type OpenShard,
  type ShardFolder,
  type ShardSink,
  type ShardSinkOptions,
  type StageShard,
} from './shard-sink.js';
export type { StreamShape } from './stream-shape.js';
export { shardExtension, shardFileName, shardSeq } from './shard-files.js';
export type { CommittedShard, ShardWriter } from './shard-writer.js';
export { type PointBatch, PointList, type PointValue, type SeriesPoints } from './datapoints/point-batch.js';
export { schemaColumns, typedColumns } from './parquet/schemas.js';
/** What the export's scan of a datapoints answer shares with the points' writers: JSON read where it lies. */
export { ABSENT, PointFields } from './datapoints/point-fields.js';
export {
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  LOWER_F,
  LOWER_T,
  MINUS,
  NINE,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
  sameBytes,
  ZERO,
} from './parquet/json-bytes.js';
