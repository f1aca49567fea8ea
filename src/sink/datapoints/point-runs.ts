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

/**
 * Where one run lies in the runs file, as blocks of BLOCK_ROWS rows (the last one shorter), each
 * block one read: its times, each value column, its series, each column's presence (blockLayout).
 */
interface Run {
  rows: number;
  offset: number;
}

/** Bytes of a block of `rows` rows of `columns` value columns. */
function blockBytes(rows: number, columns: number): number {
  return rows * (8 + 8 * columns + 4 + columns);
}

/** Views of a block's columns in `bytes` (8-byte aligned: the doubles come first). */
function blockLayout(bytes: Uint8Array, rows: number, columns: number) {
  const { buffer, byteOffset } = bytes;
  const doubles = (k: number) => new Float64Array(buffer, byteOffset + 8 * rows * k, rows);
  const times = doubles(0);
  const values = Array.from({ length: columns }, (_, c) => doubles(c + 1));
  const seriesAt = byteOffset + 8 * rows * (1 + columns);
  const series = new Int32Array(buffer, seriesAt, rows);
  const bytesAt = seriesAt + 4 * rows;
  const present = Array.from({ length: columns }, (_, c) => new Uint8Array(buffer, bytesAt + c * rows, rows));
  return { times, values, series, present };
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
  /** A block's bytes as written, kept for the next block. */
  private scratch = new Uint8Array(0);

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

  /** Writes the table's rows in `order` (sorted) as one run, a block at a time. */
  async write(table: PointTable, order: Uint32Array): Promise<void> {
    const rows = order.length;
    const columns = table.valueColumns.length;
    const size = blockBytes(Math.min(BLOCK_ROWS, rows), columns);
    if (this.scratch.length < size) this.scratch = new Uint8Array(size);
    const offset = this.size;
    for (let from = 0; from < rows; from += BLOCK_ROWS) {
      const n = Math.min(BLOCK_ROWS, rows - from);
      const block = blockLayout(this.scratch, n, columns);
      for (let k = 0; k < n; k++) {
        const row = order[from + k]!;
        block.series[k] = table.seriesIndexOf(row);
        block.times[k] = table.timestamp(row);
        for (let c = 0; c < columns; c++) {
          block.values[c]![k] = table.rawValue(c, row);
          block.present[c]![k] = table.hasValue(c, row) ? 1 : 0;
        }
      }
      await this.append(this.scratch.subarray(0, blockBytes(n, columns)));
    }
    this.runs.push({ rows, offset });
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
      const cursor = new RunCursor(reader, this.path, run, table, table.valueColumns.length);
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
        // The next row of the block, or the next block: awaited only then.
        if (++cursor.at < cursor.length) continue;
        if (!(await cursor.load())) {
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

  private async append(bytes: Uint8Array): Promise<number> {
    const at = this.size;
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
  private readonly bytes: Uint8Array;
  private block: ReturnType<typeof blockLayout>;
  /** The run's row of the block's first; rows in the block; the current row's place in it. */
  private start = 0;
  length = 0;
  at = 0;

  constructor(
    private readonly handle: FileHandle,
    private readonly path: string,
    private readonly run: Run,
    private readonly table: PointTable,
    private readonly columns: number,
  ) {
    this.bytes = new Uint8Array(blockBytes(BLOCK_ROWS, columns));
    this.block = blockLayout(this.bytes, 0, columns);
  }

  /** Reads the block after the current one; false when the run has no more rows. */
  async load(): Promise<boolean> {
    this.start += this.length;
    this.length = Math.min(BLOCK_ROWS, this.run.rows - this.start);
    this.at = 0;
    if (this.length <= 0) return false;
    const bytes = blockBytes(this.length, this.columns);
    const position = this.run.offset + blockBytes(this.start, this.columns);
    for (let offset = 0; offset < bytes;) {
      const { bytesRead } = await this.handle.read(this.bytes, offset, bytes - offset, position + offset);
      if (bytesRead === 0) throw new Error(`${this.path}: a run ends before its rows`);
      offset += bytesRead;
    }
    this.block = blockLayout(this.bytes, this.length, this.columns);
    return true;
  }

  /** The current row's series id and time. */
  id(): number {
    return this.table.seriesIdAt(this.block.series[this.at]!);
  }

  head(): number {
    return this.block.times[this.at]!;
  }

  seriesIndex(i: number): number {
    return this.block.series[i]!;
  }

  time(i: number): number {
    return this.block.times[i]!;
  }

  value(c: number, i: number): unknown {
    return this.block.present[c]![i] === 1 ? this.table.decodeValue(c, this.block.values[c]![i]!) : null;
  }
}
