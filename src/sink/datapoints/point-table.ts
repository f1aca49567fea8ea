import type { ColumnSpec, PointsShape } from '../../resources/index.js';
import type { PointList, SeriesPoints } from './point-batch.js';
import { PointReader } from './point-reader.js';
import { type Take, takeOf } from './point-takes.js';
import { RowBlock, type ValueKind } from './row-block.js';
import { SeriesTable } from './series-table.js';
import { NumberStore, TextStore } from './value-stores.js';

/**
 * Bytes of typed arrays the rows of one run may fill: ten partitions' open shards hold about
 * 25 MB of rows, whatever the shards' size.
 */
const RUN_BYTES = 2.5 * 1024 * 1024;
/** Rows of a run at most, however narrow its rows. */
const MAX_RUN_ROWS = 131_072;
/** Bytes of text (strings, statuses, `extra`) a run holds per row of its `runRows` at most. */
const TEXT_BYTES_PER_ROW = 16;
/** Rows the arrays have room for at first: a small shard needs no more. */
const FIRST_ROWS = 1024;

/** The fixed columns of a datapoints shard, before its value columns. */
const FIXED = new Set(['timeseriesId', 'externalId', 'instanceSpace', 'instanceExternalId', 'granularity', 'timestamp']);

/** The value columns of a shard of `columns`: those after the series' (FIXED), granularity and timestamp. */
function valueColumnsOf(columns: readonly ColumnSpec[]): ColumnSpec[] {
  return columns.filter((spec) => !FIXED.has(spec.name));
}

/** How a value column is held: int64 and double columns as doubles, the others as text. */
function kindOf(spec: ColumnSpec): ValueKind {
  return spec.kind === 'int64' || spec.kind === 'double' ? 'number' : 'text';
}

/** The rows of a run of a shard of `columns`: as many as RUN_BYTES holds (12 bytes, 9 a number, 4 a text). */
export function runRowsFor(columns: readonly ColumnSpec[]): number {
  const bytes = valueColumnsOf(columns).reduce((sum, spec) => sum + (kindOf(spec) === 'number' ? 9 : 4), 12);
  return Math.min(MAX_RUN_ROWS, Math.floor(RUN_BYTES / bytes));
}

/**
 * Rows of a datapoints shard held in memory, at most `runRows` (and TEXT_BYTES_PER_ROW bytes of
 * text a row), in the order they came: a series' points come in time order but interleaved with
 * other series', answer by answer. The shard's file is sorted by series (their id), then time:
 * `order()` gives that order, `gather` copies rows in it into a RowBlock. Once full, the writer
 * writes the rows as a sorted run and `reset()`s the table for the next ones; the series (`series`)
 * stay, so that a row's series index means the same in every run. Every column is kept in typed
 * arrays (about 30 bytes a raw numeric point), grown up to `runRows` rows and no further.
 */
export class PointTable {
  /** The shard's series: every run's rows refer to them by index. */
  readonly series = new SeriesTable();
  /** The columns after `timeseriesId`, `externalId`, `granularity` and `timestamp`, in order. */
  readonly valueColumns: readonly ColumnSpec[];
  readonly kinds: readonly ValueKind[];
  private seriesOf: Int32Array;
  private times: Float64Array;
  private readonly takes: Take[];
  /** Takes the same values as `takes` from a point's bytes, without parsing it. */
  private readonly reader: PointReader;
  private readonly stores: (NumberStore | TextStore)[];
  private readonly texts: TextStore[];
  private readonly textLimit: number;
  rows = 0;

  /** `runRows`: rows held at most (default runRowsFor(columns)). */
  constructor(columns: readonly ColumnSpec[], shape: PointsShape, readonly runRows = runRowsFor(columns)) {
    if (!Number.isInteger(runRows) || runRows < 1) throw new RangeError(`PointTable: runRows must be an integer >= 1, got ${runRows}`);
    this.valueColumns = valueColumnsOf(columns);
    this.kinds = this.valueColumns.map(kindOf);
    const known = new Set(['timestamp', ...this.valueColumns.map((spec) => spec.name)]);
    if (shape.aggregates === undefined) for (const name of ['value', 'status']) known.add(name);
    this.takes = this.valueColumns.map((spec) => takeOf(spec, known));
    this.reader = new PointReader(this.valueColumns, known);
    const rows = Math.min(runRows, FIRST_ROWS);
    this.seriesOf = new Int32Array(rows);
    this.times = new Float64Array(rows);
    this.stores = this.kinds.map((kind) => (kind === 'number' ? new NumberStore(rows) : new TextStore(rows)));
    this.texts = this.stores.filter((store) => store instanceof TextStore);
    this.textLimit = runRows * TEXT_BYTES_PER_ROW;
  }

  /** Whether the table holds all it may: the rows held must be written before more are added. */
  get full(): boolean {
    return this.rows >= this.runRows || this.textBytes() >= this.textLimit;
  }

  /** Adds the points of `series` from its `from`-th on, until the table is full; returns how many it took. */
  add(series: SeriesPoints, from = 0): number {
    const index = this.series.add(series.id, series.externalId, series.instanceId);
    const { points } = series;
    const wanted = Math.min(points.length - from, this.runRows - this.rows);
    if (this.rows + wanted > this.times.length) this.growTo(this.rows + wanted);
    const texts = this.texts.length > 0;
    let k = from;
    for (; k < from + wanted; k++) {
      if (texts && this.textBytes() >= this.textLimit) break;
      const row = this.rows++;
      this.seriesOf[row] = index;
      this.times[row] = points.timestamp(k);
      if (this.takes.length === 0) continue;
      if (points.body !== undefined && this.read(points, k, series.isString)) {
        for (let c = 0; c < this.takes.length; c++) this.stores[c]!.put(row, this.reader.take(c));
        continue;
      }
      const point = points.value(k);
      for (let c = 0; c < this.takes.length; c++) this.stores[c]!.put(row, this.takes[c]!(point, series.isString));
    }
    return k - from;
  }

