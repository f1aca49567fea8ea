/** sink/: shard files in Parquet and NDJSON, written durably, named by their sequence number. */
export { type ShardFolder, shardOpener } from './open-shard.js';
export { shardExtension, shardFileName, shardSeq } from './shard-files.js';
export type { CommittedShard, ShardWriter } from './shard-writer.js';
