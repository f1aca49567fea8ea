import { join } from 'node:path';
import type { Format, OutputConfig, Resource } from '../config/job-schema.js';
import { realFolder } from '../util/real-folder.js';
import { NdjsonWriter } from './ndjson-writer.js';
import { BytesPerRow } from './parquet/bytes-per-row.js';
import { EncoderPool } from './parquet/encoder-pool.js';
import type { ParquetShardWriter } from './parquet/parquet-writer.js';
import { shardExtension, shardFileName } from './shard-files.js';
import type { ShardWriter } from './shard-writer.js';

/** What a stream's shards hold, in which formats: declared once, here; a stream's plan is one. */
export interface StreamShape {
  resource: Resource;
  formats: readonly Format[];
  /** Metadata keys the Parquet shards also hold as `metadata_<key>` columns. */
  metadataColumns?: readonly string[] | undefined;
}

/** A partition's folder of shards: where (relative to the output folder), and of which stream. */
export interface ShardFolder {
  dir: string;
  stream: StreamShape;
}

export interface ShardSinkOptions {
  /**
   * Threads that encode Parquet shards, started on first use. Default: one fewer than the
   * available cores, at least 1, at most 4 (defaultEncoderThreads).
   */
  encoderThreads?: number;
}

/**
 * Where one export run writes its shards, under one output folder. It owns all the run's sink
 * state: the Parquet encoder threads and the bytes per row its Parquet shards turned out to take
 * (to size open shards), so two exports in one process share nothing. Close it once the run's
 * partitions have settled.
 */
export interface ShardSink {
  /** Opens shard `seq` of a partition, one writer per format. A plain function: hand it on unbound. */
  readonly open: (folder: ShardFolder, seq: number) => Promise<ShardWriter[]>;
  /** Parquet encoder threads running now: 0 before the first Parquet commit and after close(). */
  readonly encoderThreads: number;
  /** Ends the encoder threads; a shard still encoding then fails, and no shard opens any more. */
  close(): Promise<void>;
}

/**
 * The Parquet writer, loaded on first use: apache-arrow and its columns take about 20 MB of memory
 * that an NDJSON-only export never needs.
 */
async function parquetWriter(): Promise<typeof ParquetShardWriter> {
  return (await import('./parquet/parquet-writer.js')).ParquetShardWriter;
}

export function createShardSink(outDir: string, output: OutputConfig, options: ShardSinkOptions = {}): ShardSink {
  const encoders = new EncoderPool(options.encoderThreads);
  const parquet = { encoders, bytesPerRow: new BytesPerRow() };
  let closed = false;
  return {
    open: async (folder, seq) => {
      if (closed) throw new Error(`The shard sink of ${outDir} is closed; shard ${seq} of ${folder.dir} cannot open`);
      // Created one folder at a time, never through a link inside the output (realFolder).
      await realFolder(outDir, folder.dir, true);
      const dir = join(outDir, folder.dir);
      return Promise.all(
        folder.stream.formats.map((format) => {
          const gzip = format === 'ndjson' && output.ndjson.compression === 'gzip';
          const path = join(dir, shardFileName(seq, shardExtension(format, gzip)));
          return format === 'ndjson'
            ? NdjsonWriter.create(path, gzip)
            : parquetWriter().then((writer) => writer.create(path, folder.stream, output.parquet, parquet));
        }),
      );
    },
    get encoderThreads() {
      return encoders.threads;
    },
    close: async () => {
      closed = true;
      await encoders.close();
    },
  };
}
