import { type ColumnSpec, EXTRA_COLUMN, type PointsShape } from '../../resources/index.js';
import type { PointList, PointValue, SeriesPoints } from './point-batch.js';
import { SPECIAL_VALUES } from './point-fields.js';
import { PointReader } from './point-reader.js';

/** A number, or a special value's double; null when absent. */
function numeric(value: unknown): number | null {
  if (typeof value === 'number') return value;
  return typeof value === 'string' && Object.hasOwn(SPECIAL_VALUES, value) ? SPECIAL_VALUES[value]! : null;
}

/** How a column's value is taken from a point of a series. */
type Take = (point: PointValue, isString: boolean) => unknown;

/**
 * Growable typed storage of one column; `null` marks a missing value. `raw` is a row's value as one
 * double (a number, or a text's code) for a sorted run on disk (point-runs.ts); `decode` gives the
 * value back from it.
 */
interface Store {
  put(row: number, value: unknown): void;
  get(row: number): unknown;
  raw(row: number): number;
  has(row: number): boolean;
  decode(raw: number): unknown;
}

class NumberStore implements Store {
  private values = new Float64Array(1024);
  private present = new Uint8Array(1024);

  put(row: number, value: unknown): void {
    if (row >= this.values.length) {
      const values = new Float64Array(this.values.length * 2);
      values.set(this.values);
      this.values = values;
      const present = new Uint8Array(this.present.length * 2);
      present.set(this.present);
      this.present = present;
    }
    this.present[row] = value === null ? 0 : 1;
    this.values[row] = value === null ? 0 : (value as number);
  }

  get(row: number): number | null {
    return this.present[row] === 1 ? this.values[row]! : null;
  }

  raw(row: number): number {
    return this.values[row]!;
  }

  has(row: number): boolean {
    return this.present[row] === 1;
  }

  decode(raw: number): number {
    return raw;
  }
}

/**
 * Text as 4-byte codes a row into a table of the distinct values (0: null): statuses and `extra`
 * are null or a few symbols in almost every row, so a shard's text costs little more than its codes.
 */
class TextStore implements Store {
  private codes = new Int32Array(1024);
  private readonly values: string[] = [''];
  private readonly index = new Map<string, number>();

  put(row: number, value: unknown): void {
    if (row >= this.codes.length) {
      const codes = new Int32Array(this.codes.length * 2);
      codes.set(this.codes);
      this.codes = codes;
    }
    if (value === null) {
      this.codes[row] = 0;
      return;
    }
    const text = value as string;
    let code = this.index.get(text);
    if (code === undefined) {
      code = this.values.push(text) - 1;
      this.index.set(text, code);
    }
    this.codes[row] = code;
  }

  get(row: number): string | null {
    const code = this.codes[row]!;
    return code === 0 ? null : this.values[code]!;
  }

  raw(row: number): number {
    return this.codes[row]!;
  }

  has(row: number): boolean {
    return this.codes[row] !== 0;
  }

  decode(raw: number): string {
    return this.values[raw]!;
  }
}

/**
 * The rows of one datapoints shard, held until the shard is committed, so that its file can be
 * written sorted by series (their id), then time: a series' points arrive in time order but
 * interleaved with other series', answer by answer. Every value column is kept in typed arrays
 * where it is a number (about 20 bytes a point for raw numeric series).
 */
export class PointTable {
  private readonly seriesIds: number[] = [];
  private readonly externalIds: (string | undefined)[] = [];
  private readonly seriesIndex = new Map<number, number>();
  private seriesOf = new Int32Array(1024);
  private times = new Float64Array(1024);
  private readonly takes: Take[];
  /** Takes the same values as `takes` from a point's bytes, without parsing it. */
  private readonly reader: PointReader;
  private readonly stores: Store[];
  /** The columns after `timeseriesId`, `externalId`, `granularity` and `timestamp`, in order. */
  readonly valueColumns: readonly ColumnSpec[];
  rows = 0;

  constructor(columns: readonly ColumnSpec[], shape: PointsShape) {
    const fixed = new Set(['timeseriesId', 'externalId', 'granularity', 'timestamp']);
    this.valueColumns = columns.filter((spec) => !fixed.has(spec.name));
    const known = new Set(['timestamp', ...this.valueColumns.map((spec) => spec.name)]);
    if (shape.aggregates === undefined) for (const name of ['value', 'status']) known.add(name);
    this.takes = this.valueColumns.map((spec) => takeOf(spec, known));
    this.reader = new PointReader(this.valueColumns, known);
    this.stores = this.valueColumns.map((spec) => (spec.kind === 'int64' || spec.kind === 'double' ? new NumberStore() : new TextStore()));
  }

