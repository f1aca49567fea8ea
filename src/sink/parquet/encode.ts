import * as wasm from 'parquet-wasm';
import type { OutputConfig } from '../../config/job-schema.js';
import { readSpill } from './spill.js';

/**
 * How a column is encoded: `delta` (DELTA_BINARY_PACKED, no dictionary), `plain` (no dictionary),
 * or, when not given, parquet-wasm's default: a dictionary, falling back to plain when it grows.
 */
export interface EncodedColumn {
  name: string;
  encoding?: 'delta' | 'plain' | undefined;
}

const CODECS = { zstd: wasm.Compression.ZSTD, snappy: wasm.Compression.SNAPPY, none: wasm.Compression.UNCOMPRESSED };

/** What the encoder needs to turn one spill file into one Parquet file. */
export interface EncodeJob {
  spillPath: string;
  /** The file's columns that are not encoded the default way (a dictionary), by name. */
  columns: readonly EncodedColumn[];
  options: OutputConfig['parquet'];
  /** Rows the spill file must hold; anything else fails the job. */
  rows: number;
}

/**
 * Encodes the Arrow batches of a spill file into one Parquet file with parquet-wasm's streaming
 * writer and hands the file's bytes to `onChunk` in order (one chunk per row group, then the
 * footer). Runs in the encoder thread (encoder-thread.ts).
 *
 * parquet-wasm rules followed here: the writer pulls batches (a push source deadlocks before the
 * first batch); each wasm Table is freed once its batch is taken (the stream owns the batch); the
 * writer properties are built anew for every file.
 */
export async function encodeSpill(job: EncodeJob, onChunk: (chunk: Uint8Array) => void): Promise<void> {
  const records = readSpill(job.spillPath);
  let rows = 0;
  let inputError: unknown;
  const input = new ReadableStream<wasm.RecordBatch>(
    {
      pull: async (controller) => {
        try {
          const next = await records.next();
          if (next.done === true) {
            controller.close();
            return;
          }
          const table = wasm.Table.fromIPCStream(next.value);
          for (const batch of table.recordBatches()) {
            rows += batch.numRows;
            controller.enqueue(batch);
          }
          table.free();
        } catch (error) {
          inputError = error;
          controller.error(error);
        }
      },
      cancel: async () => {
        await records.return(undefined);
      },
    },
    { highWaterMark: 0 },
  );
  try {
    const output = await wasm.transformParquetStream(input, properties(job));
    for await (const chunk of output as AsyncIterable<Uint8Array>) onChunk(chunk);
  } catch (error) {
    // A failed read or an empty file surfaces as parquet-wasm's own error: report the cause.
    throw inputFailure(inputError, rows, job.rows) ?? error;
  }
  // The wasm writer closes a valid, shorter file even when its input failed: check both.
  const failure = inputFailure(inputError, rows, job.rows);
  if (failure !== undefined) throw failure;
}

function inputFailure(error: unknown, rows: number, expected: number): Error | undefined {
  if (error !== undefined) return error instanceof Error ? error : new Error('reading the spill file failed');
  return rows === expected ? undefined : new Error(`the spill file held ${rows} rows, expected ${expected}`);
}

function properties({ columns, options }: EncodeJob): wasm.WriterProperties {
  let builder = new wasm.WriterPropertiesBuilder()
    .setCompression(CODECS[options.compression])
    // Exactly rowGroupRows: the writer cuts groups at this size whatever the batch boundaries.
    .setMaxRowGroupSize(options.rowGroupRows)
    .setCreatedBy('bulk-extract');
  for (const { name, encoding } of columns) {
    if (encoding === undefined) continue;
    builder = builder.setColumnDictionaryEnabled(name, false);
    if (encoding === 'delta') builder = builder.setColumnEncoding(name, wasm.Encoding.DELTA_BINARY_PACKED);
  }
  return builder.build();
}
