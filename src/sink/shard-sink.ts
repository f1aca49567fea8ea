import pLimit from 'p-limit';
import type { Format, OutputConfig } from '../config/job-schema.js';
import type { Logger } from '../log.js';
import type { PageItems } from '../page/index.js';
import { NdjsonWriter } from './ndjson-writer.js';
import type { PointShardWriter } from './datapoints/point-batch.js';
import { PointsNdjsonWriter } from './datapoints/points-ndjson-writer.js';
import type { PointsParquetWriter } from './datapoints/points-parquet-writer.js';
import { BytesPerRow } from './parquet/bytes-per-row.js';
import { EncoderPool } from './parquet/encoder-pool.js';
import type { ParquetShardWriter, ShardTable } from './parquet/parquet-writer.js';
import { shardExtension, shardFileName } from './shard-files.js';
import type { CommittedShard, ShardWriter } from './shard-writer.js';
import type { StreamShape } from './stream-shape.js';

/** A partition's folder of shards: where (its key in the output), and of which stream. */
export interface ShardFolder {
  dir: string;
  stream: StreamShape;
}

export interface ShardSinkOptions {
  /**
   * Threads that encode Parquet shards, started on first use. Default: one fewer than the CPUs
   * the process may use (the cgroup CPU limit, where lower than os.availableParallelism()), at
   * least 1, at most 4 (defaultEncoderThreads).
   */
  encoderThreads?: number;
  /** Where the default number of encoder threads, and why, is logged (debug, once). */
  logger?: Logger;
}

/**
 * Where the shard file of `key` (a key of the output, e.g. `events/part=1-of-2/000000.parquet`) is
 * written before it is published: a local path whose folder exists (the output store's `stage`).
 */
export type StageShard = (key: string) => Promise<string>;

/** A datapoints shard's writer as the sink opens it: with the key its file is published under. */
export interface OpenPointShard extends PointShardWriter {
  readonly key: string;
}

/** A shard's writer as the sink opens it: with the key its file is published under. */
export interface OpenShard extends ShardWriter {
  readonly key: string;
}

/**
 * Where one export run writes its shards, staged where the output store says. It owns all the run's sink
 * state: the Parquet encoder threads and the bytes per row its Parquet shards turned out to take
 * (to size open shards), so two exports in one process share nothing. Close it once the run's
 * partitions have settled.
 */
export interface ShardSink {
  /** Opens shard `seq` of a partition, one writer per format. A plain function: hand it on unbound. */
  readonly open: (folder: ShardFolder, seq: number) => Promise<OpenShard[]>;
  /** Opens shard `seq` of a datapoints partition, one writer per format. */
  readonly openPoints: (folder: ShardFolder, seq: number) => Promise<OpenPointShard[]>;
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

/** The datapoints' Parquet writer, loaded on first use as the collections' is. */
async function pointsParquetWriter(): Promise<typeof PointsParquetWriter> {
  return (await import('./datapoints/points-parquet-writer.js')).PointsParquetWriter;
}

export function createShardSink(stage: StageShard, output: OutputConfig, options: ShardSinkOptions = {}): ShardSink {
  const encoders = new EncoderPool({ threads: options.encoderThreads, logger: options.logger });
  const parquet = { encoders, bytesPerRow: new BytesPerRow(), merges: pLimit(1) };
  let closed = false;
  /** Where each format's file of shard `seq` is staged: its key in the output, and its local path. */
  const staged = (folder: ShardFolder, seq: number) => {
    if (closed) throw new Error(`The shard sink is closed; shard ${seq} of ${folder.dir} cannot open`);
    return Promise.all(
      folder.stream.formats.map(async (format) => {
        const gzip = format === 'ndjson' && output.ndjson.compression === 'gzip';
        const key = `${folder.dir}/${shardFileName(seq, shardExtension(format, gzip))}`;
        return { format, gzip, key, path: await stage(key) };
      }),
    );
  };
  return {
    open: async (folder, seq) => {
      const { resource } = folder.stream;
      if (resource === 'datapoints') throw new Error(`${folder.dir} holds datapoints: open its shards with openPoints`);
      const table = tableOf(folder.stream);
      const writerOptions = { table: folder.stream.table };
      const files = await staged(folder, seq);
      return Promise.all(
        files.map(async ({ format, gzip, key, path }) => {
          const writer = format === 'ndjson'
            ? await NdjsonWriter.create(path, gzip)
            : await (await parquetWriter()).create(path, table, output.parquet, parquet, writerOptions);
          return new KeyedShard(key, writer);
        }),
      );
    },
    openPoints: async (folder, seq) => {
      const { shape, table } = folder.stream;
      if (shape === undefined) throw new Error(`${folder.dir} holds no datapoints: open its shards with open`);
      const files = await staged(folder, seq);
      return Promise.all(
        files.map(async ({ format, gzip, key, path }) => {
          const writer = format === 'ndjson'
            ? await PointsNdjsonWriter.create(path, gzip, shape.instanceColumns === true)
            : (await pointsParquetWriter()).create(path, shape, output.parquet, parquet, { table });
          return Object.assign(writer, { key });
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

/**
 * What a stream's Parquet shards hold: a collection's items (with its metadata columns), the
 * instances of a view, in the columns its run began with, or a subscription's change rows.
 */
function tableOf(stream: StreamShape): ShardTable {
  const { resource, metadataColumns, instances, changes } = stream;
  if (changes !== undefined) return { changes };
  if (resource === 'instances') {
    if (instances?.columns === undefined) throw new Error(`${stream.name}: the view's columns were not read before its shards open`);
    return { instances: { name: stream.name ?? 'instances', view: instances.view, columns: instances.columns } };
  }
  if (resource === 'datapoints') throw new Error('a datapoints stream opens its shards with openPoints');
  if (resource === 'datapoint-subscription') throw new Error(`${stream.name}: a subscription stream's shards need its changes' columns`);
  return { resource, metadataColumns };
}

/** A writer and the key of its shard. */
class KeyedShard implements OpenShard {
  constructor(
    readonly key: string,
    private readonly writer: ShardWriter,
  ) {}

  get format(): Format {
    return this.writer.format;
  }

  get rows(): number {
    return this.writer.rows;
  }

  get bytes(): number {
    return this.writer.bytes;
  }

  append(items: PageItems | readonly unknown[]): Promise<void> {
    return this.writer.append(items);
  }

  commit(): Promise<CommittedShard> {
    return this.writer.commit();
  }

  abort(): Promise<void> {
    return this.writer.abort();
  }
}
