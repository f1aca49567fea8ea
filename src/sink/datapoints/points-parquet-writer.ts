import type { OutputConfig, TableKind } from '../../config/job-schema.js';
import { type ColumnSpec, pointColumns, type PointsShape } from '../../resources/index.js';
import { crashPoint } from '../../util/crash-point.js';
import { DurableFile, TEMP_SUFFIX } from '../../util/durable-file.js';
import { DeltaBatches } from '../delta/index.js';
import { columnsSchema } from '../parquet/arrow-types.js';
import type { EncodedColumn } from '../parquet/encode.js';
import { type ParquetWriterDeps, rowGroupRowsFor } from '../parquet/parquet-writer.js';
import { SpillFile } from '../parquet/spill.js';
import type { CommittedShard } from '../shard-writer.js';
import type { PointBatch, PointShardWriter } from './point-batch.js';
import { PointBatches } from './point-batches.js';
import { blockRowsFor, PointRuns } from './point-runs.js';
import { PointTable } from './point-table.js';
import { RowBlock } from './row-block.js';
import { mergeRuns } from './run-merge.js';

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

/** What a datapoints Parquet shard's writer may be told besides the output's settings. */
export interface PointsParquetOptions {
  /** Rows held in memory before they go to the runs file as a sorted run; default runRowsFor(columns). */
  runRows?: number;
  /** The stream's table (StreamShape.table): 'delta' writes the shard as a Delta data file. Default 'files'. */
  table?: TableKind | undefined;
}

/**
 * One Parquet file of datapoints, sorted by series, then time, whatever order the points came in
 * (an external sort, so that memory does not grow with the shard). The rows wait in a PointTable,
 * at most `runRows` of them (about 2.5 MB); when it is full, its rows are written sorted, as one
 * sorted run, to a runs file beside the shard (`<shard>.runs.inprogress`, created here
 * exclusively: a file or link already there is refused and left as it is), and the table takes
 * the next rows. The runs file is temporary disk of about 20 bytes a raw numeric point of the
 * shard in progress (36 with its status, 12 plus 8 an aggregate for aggregates). On commit the
 * runs are merged (one block of each held at a time) into Arrow batches in file order, which go
 * to a spill file that an encoder thread turns into the Parquet file (parquet-writer.ts says why
 * the spill file). A shard of fewer rows than a run is sorted in memory and needs no runs file.
 * The runs file is removed on commit (done or failed) and on abort, only by the writer that
 * created it. A Delta table's data file (PointsParquetOptions.table 'delta') spills its batches
 * converted (DeltaBatches) and commits with their stats.
 */
export class PointsParquetWriter implements PointShardWriter {
  readonly format = 'parquet';
  private readonly columns: readonly ColumnSpec[];
  private readonly table: PointTable;
  /** Rows of a block of a run, written and read back: a merge holds one of each run. */
  private readonly blockRows: number;
  /** Where rows are gathered in file order, a block at a time: made when first needed. */
  private block: RowBlock | undefined;
  private runs: PointRuns | undefined;
  /** Rows in the runs written. */
  private rowsInRuns = 0;
  /** 'delta': the shard is a Delta table's data file (PointsParquetOptions.table). */
  private readonly tableKind: TableKind | undefined;

  private constructor(
    private readonly path: string,
    private readonly shape: PointsShape,
    private readonly options: OutputConfig['parquet'],
    private readonly deps: ParquetWriterDeps,
    writerOptions: PointsParquetOptions,
  ) {
    this.columns = pointColumns(shape);
    this.table = new PointTable(this.columns, shape, writerOptions.runRows);
    this.blockRows = blockRowsFor(this.table.runRows);
    this.tableKind = writerOptions.table;
  }

  /** What this shard's bytes per row are learned under: Delta files (microsecond times) apart from plain ones. */
  private get sizeKey(): string {
    return this.tableKind === 'delta' ? 'datapoints (delta)' : 'datapoints';
  }

  static create(
    path: string,
    shape: PointsShape,
    options: OutputConfig['parquet'],
    deps: ParquetWriterDeps,
    writerOptions: PointsParquetOptions = {},
  ): PointsParquetWriter {
    return new PointsParquetWriter(path, shape, options, deps, writerOptions);
  }

  get rows(): number {
    return this.rowsInRuns + this.table.rows;
  }

  /** Estimated from the last committed datapoints shard, as for the collections' files. */
  get bytes(): number {
    return this.deps.bytesPerRow.estimate(this.sizeKey, this.rows);
  }

  /** Adds the batch's points to the table, writing its rows as a sorted run each time it is full. */
  async append(batch: PointBatch): Promise<void> {
    for (const series of batch) {
      for (let k = 0; k < series.points.length;) {
        k += this.table.add(series, k);
        if (this.table.full) await this.writeRun();
      }
    }
  }

  async commit(): Promise<CommittedShard> {
    const rows = this.rows;
    if (rows === 0) throw new Error('A Parquet shard needs at least one row; nothing was appended');
    let spill: SpillFile | undefined;
    let file: DurableFile | undefined;
    try {
      spill = await SpillFile.create(`${this.path}.spill${TEMP_SUFFIX}`);
      const delta = this.tableKind === 'delta' ? new DeltaBatches(columnsSchema(this.columns)) : undefined;
      await this.deps.merges(() => this.spillRows(spill!, rows, delta));
      await spill.close();
      const stats = delta === undefined ? {} : { deltaStats: delta.statsJson() };
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
      this.deps.bytesPerRow.learn(this.sizeKey, done.bytes, rows);
      return { ...done, format: 'parquet', rows, ...stats };
    } catch (error) {
      await file?.abort();
      throw error;
    } finally {
      await spill?.remove();
      await this.runs?.remove();
    }
  }

  async abort(): Promise<void> {
    await this.runs?.remove();
  }

  /** The shard's rows in file order, from its runs and its table, as Arrow batches in `spill`. */
  private async spillRows(spill: SpillFile, rows: number, delta: DeltaBatches | undefined): Promise<void> {
    const batches = new PointBatches(this.columns, this.shape.granularity, this.table.series, spill, rows, delta);
    if (this.runs === undefined) {
      await this.batchesFromTable(batches);
    } else {
      if (this.table.rows > 0) await this.writeRun();
      const cursors = this.runs.cursors(this.table.kinds);
      await mergeRuns(cursors, this.table.series, (block, from, to) => batches.add(block, from, to));
    }
    await batches.finish();
  }

  /** Writes the table's rows as one more sorted run (the runs file created by the first), and empties the table. */
  private async writeRun(): Promise<void> {
    this.runs ??= await PointRuns.create(`${this.path}.runs${TEMP_SUFFIX}`);
    await this.runs.write(this.table, this.blockOf(this.blockRows), this.blockRows);
    this.rowsInRuns += this.table.rows;
    this.table.reset();
  }

  /** The table's rows in file order, sorted in memory, a block at a time. */
  private async batchesFromTable(batches: PointBatches): Promise<void> {
    const order = this.table.order();
    const block = this.blockOf(Math.min(this.blockRows, order.length));
    for (let from = 0; from < order.length; from += this.blockRows) {
      this.table.gather(order, from, Math.min(order.length, from + this.blockRows), block);
      await batches.add(block, 0, block.rows);
    }
  }

  private blockOf(rows: number): RowBlock {
    return (this.block ??= RowBlock.allocate(this.table.kinds, rows));
  }
}
