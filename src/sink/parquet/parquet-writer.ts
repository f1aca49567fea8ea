import { type RecordBatch, type Schema, Table, tableToIPC } from 'apache-arrow';
import type { LimitFunction } from 'p-limit';
import type { OutputConfig, Resource, TableKind } from '../../config/job-schema.js';
import { collectionEncodings } from '../collections/collection-encodings.js';
import { RowGroupBuilder } from '../collections/row-group.js';
import { type InstanceTable, instanceEncodings } from '../instances/instance-table.js';
import { InstanceRowBuilder } from '../instances/instance-rows.js';
import { ChangeRowBuilder, changeEncodings } from '../changes/change-table.js';
import { crashPoint } from '../../util/crash-point.js';
import { DurableFile, TEMP_SUFFIX } from '../../util/durable-file.js';
import { PageItems } from '../../page/index.js';
import { DeltaBatches } from '../delta/index.js';
import type { CommittedShard, ShardWriter } from '../shard-writer.js';
import type { StreamShape } from '../stream-shape.js';
import type { BytesPerRow } from './bytes-per-row.js';
import type { EncodedColumn } from './encode.js';
import type { EncoderPool } from './encoder-pool.js';
import { SpillFile } from './spill.js';
import { freeOwned, markOwned } from '../../util/owned-memory.js';

/** Rows gathered in memory before they go to the spill file as one Arrow batch (about 1.5 MB of events). */
export const SPILL_ROWS = 4096;
/** Bytes of items (as received) gathered before they go to the spill file, whatever their rows. */
export const SPILL_BYTES = 4 * 1024 * 1024;
/**
 * The most bytes of rows (as spilled) in one row group: rows with large metadata make row groups of
 * fewer than `rowGroupRows` rows, so that the encoder never holds more than about this much.
 */
export const ROW_GROUP_BYTES = 64 * 1024 * 1024;

/** What the Parquet writers of one sink share: its encoder threads, what it learned of file sizes, its merges. */
export interface ParquetWriterDeps {
  encoders: Pick<EncoderPool, 'encode'>;
  bytesPerRow: BytesPerRow;
  /**
   * The merges of datapoints shards' sorted runs into their spill files, one at a time: each holds
   * about 10 MB of buffers while it runs, and the partitions of a stream fill their shards at about
   * the same time, so that merged together they added about 100 MB to the peak, on top of the
   * answers in flight (bench/RESULTS.md, issue 46). The merge is the main thread's work either way.
   */
  merges: LimitFunction;
}

/**
 * What a shard holds: a collection's items, with the stream's `metadata_<key>` columns if any; the
 * instances of a data-model view, in its columns; or a subscription's change rows.
 */
export type ShardTable =
  | Resource |
  (Pick<StreamShape, 'metadataColumns'> & { resource: Resource }) |
  { instances: InstanceTable } |
  { changes: { includeStatus: boolean } };

/**
 * What fills a shard's batches: RowGroupBuilder for collections, InstanceRowBuilder for instances,
 * ChangeRowBuilder for a subscription's changes.
 */
interface RowSource {
  readonly schema: Schema;
  readonly rows: number;
  addItem(page: PageItems, i: number): void;
  batch(): RecordBatch;
  reset(): void;
}

/** A shard's rows source, its columns' encodings, and the name its bytes per row are learned under. */
function tableOf(table: ShardTable): { builder: RowSource; encodings: EncodedColumn[]; sizeKey: string } {
  // Room for one batch; the buffers grow if a page carries it past SPILL_ROWS.
  if (typeof table === 'object' && 'instances' in table) {
    const { view, columns, name } = table.instances;
    const builder = new InstanceRowBuilder(view, columns, SPILL_ROWS);
    return { builder, encodings: instanceEncodings(columns), sizeKey: name };
  }
  if (typeof table === 'object' && 'changes' in table) {
    const { includeStatus } = table.changes;
    const builder = new ChangeRowBuilder(includeStatus, SPILL_ROWS);
    return { builder, encodings: changeEncodings(includeStatus), sizeKey: 'datapoint changes' };
  }
  const resource = typeof table === 'string' ? table : table.resource;
  const metadataColumns = typeof table === 'string' ? [] : (table.metadataColumns ?? []);
  return {
    builder: new RowGroupBuilder(resource, SPILL_ROWS, metadataColumns),
    encodings: collectionEncodings(resource),
    sizeKey: resource,
  };
}

/** What a collection's or an instance view's Parquet shard's writer may be told besides the output's settings. */
export interface ParquetShardOptions {
  /** The stream's table (StreamShape.table): 'delta' writes the shard as a Delta data file. Default 'files'. */
  table?: TableKind | undefined;
}

/**
 * One Parquet file. Rows gather in reusable Arrow columns; every SPILL_ROWS rows the batch goes,
 * as Arrow IPC, to a spill file beside the shard. On commit an encoder thread (encoder-pool.ts)
 * turns the spill file into the Parquet file, row groups of exactly `rowGroupRows`, and the main
 * thread writes its bytes through a DurableFile (sha256, fsync, rename). A Delta table's data file
 * (ParquetShardOptions.table 'delta') spills its batches converted (DeltaBatches) and commits
 * with their stats.
 *
 * Why a spill file: every open parquet-wasm writer holds 10-20 MB of wasm memory whatever its
 * rows, plus its row group in progress, so ten partitions writing at once cost 600+ MB. With the
 * spill file, memory holds one batch per open shard and one writer per encoder thread; the price
 * is temporary disk of about the shard's NDJSON size (bench/RESULTS.md, "Levers kept").
 */