  add(series: SeriesPoints): void {
    let index = this.seriesIndex.get(series.id);
    if (index === undefined) {
      index = this.seriesIds.length;
      this.seriesIndex.set(series.id, index);
      this.seriesIds.push(series.id);
      this.externalIds.push(series.externalId);
    }
    const { points } = series;
    const end = this.rows + points.length;
    if (end > this.times.length) this.growTo(end);
    for (let k = 0; k < points.length; k++) {
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
  }

  /** Point `k` of scanned `points` read from its bytes, not parsed; false when the reader leaves it to value(k). */
  private read(points: PointList, k: number, isString: boolean): boolean {
    const body = points.body!;
    const value = points.plainValue(k);
    if (value >= 0) return this.reader.readPlain(body, value, points.end(k) - 1, isString);
    return this.reader.read(body, points.start(k), isString);
  }

  /**
   * The rows in file order: by series id, then time. A counting sort on the series keeps each
   * series' rows in the order they came, which is time order unless the series was read in windows.
   */
  order(): Uint32Array {
    const ranks = this.seriesIds.map((_, i) => i).sort((a, b) => this.seriesIds[a]! - this.seriesIds[b]!);
    const rankOf = new Int32Array(ranks.length);
    ranks.forEach((index, rank) => (rankOf[index] = rank));
    const starts = new Uint32Array(ranks.length + 1);
    for (let row = 0; row < this.rows; row++) starts[rankOf[this.seriesOf[row]!]! + 1]!++;
    for (let r = 1; r <= ranks.length; r++) starts[r]! += starts[r - 1]!;
    const order = new Uint32Array(this.rows);
    const ends = starts.slice();
    for (let row = 0; row < this.rows; row++) order[ends[rankOf[this.seriesOf[row]!]!]!++] = row;
    // Windows of one long series read in parallel arrive interleaved: such a series is sorted by time.
    for (let r = 0; r < ranks.length; r++) {
      const rows = order.subarray(starts[r], starts[r + 1]);
      if (!this.increasing(rows)) rows.sort((a, b) => this.times[a]! - this.times[b]!);
    }
    return order;
  }

  private increasing(rows: Uint32Array): boolean {
    for (let k = 1; k < rows.length; k++) if (this.times[rows[k]!]! <= this.times[rows[k - 1]!]!) return false;
    return true;
  }

  seriesId(row: number): number {
    return this.seriesIds[this.seriesOf[row]!]!;
  }

  /** A row's series as its index among the shard's series (seriesIdAt, externalIdAt). */
  seriesIndexOf(row: number): number {
    return this.seriesOf[row]!;
  }

  seriesIdAt(index: number): number {
    return this.seriesIds[index]!;
  }

  externalIdAt(index: number): string | undefined {
    return this.externalIds[index];
  }

  /** Value column `c` of a row as one double, and whether it is there (Store.raw); decodeValue gives it back. */
  rawValue(c: number, row: number): number {
    return this.stores[c]!.raw(row);
  }

  hasValue(c: number, row: number): boolean {
    return this.stores[c]!.has(row);
  }

  decodeValue(c: number, raw: number): unknown {
    return this.stores[c]!.decode(raw);
  }

  /**
   * Forgets the rows, keeping the series and the texts seen (their codes stay valid), so that the
   * table holds the next run of rows in the same memory (point-runs.ts).
   */
  clear(): void {
    this.rows = 0;
  }

  externalId(row: number): string | undefined {
    return this.externalIds[this.seriesOf[row]!];
  }

  timestamp(row: number): number {
    return this.times[row]!;
  }

  /** Value column `c` (of valueColumns) of a row. */
  value(c: number, row: number): unknown {
    return this.stores[c]!.get(row);
  }

  private growTo(rows: number): void {
    const size = Math.max(rows, this.times.length * 2);
    const seriesOf = new Int32Array(size);
    seriesOf.set(this.seriesOf);
    this.seriesOf = seriesOf;
    const times = new Float64Array(size);
    times.set(this.times);
    this.times = times;
  }
}

/** How the column `spec` is read from a point: `known` are the fields that have a column (or are the status). */
function takeOf(spec: ColumnSpec, known: ReadonlySet<string>): Take {
  switch (spec.name) {
    case 'value':
      return (point, isString) => (isString ? null : numeric(point.value));
    case 'valueString':
      return (point, isString) => (isString && typeof point.value === 'string' ? point.value : null);
    case 'statusCode':
      // The platform leaves the Good status (code 0) out of the point.
      return (point) => (point.status === undefined ? 0 : ((point.status as { code: number }).code));
    case 'statusSymbol':
      return (point) => (point.status === undefined ? 'Good' : ((point.status as { symbol?: string }).symbol ?? null));
    case EXTRA_COLUMN:
      return (point) => extraOf(point, known);
    default:
      return (point) => numeric(point[spec.name]);
  }
}

/** The fields of a point outside its columns, as one JSON object; null when there are none. */
function extraOf(point: PointValue, known: ReadonlySet<string>): string | null {
  let extra: Record<string, unknown> | undefined;
  for (const key in point) {
    if (!known.has(key)) (extra ??= Object.create(null) as Record<string, unknown>)[key] = point[key];
  }
  return extra === undefined ? null : JSON.stringify(extra);
}
