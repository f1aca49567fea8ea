import { Table, tableToIPC } from 'apache-arrow';
import * as wasm from 'parquet-wasm';
import type { OutputConfig, Resource } from '../../config/job-schema.js';
import { DurableFile } from '../../util/durable-file.js';
import type { CommittedShard, ShardWriter } from '../shard-writer.js';
import { RowGroupBuilder } from './row-group.js';
import { SCHEMAS } from './schemas.js';

const CODECS = { zstd: wasm.Compression.ZSTD, snappy: wasm.Compression.SNAPPY, none: wasm.Compression.UNCOMPRESSED };
const END = Symbol('end');

/** Encoded bytes per row before any file of the resource was written: high, so a first shard errs small. */
const FIRST_GUESS_BYTES_PER_ROW = 100;
/** Encoded bytes per row seen in the last committed shard of each resource. */
const learnedBytesPerRow = new Map<Resource, number>();

/**
 * One Parquet file, row group by row group: rows gather in reusable Arrow columns; each full row
 * group goes through Arrow IPC into parquet-wasm's streaming writer, whose output is appended to
 * the file as it comes. Chosen by measurement (bench/RESULTS.md, "Parquet writer choice").
 *
 * parquet-wasm rules followed here: the writer pulls batches (a push source deadlocks before the
 * first batch); each wasm Table is freed once its batch is taken (the stream owns the batch); the
 * writer properties are built anew for every file; a file whose input failed is never committed,
 * because the wasm writer would still close it as a valid, shorter file.
 */
export class ParquetShardWriter implements ShardWriter {
  readonly format = 'parquet';
  private readonly builder: RowGroupBuilder;
  private count = 0;
  /** Rows handed to the wasm writer; it encodes them in row groups of exactly rowGroupRows. */
  private sent = 0;
  private writing: Promise<void> | undefined;
  /** The batch waiting to be pulled by the wasm writer, and who waits for it to be taken. */
  private slot: { value: wasm.RecordBatch | typeof END; taken: () => void } | undefined;
  private puller: ((value: wasm.RecordBatch | typeof END) => void) | undefined;

  private constructor(
    private readonly file: DurableFile,
    private readonly resource: Resource,
    private readonly options: OutputConfig['parquet'],
  ) {
    // Buffers start small and grow: a shard may hold far fewer rows than a row group.
    this.builder = new RowGroupBuilder(resource, Math.min(options.rowGroupRows + 1000, 4096));
  }

  static async create(path: string, resource: Resource, options: OutputConfig['parquet']): Promise<ParquetShardWriter> {
    return new ParquetShardWriter(await DurableFile.create(path), resource, options);
  }

  get rows(): number {
    return this.count;
  }

  /**
   * The file's size so far, estimated: the bytes written plus the rows not yet encoded (in the
   * builder or buffered in the writer) at the bytes per row seen so far. A Parquet file's size is
   * known only row group by row group, and `shard.maxBytes` needs it page by page.
   */
  get bytes(): number {
    const written = this.file.bytes;
    const encodedRows = Math.floor(this.sent / this.options.rowGroupRows) * this.options.rowGroupRows;
    const perRow =
      encodedRows > 0 && written > 0
        ? written / encodedRows
        : (learnedBytesPerRow.get(this.resource) ?? FIRST_GUESS_BYTES_PER_ROW);
    return Math.round(written + (this.count - encodedRows) * perRow);
  }

  async append(items: readonly unknown[]): Promise<void> {
    this.builder.add(items);
    this.count += items.length;
    // Row groups close at a page boundary, like shards.
    if (this.builder.rows >= this.options.rowGroupRows) await this.flushRowGroup();
  }

  async commit(): Promise<CommittedShard> {
    // parquet-wasm cannot write a file without a row group; the worker never opens an empty shard.
    if (this.count === 0) throw new Error('A Parquet shard needs at least one row; nothing was appended');
    if (this.builder.rows > 0) await this.flushRowGroup();
    await this.offer(END);
    await this.writing;
    const done = await this.file.commit();
    learnedBytesPerRow.set(this.resource, done.bytes / this.count);
    return { ...done, format: 'parquet', rows: this.count };
  }

  async abort(): Promise<void> {
    if (this.writing !== undefined) {
      await Promise.race([this.offer(END), this.writing]).catch(() => undefined);
      await this.writing.catch(() => undefined);
    }
    await this.file.abort();
  }

  private async flushRowGroup(): Promise<void> {
    // The IPC copy is taken before the reused buffers are reset.
    const ipc = tableToIPC(new Table(this.builder.batch()), 'stream');
    this.builder.reset();
    const table = wasm.Table.fromIPCStream(ipc);
    const [batch] = table.recordBatches();
    table.free();
    if (batch === undefined) throw new Error('parquet-wasm returned no record batch for a row group');
    this.sent += batch.numRows;
    this.writing ??= this.startWriter();
    await Promise.race([this.offer(batch), this.writing]);
  }

  /** Hands a batch (or the end) to the wasm writer; resolves when it has taken it. */
  private offer(value: wasm.RecordBatch | typeof END): Promise<void> {
    if (this.writing === undefined) return Promise.resolve();
    return new Promise<void>((taken) => {
      if (this.puller !== undefined) {
        const pull = this.puller;
        this.puller = undefined;
        pull(value);
        taken();
      } else {
        this.slot = { value, taken };
      }
    });
  }

  private next(): Promise<wasm.RecordBatch | typeof END> {
    const slot = this.slot;
    if (slot !== undefined) {
      this.slot = undefined;
      slot.taken();
      return Promise.resolve(slot.value);
    }
    return new Promise((resolve) => {
      this.puller = resolve;
    });
  }

  private async startWriter(): Promise<void> {
    const input = new ReadableStream<wasm.RecordBatch>(
      {
        pull: async (controller) => {
          const value = await this.next();
          if (value === END) controller.close();
          else controller.enqueue(value);
        },
      },
      { highWaterMark: 0 },
    );
    const output = await wasm.transformParquetStream(input, this.properties());
    for await (const chunk of output as AsyncIterable<Uint8Array>) await this.file.write(chunk);
  }

  private properties(): wasm.WriterProperties {
    let builder = new wasm.WriterPropertiesBuilder()
      .setCompression(CODECS[this.options.compression])
      // Exactly rowGroupRows: the writer cuts groups at this size whatever the batch boundaries.
      .setMaxRowGroupSize(this.options.rowGroupRows)
      .setCreatedBy('bulk-extract');
    // Integers and times: delta encoding beats dictionaries on ids and timestamps (smaller, faster).
    for (const spec of SCHEMAS[this.resource]) {
      if (spec.kind === 'int64' || spec.kind === 'timestamp') {
        builder = builder
          .setColumnDictionaryEnabled(spec.name, false)
          .setColumnEncoding(spec.name, wasm.Encoding.DELTA_BINARY_PACKED);
      }
    }
    return builder.build();
  }
}
