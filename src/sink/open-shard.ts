import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Format, OutputConfig, Resource } from '../config/job-schema.js';
import { NdjsonWriter } from './ndjson-writer.js';
import { ParquetShardWriter } from './parquet/parquet-writer.js';
import { shardExtension, shardFileName } from './shard-files.js';
import type { ShardWriter } from './shard-writer.js';

/** A partition's folder of shards: where (relative to the output folder), what, in which formats. */
export interface ShardFolder {
  dir: string;
  resource: Resource;
  formats: readonly Format[];
}

/** Opens shard `seq` of a partition in every format the stream writes. */
export function shardOpener(outDir: string, output: OutputConfig) {
  return async (folder: ShardFolder, seq: number): Promise<ShardWriter[]> => {
    const dir = join(outDir, folder.dir);
    await mkdir(dir, { recursive: true });
    return Promise.all(
      folder.formats.map((format) => {
        const gzip = format === 'ndjson' && output.ndjson.compression === 'gzip';
        const path = join(dir, shardFileName(seq, shardExtension(format, gzip)));
        return format === 'ndjson'
          ? NdjsonWriter.create(path, gzip)
          : ParquetShardWriter.create(path, folder.resource, output.parquet);
      }),
    );
  };
}
