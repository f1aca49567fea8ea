/** sink/: shard files in Parquet and NDJSON, written durably, named by their sequence number. */
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
