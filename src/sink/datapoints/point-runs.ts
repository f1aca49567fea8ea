import { type FileHandle, open, rm } from 'node:fs/promises';
import { injectedWriteError } from '../../util/crash-point.js';
import { createExclusive, outputError } from '../../util/durable-file.js';
import type { PointTable } from './point-table.js';

/** Rows of each run read back at a time in the merge: a few hundred KB a run. */
const BLOCK_ROWS = 8192;

/** The rows of a shard in file order, one at a time: what a Parquet batch takes of a row. */
export interface SortedRows {
  seriesIndex(i: number): number;
  time(i: number): number;
  /** Value column `c` (PointTable.valueColumns), null when absent. */
  value(c: number, i: number): unknown;
}

/** Where one run's columns lie in the runs file: byte offsets, each column contiguous. */
interface Run {
  rows: number;
  series: number;
  times: number;
  values: number[];
  present: number[];
}

/**
 * The sorted runs of one datapoints Parquet shard, on disk: when the rows held in memory
 * (PointTable) reach a run's size, they are sorted (series, then time) and written here, and the
 * table holds the next run in the same memory. On commit the runs are merged in file order,
 * BLOCK_ROWS of each in memory at a time. So a shard of any size holds about one run in memory,
 * and about 20 bytes a point (raw numeric) of temporary disk beside it.
 *
 * A run's columns: the series (as the table's index of it), the time, and each value column as
 * a double (a number, or the code of a text the table keeps) with a byte saying whether it is
 * there. The file is created exclusively (never one that was there) and removed by its writer.
 */
export class PointRuns {
  private readonly runs: Run[] = [];
  private size = 0;

  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
  ) {}

  static async create(path: string): Promise<PointRuns> {
    try {
      return new PointRuns(path, await createExclusive(path));
    } catch (error) {
      throw outputError('Creating', path, error);
    }
  }

  get count(): number {
    return this.runs.length;
  }

  /** Writes the table's rows in `order` (sorted) as one run. */
  async write(table: PointTable, order: Uint32Array): Promise<void> {
    const rows = order.length;
    const series = new Int32Array(rows);
    const times = new Float64Array(rows);
    for (let k = 0; k < rows; k++) {
      series[k] = table.seriesIndexOf(order[k]!);
      times[k] = table.timestamp(order[k]!);
    }
    const run: Run = { rows, series: await this.append(series), times: 0, values: [], present: [] };
    run.times = await this.append(times);
    for (let c = 0; c < table.valueColumns.length; c++) {
      const values = new Float64Array(rows);
      const present = new Uint8Array(rows);
      for (let k = 0; k < rows; k++) {
        values[k] = table.rawValue(c, order[k]!);
        present[k] = table.hasValue(c, order[k]!) ? 1 : 0;
      }
      run.values.push(await this.append(values));
      run.present.push(await this.append(present));
    }
    this.runs.push(run);
  }

  /**
   * The rows of every run in file order, by series id, then time: `visit` takes each, answering
   * true when its batch is full, and `flush` is awaited then. Two rows of the same series and time
   * mean the export read a point twice: an Error, never a file.
   */
  async merge(
    table: PointTable,
    visit: (rows: SortedRows, i: number) => boolean,
    flush: () => Promise<void>,
  ): Promise<void> {
    const reader = await open(this.path, 'r');
    try {
      await this.mergeFrom(reader, table, visit, flush);
    } finally {
      await reader.close();
    }
  }

  private async mergeFrom(
    reader: FileHandle,
    table: PointTable,
    visit: (rows: SortedRows, i: number) => boolean,
    flush: () => Promise<void>,
  ): Promise<void> {
    const active: RunCursor[] = [];
    for (const run of this.runs) {
      const cursor = new RunCursor(reader, this.path, run, table);
      if (await cursor.load()) active.push(cursor);
    }
    const before = (a: RunCursor, b: RunCursor) => a.id() < b.id() || (a.id() === b.id() && a.head() < b.head());
    while (active.length > 0) {
      let first = 0;
      for (let j = 1; j < active.length; j++) if (before(active[j]!, active[first]!)) first = j;
      let next = -1;
      for (let j = 0; j < active.length; j++) {
        if (j !== first && (next < 0 || before(active[j]!, active[next]!))) next = j;
      }
      const cursor = active[first]!;
      // Rows of the first run go until the next run's head: most series lie in one run, in a streak.
      const untilId = next < 0 ? Infinity : active[next]!.id();
      const untilTime = next < 0 ? Infinity : active[next]!.head();
      for (;;) {
        const id = cursor.id();
        const time = cursor.head();
        if (id > untilId || (id === untilId && time >= untilTime)) {
          if (id === untilId && time === untilTime) {
            throw new Error(`${this.path}: series ${id} has two points at ${time} in one shard; the shard is not written`);
          }
          break;
        }
        if (visit(cursor, cursor.at)) await flush();
        if (!(await cursor.advance())) {
          active.splice(first, 1);
          break;
        }
      }
    }
  }

  /** Closes and deletes the file: this writer created it. */
  async remove(): Promise<void> {
    await this.handle.close().catch(() => undefined);
    await rm(this.path, { force: true });
  }

  private async append(column: Int32Array | Float64Array | Uint8Array): Promise<number> {
    const at = this.size;
    const bytes = new Uint8Array(column.buffer, column.byteOffset, column.byteLength);
    try {
      const injected = injectedWriteError(this.path);
      if (injected !== undefined) throw injected;
      for (let offset = 0; offset < bytes.length;) {
        offset += (await this.handle.write(bytes, offset, bytes.length - offset, at + offset)).bytesWritten;
      }
    } catch (error) {
      throw outputError('Writing', this.path, error);
    }
    this.size += bytes.length;
    return at;
  }
}

