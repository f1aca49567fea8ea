import { type DataType, Field, makeData, RecordBatch, Schema, Struct, Table, tableToIPC } from 'apache-arrow';
import type { OutputConfig } from '../../config/job-schema.js';
import { type ColumnSpec, pointColumns, type PointsShape } from '../../resources/index.js';
import { crashPoint } from '../../util/crash-point.js';
import { DurableFile, TEMP_SUFFIX } from '../../util/durable-file.js';
import { arrowType, newColumn } from '../parquet/column-kinds.js';
import type { Column, Utf8Column } from '../parquet/columns.js';
import type { EncodedColumn } from '../parquet/encode.js';
import { type ParquetWriterDeps, rowGroupRowsFor } from '../parquet/parquet-writer.js';
import { SpillFile } from '../parquet/spill.js';
import type { CommittedShard } from '../shard-writer.js';
import type { PointBatch, PointShardWriter } from './point-batch.js';
import { PointRuns, type SortedRows } from './point-runs.js';
import { PointTable } from './point-table.js';

/** Rows of one Arrow batch handed to the encoder. */
const BATCH_ROWS = 65_536;

/**
 * Encodings for points (bench/RESULTS.md, "Datapoints: bytes per point"): the series and times
 * delta-encoded (runs of one id and near-regular steps become a few bits a row); values plain, no
 * dictionary (of 2M simulated points, 5.9 bytes a point in all, against 6.6 byte-stream-split and
 * 7.8 with a dictionary, at the same CPU); externalId and the symbols left to dictionaries (one
 * entry per series, in long runs).
 */
function encodings(columns: readonly ColumnSpec[]): EncodedColumn[] {
  return columns.map(({ name, kind }) => ({
    name,
    encoding: kind === 'int64' || kind === 'timestamp' ? 'delta' : kind === 'double' ? 'plain' : undefined,
  }));
}

/**
 * Rows a shard holds in memory before they go to disk as a sorted run (point-runs.ts): about 3 MB
 * of raw numeric points, so that ten partitions hold tens of MB whatever their shards' size.
 */
export const RUN_ROWS = 131_072;

/**
 * One Parquet file of datapoints. Its rows wait in memory (PointTable) up to a run's size, then on
 * disk as sorted runs (PointRuns); commit writes them all sorted by series, then time, as Arrow
 * batches to a spill file that an encoder thread turns into the Parquet file (parquet-writer.ts
 * says why the spill file). A shard of at most one run is sorted in memory, without a runs file.
 */
export class PointsParquetWriter implements PointShardWriter {
  readonly format = 'parquet';
  private readonly columns: readonly ColumnSpec[];
  private readonly table: PointTable;
  private runs: PointRuns | undefined;
  /** Rows in the runs on disk. */
  private spilled = 0;

  private constructor(
    private readonly path: string,
    private readonly shape: PointsShape,
    private readonly options: OutputConfig['parquet'],
    private readonly deps: ParquetWriterDeps,
    private readonly runRows: number,
  ) {
    this.columns = pointColumns(shape);
    this.table = new PointTable(this.columns, shape);
  }

  /** `runRows`: rows held in memory before a run goes to disk (RUN_ROWS; smaller in tests). */
  static create(
    path: string,
    shape: PointsShape,
    options: OutputConfig['parquet'],
    deps: ParquetWriterDeps,
    runRows = RUN_ROWS,
  ): PointsParquetWriter {
    return new PointsParquetWriter(path, shape, options, deps, runRows);
  }

  get rows(): number {
    return this.spilled + this.table.rows;
  }

  /** Estimated from the last committed datapoints shard, as for the collections' files. */
  get bytes(): number {
    return this.deps.bytesPerRow.estimate('datapoints', this.rows);
  }

  async append(batch: PointBatch): Promise<void> {
    for (const series of batch) this.table.add(series);
    if (this.table.rows >= this.runRows) await this.spillRun();
  }

  async commit(): Promise<CommittedShard> {
    const { rows } = this;
    if (rows === 0) throw new Error('A Parquet shard needs at least one row; nothing was appended');
    const spill = await SpillFile.create(`${this.path}.spill${TEMP_SUFFIX}`);
    let file: DurableFile | undefined;
    try {
      if (this.runs !== undefined && this.table.rows > 0) await this.spillRun();
      await this.spillSorted(spill);
      await spill.close();
      file = await DurableFile.create(this.path);
      const opened = file;
      const rowGroupRows = rowGroupRowsFor(this.options.rowGroupRows, spill.bytes, rows);
      await this.deps.encoders.encode(
        { spillPath: spill.path, columns: encodings(this.columns), options: { ...this.options, rowGroupRows }, rows },
        async (chunk) => {
          await opened.write(chunk);
          crashPoint('after-encode-chunk');
        },
      );
      const done = await file.commit();
      this.deps.bytesPerRow.learn('datapoints', done.bytes, rows);
      return { ...done, format: 'parquet', rows };
    } catch (error) {
      await file?.abort();
      throw error;
    } finally {
      await spill.remove();
      await this.removeRuns();
    }
  }

