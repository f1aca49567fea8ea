import { type DataType, makeData, RecordBatch, type Schema, Struct, Table, tableToIPC } from 'apache-arrow';
import type { ColumnSpec } from '../../resources/index.js';
import type { DeltaBatches } from '../delta/index.js';
import { columnsSchema } from '../parquet/arrow-types.js';
import type { SpillFile } from '../parquet/spill.js';
import { type BatchColumn, constantText, externalIds, nodeKeys, seriesIds, timestamps, valueColumn } from './batch-columns.js';
import type { RowBlock } from './row-block.js';
import type { SeriesTable } from './series-table.js';
import { freeOwned, markOwned } from '../../util/owned-memory.js';

/** Rows of one Arrow batch handed to the encoder. */
const BATCH_ROWS = 65_536;

/**
 * The Arrow batches of a datapoints shard, built from RowBlocks in file order and appended to its
 * spill file as Arrow IPC records of BATCH_ROWS rows. Each column is filled straight from the
 * blocks' typed arrays (a range of rows at a time where a column allows), the series' ids and
 * externalIds from its SeriesTable (externalIds as the UTF-8 encoded once per series). One set of
 * buffers serves every batch: tableToIPC copies them out. A Delta table's data file hands each batch
 * through its DeltaBatches on the way (timestamps in microseconds, the file's stats gathered).
 */
export class PointBatches {
  private readonly schema: Schema;
  private readonly outs: BatchColumn[];
  /** Rows of a batch: BATCH_ROWS, or the shard's rows when fewer. */
  private readonly capacity: number;
  private length = 0;

  /**
   * `rows`: the shard's, so that the buffers of a small shard are small. `delta`: a Delta table's
   * data file's, over columnsSchema(columns); undefined for plain files.
   */
  constructor(
    columns: readonly ColumnSpec[],
    granularity: string | undefined,
    series: SeriesTable,
    private readonly spill: SpillFile,
    rows: number,
    private readonly delta?: DeltaBatches,
  ) {
    this.capacity = Math.min(BATCH_ROWS, rows);
    const { capacity } = this;
    this.schema = columnsSchema(columns);
    let part = 0;
    this.outs = columns.map((spec) => {
      switch (spec.name) {
        case 'timeseriesId':
          return seriesIds(series, capacity);
        case 'externalId':
          return externalIds(series, capacity);
        case 'instanceSpace':
          return nodeKeys(series, 'space', capacity);
        case 'instanceExternalId':
          return nodeKeys(series, 'externalId', capacity);
        case 'granularity':
          return constantText(granularity, capacity);
        case 'timestamp':
          return timestamps(capacity);
        default:
          return valueColumn(spec, part++, capacity);
      }
    });
  }

  /**
   * Appends rows `from` to `to - 1` of `block`, writing each batch filled to the spill file: a
   * promise only when a batch was filled (the rest of the rows then follow it), so that a merge
   * handing over many short ranges awaits only then. `block` must stay as it is until then.
   */
  add(block: RowBlock, from: number, to: number): Promise<void> | undefined {
    while (from < to) {
      const n = Math.min(to - from, this.capacity - this.length);
      for (const out of this.outs) out.copy(block, from, n);
      this.length += n;
      from += n;
      if (this.length === this.capacity) {
        const rest = from;
        return this.flush().then(() => this.add(block, rest, to));
      }
    }
    return undefined;
  }

  /** Writes the rows added since the last batch as one. */
  async finish(): Promise<void> {
    if (this.length > 0) await this.flush();
  }

  private async flush(): Promise<void> {
    const { fields } = this.schema;
    const children = this.outs.map((out, i) => out.column.toData(fields[i]!.type as DataType));
    const data = makeData({ type: new Struct(fields), length: this.length, nullCount: 0, children });
    const batch = new RecordBatch(this.schema, data);
    // A buffer of its own (apache-arrow joins the messages into a new one): freed once written.
    const ipc = markOwned(tableToIPC(new Table(this.delta === undefined ? batch : this.delta.convert(batch)), 'stream'));
    for (const out of this.outs) out.column.reset();
    this.length = 0;
    await this.spill.append(ipc);
    freeOwned(ipc);
  }
}
