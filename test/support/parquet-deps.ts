import { BytesPerRow } from '../../src/sink/parquet/bytes-per-row.js';
import { EncoderPool } from '../../src/sink/parquet/encoder-pool.js';
import type { ParquetWriterDeps } from '../../src/sink/parquet/parquet-writer.js';

/**
 * What a shard sink hands its Parquet writers (encoder threads, learned bytes per row), for tests
 * that create writers directly. `encoders.close()` ends the threads.
 */
export function newParquetDeps(): ParquetWriterDeps & { encoders: EncoderPool } {
  return { encoders: new EncoderPool(), bytesPerRow: new BytesPerRow() };
}