  abort(): Promise<void> {
    return this.removeRuns();
  }

  /** The rows held, sorted, to the runs file; the table then holds the next run. */
  private async spillRun(): Promise<void> {
    this.runs ??= await PointRuns.create(`${this.path}.runs${TEMP_SUFFIX}`);
    await this.runs.write(this.table, this.table.order());
    this.spilled += this.table.rows;
    this.table.clear();
  }

  private async removeRuns(): Promise<void> {
    const { runs } = this;
    this.runs = undefined;
    await runs?.remove();
  }

  /** Every row in file order, BATCH_ROWS at a time, as Arrow IPC records of the spill file. */
  private async spillSorted(spill: SpillFile): Promise<void> {
    const batches = new ArrowBatches(this.columns, this.table, this.shape.granularity ?? null);
    const flush = async () => {
      await spill.append(batches.take());
    };
    if (this.runs === undefined) {
      const rows = new TableRows(this.table, this.table.order());
      for (let k = 0; k < rows.order.length; k++) if (batches.add(rows, k)) await flush();
    } else {
      await this.runs.merge(this.table, (rows, i) => batches.add(rows, i), flush);
    }
    if (batches.length > 0) await flush();
  }
}

/** The table's rows in `order`, as SortedRows. */
class TableRows implements SortedRows {
  constructor(
    private readonly table: PointTable,
    readonly order: Uint32Array,
  ) {}

  seriesIndex(k: number): number {
    return this.table.seriesIndexOf(this.order[k]!);
  }

  time(k: number): number {
    return this.table.timestamp(this.order[k]!);
  }

  value(c: number, k: number): unknown {
    return this.table.value(c, this.order[k]!);
  }
}

/** Rows gathered into Arrow columns, BATCH_ROWS to a batch, one set of columns filled again for each. */
class ArrowBatches {
  private readonly schema: Schema;
  private readonly built: Column[];
  /** Each series' externalId as UTF-8, once, not once a row (by the table's index of the series). */
  private readonly externalIds: (Buffer | null | undefined)[] = [];
  length = 0;

  constructor(
    private readonly columns: readonly ColumnSpec[],
    private readonly table: PointTable,
    private readonly granularity: string | null,
  ) {
    this.schema = new Schema(columns.map((spec) => new Field(spec.name, arrowType(spec.kind), !spec.required)));
    this.built = columns.map((spec) => newColumn(spec.kind, BATCH_ROWS));
  }

  /** Adds row `i` of `rows`; true when the batch is full (take it then). */
  add(rows: SortedRows, i: number): boolean {
    const { columns, built, table } = this;
    const series = rows.seriesIndex(i);
    let v = 0;
    for (let c = 0; c < columns.length; c++) {
      const name = columns[c]!.name;
      const column = built[c]!;
      if (name === 'timeseriesId') column.push(table.seriesIdAt(series));
      else if (name === 'externalId') this.pushExternalId(column as Utf8Column, series);
      else if (name === 'granularity') column.push(this.granularity);
      else if (name === 'timestamp') column.push(rows.time(i));
      else column.push(rows.value(v++, i));
    }
    return ++this.length === BATCH_ROWS;
  }

  /** The batch as an Arrow IPC record; the columns are then filled again (tableToIPC copied them). */
  take(): Uint8Array {
    const { fields } = this.schema;
    const children = this.built.map((column, i) => column.toData(fields[i]!.type as DataType));
    const data = makeData({ type: new Struct(fields), length: this.length, nullCount: 0, children });
    const record = tableToIPC(new Table(new RecordBatch(this.schema, data)), 'stream');
    for (const column of this.built) column.reset();
    this.length = 0;
    return record;
  }

  private pushExternalId(column: Utf8Column, series: number): void {
    let bytes = this.externalIds[series];
    if (bytes === undefined) {
      const text = this.table.externalIdAt(series);
      bytes = text === undefined ? null : Buffer.from(text);
      this.externalIds[series] = bytes;
    }
    if (bytes === null) column.push(null);
    else column.pushUtf8(bytes, 0, bytes.length);
  }
}
