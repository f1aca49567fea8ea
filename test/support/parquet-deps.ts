import pLimit from 'p-limit';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { BytesPerRow } from '../../src/sink/parquet/bytes-per-row.js';
import { EncoderPool } from '../../src/sink/parquet/encoder-pool.js';
import type { ParquetWriterDeps } from '../../src/sink/parquet/parquet-writer.js';
import { type Duck, openDuck } from './export-duckdb.js';
import { removeTempDirs } from './export-harness.js';

/**
 * What a shard sink hands its Parquet writers (encoder threads, learned bytes per row, merges), for tests
 * that create writers directly. `encoders.close()` ends the threads.
 */
export function newParquetDeps(): ParquetWriterDeps & { encoders: EncoderPool } {
  return { encoders: new EncoderPool(), bytesPerRow: new BytesPerRow(), merges: pLimit(1) };
}

/**
 * For a test file of Parquet writers read back by DuckDB: the deps its writers share, as those of
 * one sink, and a DuckDB handle (`duck`, open from before the first test to after the last). The
 * file's temp folders are removed after each test.
 */
export function parquetSuite(): { parquet: ParquetWriterDeps & { encoders: EncoderPool }; duck: Duck } {
  const suite = { parquet: newParquetDeps(), duck: undefined as unknown as Duck };
  beforeAll(async () => {
    suite.duck = await openDuck();
  });
  afterAll(async () => {
    suite.duck.close();
    await suite.parquet.encoders.close();
  });
  afterEach(removeTempDirs);
  return suite;
}