/** One run read back a block at a time; `at` is the current row's place in the block. */
class RunCursor implements SortedRows {
  private readonly series = new Int32Array(BLOCK_ROWS);
  private readonly times = new Float64Array(BLOCK_ROWS);
  private readonly values: Float64Array[];
  private readonly present: Uint8Array[];
  /** The run's row of the block's first; rows in the block. */
  private start = 0;
  private length = 0;
  at = 0;

  constructor(
    private readonly handle: FileHandle,
    private readonly path: string,
    private readonly run: Run,
    private readonly table: PointTable,
  ) {
    this.values = run.values.map(() => new Float64Array(BLOCK_ROWS));
    this.present = run.present.map(() => new Uint8Array(BLOCK_ROWS));
  }

  /** Reads the block after the current one; false when the run has no more rows. */
  async load(): Promise<boolean> {
    this.start += this.length;
    this.length = Math.min(BLOCK_ROWS, this.run.rows - this.start);
    this.at = 0;
    if (this.length <= 0) return false;
    const { run, start, length } = this;
    await this.read(this.series, run.series + 4 * start, 4 * length);
    await this.read(this.times, run.times + 8 * start, 8 * length);
    for (let c = 0; c < this.values.length; c++) {
      await this.read(this.values[c]!, run.values[c]! + 8 * start, 8 * length);
      await this.read(this.present[c]!, run.present[c]! + start, length);
    }
    return true;
  }

  /** Moves to the next row; false when the run has no more. */
  async advance(): Promise<boolean> {
    return ++this.at < this.length || (await this.load());
  }

  /** The current row's series id and time. */
  id(): number {
    return this.table.seriesIdAt(this.series[this.at]!);
  }

  head(): number {
    return this.times[this.at]!;
  }

  seriesIndex(i: number): number {
    return this.series[i]!;
  }

  time(i: number): number {
    return this.times[i]!;
  }

  value(c: number, i: number): unknown {
    return this.present[c]![i] === 1 ? this.table.decodeValue(c, this.values[c]![i]!) : null;
  }

  private async read(into: Int32Array | Float64Array | Uint8Array, position: number, bytes: number): Promise<void> {
    const view = new Uint8Array(into.buffer, into.byteOffset, bytes);
    for (let offset = 0; offset < bytes;) {
      const { bytesRead } = await this.handle.read(view, offset, bytes - offset, position + offset);
      if (bytesRead === 0) throw new Error(`${this.path}: a run ends before its rows`);
      offset += bytesRead;
    }
  }
}
