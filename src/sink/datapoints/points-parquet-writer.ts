import { type DataType, Field, makeData, RecordBatch, Schema, Struct, Table, tableToIPC } from 'apache-arrow';
import type { OutputConfig } from '../../config/job-schema.js';
import { type ColumnSpec, pointColumns, type PointsShape } from '../../resources/index.js';
import { crashPoint } from '../../util/crash-point.js';
import { DurableFile, TEMP_SUFFIX } from '../../util/durable-file.js';
import { arrowType, newColumn } from '../parquet/column-kinds.js';
import type { Utf8Column } from '../parquet/columns.js';
import type { EncodedColumn } from '../parquet/encode.js';
import { type ParquetWriterDeps, rowGroupRowsFor } from '../parquet/parquet-writer.js';
import { SpillFile } from '../parquet/spill.js';
import type { CommittedShard } from '../shard-writer.js';
import type { PointBatch, PointShardWriter } from './point-batch.js';
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
 * One Parquet file of datapoints. Its rows wait in memory (PointTable) until commit, which writes
 * them sorted by series, then time, as Arrow batches to a spill file that an encoder thread turns
 * into the Parquet file (parquet-writer.ts says why the spill file).
 */
export class PointsParquetWriter implements PointShardWriter {
  readonly format = 'parquet';
  private readonly columns: readonly ColumnSpec[];
  private readonly table: PointTable;

  private constructor(
    private readonly path: string,
    private readonly shape: PointsShape,
    private readonly options: OutputConfig['parquet'],
    private readonly deps: ParquetWriterDeps,
  ) {
    this.columns = pointColumns(shape);
    this.table = new PointTable(this.columns, shape);
  }

  static create(path: string, shape: PointsShape, options: OutputConfig['parquet'], deps: ParquetWriterDeps): PointsParquetWriter {
    return new PointsParquetWriter(path, shape, options, deps);
  }

  get rows(): number {
    return this.table.rows;
  }

  /** Estimated from the last committed datapoints shard, as for the collections' files. */
  get bytes(): number {
    return this.deps.bytesPerRow.estimate('datapoints', this.table.rows);
  }

  append(batch: PointBatch): Promise<void> {
    for (const series of batch) this.table.add(series);
    return Promise.resolve();
  }

  async commit(): Promise<CommittedShard> {
    const rows = this.table.rows;
    if (rows === 0) throw new Error('A Parquet shard needs at least one row; nothing was appended');
    const spill = await SpillFile.create(`${this.path}.spill${TEMP_SUFFIX}`);
    let file: DurableFile | undefined;
    try {
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
    }
  }

  abort(): Promise<void> {
    return Promise.resolve();
  }

  /** The table's rows in file order, BATCH_ROWS at a time, as Arrow IPC records of the spill file. */
  private async spillSorted(spill: SpillFile): Promise<void> {
    const { table, columns } = this;
    const schema = new Schema(columns.map((spec) => new Field(spec.name, arrowType(spec.kind), !spec.required)));
    const order = table.order();
    const granularity = this.shape.granularity ?? null;
    // Each series' externalId as UTF-8 once, not once a row.
    const externalIds = new Map<number, Buffer | null>();
    const externalIdOf = (row: number) => {
      const series = table.seriesId(row);
      let bytes = externalIds.get(series);
      if (bytes === undefined) {
        const text = table.externalId(row);
        bytes = text === undefined ? null : Buffer.from(text);
        externalIds.set(series, bytes);
      }
      return bytes;
    };
    // One set of columns, filled again for each batch: tableToIPC copies them out.
    const built = columns.map((spec) => newColumn(spec.kind, Math.min(BATCH_ROWS, order.length)));
    for (let from = 0; from < order.length; from += BATCH_ROWS) {
      const to = Math.min(order.length, from + BATCH_ROWS);
      for (const column of built) column.reset();
      for (let k = from; k < to; k++) {
        const row = order[k]!;
        let v = 0;
        for (let c = 0; c < columns.length; c++) {
          const name = columns[c]!.name;
          const column = built[c]!;
          if (name === 'timeseriesId') column.push(table.seriesId(row));
          else if (name === 'externalId') pushText(column as Utf8Column, externalIdOf(row));
          else if (name === 'granularity') column.push(granularity);
          else if (name === 'timestamp') column.push(table.timestamp(row));
          else column.push(table.value(v++, row));
        }
      }
      const fields = schema.fields;
      const children = built.map((column, i) => column.toData(fields[i]!.type as DataType));
      const data = makeData({ type: new Struct(fields), length: to - from, nullCount: 0, children });
      await spill.append(tableToIPC(new Table(new RecordBatch(schema, data)), 'stream'));
    }
  }
}

function pushText(column: Utf8Column, bytes: Buffer | null): void {
  if (bytes === null) column.push(null);
  else column.pushUtf8(bytes, 0, bytes.length);
}