  /** Point `k` of scanned `points` read from its bytes, not parsed; false when the reader leaves it to value(k). */
  private read(points: PointList, k: number, isString: boolean): boolean {
    const body = points.body!;
    const value = points.plainValue(k);
    if (value >= 0) return this.reader.readPlain(body, value, points.end(k) - 1, isString);
    return this.reader.read(body, points.start(k), isString);
  }

  private textBytes(): number {
    let bytes = 0;
    for (const store of this.texts) bytes += store.used;
    return bytes;
  }

  /**
   * The rows in file order: by series id, then time. A counting sort on the series keeps each
   * series' rows in the order they came, which is time order unless the series was read in windows.
   * Throws when a series has two rows of one time: the export never reads a point twice.
   */
  order(): Uint32Array {
    const { rows, seriesOf } = this;
    // Only the series of these rows are ranked: a shard's series can be many more.
    const rankOf = new Int32Array(this.series.count).fill(-1);
    const here: number[] = [];
    for (let row = 0; row < rows; row++) {
      const index = seriesOf[row]!;
      if (rankOf[index] === -1) {
        rankOf[index] = 0;
        here.push(index);
      }
    }
    here.sort((a, b) => this.series.id(a) - this.series.id(b));
    here.forEach((index, rank) => (rankOf[index] = rank));
    const starts = new Uint32Array(here.length + 1);
    for (let row = 0; row < rows; row++) starts[rankOf[seriesOf[row]!]! + 1]!++;
    for (let r = 1; r <= here.length; r++) starts[r]! += starts[r - 1]!;
    const order = new Uint32Array(rows);
    const ends = starts.slice();
    for (let row = 0; row < rows; row++) order[ends[rankOf[seriesOf[row]!]!]!++] = row;
    // Windows of one long series read in parallel arrive interleaved: such a series is sorted by time.
    for (let r = 0; r < here.length; r++) {
      const series = order.subarray(starts[r], starts[r + 1]);
      if (this.increasing(series)) continue;
      series.sort((a, b) => this.times[a]! - this.times[b]!);
      const twice = this.repeated(series);
      if (twice >= 0) throw repeatedPoint(this.series.id(here[r]!), this.times[twice]!);
    }
    return order;
  }

  private increasing(rows: Uint32Array): boolean {
    for (let k = 1; k < rows.length; k++) if (this.times[rows[k]!]! <= this.times[rows[k - 1]!]!) return false;
    return true;
  }

  /** A row of sorted `rows` whose time the row before has too; -1 when none. */
  private repeated(rows: Uint32Array): number {
    for (let k = 1; k < rows.length; k++) if (this.times[rows[k]!]! === this.times[rows[k - 1]!]!) return rows[k]!;
    return -1;
  }

  /** Copies rows `order[from]` to `order[to - 1]` into `block` (which has room for them), in that order. */
  gather(order: Uint32Array, from: number, to: number, block: RowBlock): void {
    const rows = order.subarray(from, to);
    block.rows = rows.length;
    for (let i = 0; i < rows.length; i++) {
      block.series[i] = this.seriesOf[rows[i]!]!;
      block.times[i] = this.times[rows[i]!]!;
    }
    this.stores.forEach((store, c) => {
      const part = block.parts[c]!;
      if (store instanceof NumberStore && part.kind === 'number') {
        for (let i = 0; i < rows.length; i++) {
          part.values[i] = store.values[rows[i]!]!;
          part.present[i] = store.present[rows[i]!]!;
        }
      } else if (store instanceof TextStore && part.kind === 'text') {
        let end = 0;
        for (let i = 0; i < rows.length; i++) {
          const code = store.codes[rows[i]!]!;
          part.present[i] = code < 0 ? 0 : 1;
          if (code >= 0) {
            const start = store.start(code);
            const size = store.ends[code]! - start;
            RowBlock.textRoom(part, end + size);
            part.bytes.set(store.bytes.subarray(start, start + size), end);
            end += size;
          }
          part.ends[i] = end;
        }
      }
    });
  }

  /** Forgets the rows held (their series stay), keeping the arrays for the next ones. */
  reset(): void {
    this.rows = 0;
    for (const store of this.texts) store.reset();
  }

  seriesId(row: number): number {
    return this.series.id(this.seriesOf[row]!);
  }

  externalId(row: number): string | undefined {
    return this.series.externalId(this.seriesOf[row]!);
  }

  timestamp(row: number): number {
    return this.times[row]!;
  }

  /** Value column `c` (of valueColumns) of a row. */
  value(c: number, row: number): unknown {
    return this.stores[c]!.get(row);
  }

  /** Room for `rows` rows, at least twice the room there was, at most runRows. */
  private growTo(rows: number): void {
    const size = Math.min(this.runRows, Math.max(rows, this.times.length * 2));
    const seriesOf = new Int32Array(size);
    seriesOf.set(this.seriesOf);
    this.seriesOf = seriesOf;
    const times = new Float64Array(size);
    times.set(this.times);
    this.times = times;
    for (const store of this.stores) store.resize(size);
  }
}

/** The error of a point read twice: a bug of the export, never written to a file. */
export function repeatedPoint(id: number, timestamp: number): Error {
  return new Error(
    `Series ${id} has two points at ${timestamp} in one shard: the export reads each point once, so this is a bug ` +
    'of bulk-extract. The shard is not written; please report it.',
  );
}