export class ParquetShardWriter implements ShardWriter {
  readonly format = 'parquet';
  private readonly builder: RowSource;
  private readonly encodings: EncodedColumn[];
  /** What the sink learns this shard's bytes per row under (the collection, or the instance stream). */
  private readonly sizeKey: string;
  private count = 0;
  /** Bytes (as received) of the items in the batch being gathered. */
  private batchBytes = 0;
  /** A Delta table's data file: converts each batch before it is spilled and gathers the file's stats. */
  private readonly delta: DeltaBatches | undefined;

  private constructor(
    private readonly path: string,
    private readonly spill: SpillFile,
    table: ShardTable,
    private readonly options: OutputConfig['parquet'],
    private readonly deps: ParquetWriterDeps,
    writerOptions: ParquetShardOptions,
  ) {
    const { builder, encodings, sizeKey } = tableOf(table);
    this.builder = builder;
    this.encodings = encodings;
    this.delta = writerOptions.table === 'delta' ? new DeltaBatches(builder.schema) : undefined;
    // Microsecond times make a Delta file larger than a plain one of the same rows: learned apart.
    this.sizeKey = this.delta === undefined ? sizeKey : `${sizeKey} (delta)`;
  }

  static async create(
    path: string,
    table: ShardTable,
    options: OutputConfig['parquet'],
    deps: ParquetWriterDeps,
    writerOptions: ParquetShardOptions = {},
  ): Promise<ParquetShardWriter> {
    const spill = await SpillFile.create(`${path}.spill${TEMP_SUFFIX}`);
    return new ParquetShardWriter(path, spill, table, options, deps, writerOptions);
  }

  get rows(): number {
    return this.count;
  }

  /**
   * The file's size, estimated from the bytes per row of the sink's last shard of its kind: the
   * file is written only on commit, and `shard.maxBytes` needs its size page by page.
   */
  get bytes(): number {
    return this.deps.bytesPerRow.estimate(this.sizeKey, this.count);
  }

  /** Adds one item at a time (the builder's addItem), spilling a batch at SPILL_ROWS or SPILL_BYTES. */
  async append(items: PageItems | readonly unknown[]): Promise<void> {
    const page = PageItems.from(items);
    for (let i = 0; i < page.length; i++) {
      this.builder.addItem(page, i);
      this.count++;
      this.batchBytes += page.bytesOf(i) ?? 0;
      if (this.builder.rows >= SPILL_ROWS || this.batchBytes >= SPILL_BYTES) await this.spillBatch();
    }
  }

  async commit(): Promise<CommittedShard> {
    // parquet-wasm cannot write a file without a row group; the worker never opens an empty shard.
    if (this.count === 0) throw new Error('A Parquet shard needs at least one row; nothing was appended');
    if (this.builder.rows > 0) await this.spillBatch();
    await this.spill.close();
    const file = await DurableFile.create(this.path);
    try {
      const stats = this.delta === undefined ? {} : { deltaStats: this.delta.statsJson() };
      const rowGroupRows = rowGroupRowsFor(this.options.rowGroupRows, this.spill.bytes, this.count);
      await this.deps.encoders.encode(
        {
          spillPath: this.spill.path,
          columns: this.encodings,
          options: { ...this.options, rowGroupRows },
          rows: this.count,
        },
        async (chunk) => {
          await file.write(chunk);
          crashPoint('after-encode-chunk');
        },
      );
      const done = await file.commit();
      this.deps.bytesPerRow.learn(this.sizeKey, done.bytes, this.count);
      return { ...done, format: 'parquet', rows: this.count, ...stats };
    } catch (error) {
      await file.abort();
      throw error;
    } finally {
      await this.spill.remove();
    }
  }

  async abort(): Promise<void> {
    await this.spill.remove();
  }

  private async spillBatch(): Promise<void> {
    // The IPC copy (and a Delta file's stats) are taken before the reused buffers are reset.
    const batch = this.builder.batch();
    // A buffer of its own (apache-arrow joins the messages into a new one): freed once written.
    const ipc = markOwned(tableToIPC(new Table(this.delta === undefined ? batch : this.delta.convert(batch)), 'stream'));
    this.builder.reset();
    this.batchBytes = 0;
    await this.spill.append(ipc);
    freeOwned(ipc);
  }
}

/** `rowGroupRows`, or fewer when that many rows would hold more than ROW_GROUP_BYTES. */
export function rowGroupRowsFor(rowGroupRows: number, spilledBytes: number, rows: number): number {
  const bytesPerRow = spilledBytes / Math.max(rows, 1);
  return Math.max(1, Math.min(rowGroupRows, Math.floor(ROW_GROUP_BYTES / Math.max(bytesPerRow, 1))));
}
