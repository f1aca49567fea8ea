/** How a value column of a datapoints shard is held: a double (int64 columns too) or UTF-8 text. */
export type ValueKind = 'number' | 'text';

/** A number column of a block: a double and a presence byte (0: null) a row. */
export interface NumberPart {
  readonly kind: 'number';
  values: Float64Array;
  present: Uint8Array;
}

/** A text column of a block: row i's UTF-8 lies at [ends[i - 1] (0 for row 0), ends[i]) of `bytes`. */
export interface TextPart {
  readonly kind: 'text';
  present: Uint8Array;
  ends: Int32Array;
  bytes: Uint8Array;
}

export type BlockPart = NumberPart | TextPart;

const PADDING = new Uint8Array(8);

const pad8 = (size: number) => (size + 7) & ~7;

const bytesOf = (array: Float64Array | Int32Array | Uint8Array) =>
  new Uint8Array(array.buffer, array.byteOffset, array.byteLength);

/** How a column's rows are present in a block on disk: none (nothing more is written of a text column), all, some. */
const NONE = 0;
const ALL = 1;
const SOME = 2;

function presence(present: Uint8Array, rows: number): number {
  let count = 0;
  for (let i = 0; i < rows; i++) count += present[i]!;
  return count === 0 ? NONE : count === rows ? ALL : SOME;
}

/**
 * Arrays of `rows` zeros or ones, shared by every block read back that needs them: the columns
 * whose rows are all null or all present. Nothing writes to a block read back.
 */
const shared = { zeros: new Uint8Array(0), ones: new Uint8Array(0), ends: new Int32Array(0) };

function filled(flag: number, rows: number): Uint8Array {
  if (shared.zeros.length < rows) {
    shared.zeros = new Uint8Array(rows);
    shared.ones = new Uint8Array(rows).fill(1);
  }
  return (flag === NONE ? shared.zeros : shared.ones).subarray(0, rows);
}

function noEnds(rows: number): Int32Array {
  if (shared.ends.length < rows) shared.ends = new Int32Array(rows);
  return shared.ends.subarray(0, rows);
}

/**
 * Rows of a datapoints shard in file order (by series, then time), column by column: each row's
 * series (its index in the shard's SeriesTable), time and value columns. The unit a sorted run is
 * written and read back in, and what the Arrow batches are built from.
 *
 * On disk a block is a header (Int32: rows, then for each value column whether its rows are
 * present (none, all, some) and its text's bytes) and each array after it, every one starting at
 * a multiple of 8 bytes so that a block read back is a set of typed-array views of the bytes read,
 * not a copy. A column's presence bytes are written only when some of its rows are null and some
 * not, and of a text column whose rows are all null nothing more: a raw numeric point takes about
 * 20 bytes. The bytes are the machine's own order: a runs file is scratch, read back only by the
 * process that wrote it.
 */
export class RowBlock {
  rows = 0;

  private constructor(
    readonly series: Int32Array,
    readonly times: Float64Array,
    readonly parts: BlockPart[],
  ) {}

  /** An empty block with room for `capacity` rows (text bytes grow as needed). */
  static allocate(kinds: readonly ValueKind[], capacity: number): RowBlock {
    const parts = kinds.map((kind): BlockPart => {
      const present = new Uint8Array(capacity);
      if (kind === 'number') return { kind, values: new Float64Array(capacity), present };
      return { kind, present, ends: new Int32Array(capacity), bytes: new Uint8Array(capacity * 16) };
    });
    return new RowBlock(new Int32Array(capacity), new Float64Array(capacity), parts);
  }

  /** The block written as `bytes` by `serialized` (views of them, valid as long as they are). */
  static read(kinds: readonly ValueKind[], bytes: Uint8Array): RowBlock {
    const { buffer } = bytes;
    let at = 0;
    /** The offset in `buffer` of the next array, of `size` bytes. */
    const next = (size: number) => {
      const offset = bytes.byteOffset + at;
      at += pad8(size);
      return offset;
    };
    const header = new Int32Array(buffer, next(4 * (1 + 2 * kinds.length)), 1 + 2 * kinds.length);
    const rows = header[0]!;
    const series = new Int32Array(buffer, next(4 * rows), rows);
    const times = new Float64Array(buffer, next(8 * rows), rows);
    const parts = kinds.map((kind, c): BlockPart => {
      const flag = header[1 + 2 * c]!;
      if (kind === 'number') {
        const values = new Float64Array(buffer, next(8 * rows), rows);
        return { kind, values, present: flag === SOME ? new Uint8Array(buffer, next(rows), rows) : filled(flag, rows) };
      }
      if (flag === NONE) return { kind, present: filled(NONE, rows), ends: noEnds(rows), bytes: new Uint8Array(0) };
      const present = flag === SOME ? new Uint8Array(buffer, next(rows), rows) : filled(ALL, rows);
      const ends = new Int32Array(buffer, next(4 * rows), rows);
      const length = header[2 + 2 * c]!;
      return { kind, present, ends, bytes: new Uint8Array(buffer, next(length), length) };
    });
    if (at !== bytes.length) throw new Error(`A block of ${rows} rows read back is ${bytes.length} bytes, not ${at}`);
    const block = new RowBlock(series, times, parts);
    block.rows = rows;
    return block;
  }

  /** Bytes of text column `part`'s rows. */
  textLength(part: TextPart): number {
    return this.rows === 0 ? 0 : part.ends[this.rows - 1]!;
  }

  /** Where row `row` of text column `part` starts in its bytes. */
  static textStart(part: TextPart, row: number): number {
    return row === 0 ? 0 : part.ends[row - 1]!;
  }

  /** Makes room for `size` bytes of text in `part`, those held kept. */
  static textRoom(part: TextPart, size: number): void {
    if (size <= part.bytes.length) return;
    const bytes = new Uint8Array(Math.max(size, part.bytes.length * 2));
    bytes.set(part.bytes);
    part.bytes = bytes;
  }

  /** The block's bytes as the runs file holds them, as a list of views and paddings: no row is copied. */
  serialized(): Uint8Array[] {
    const { rows } = this;
    const header = new Int32Array(1 + 2 * this.parts.length);
    header[0] = rows;
    const arrays = [bytesOf(header), bytesOf(this.series.subarray(0, rows)), bytesOf(this.times.subarray(0, rows))];
    this.parts.forEach((part, c) => {
      const flag = presence(part.present, rows);
      header[1 + 2 * c] = flag;
      const present = flag === SOME ? [part.present.subarray(0, rows)] : [];
      if (part.kind === 'number') {
        arrays.push(bytesOf(part.values.subarray(0, rows)), ...present);
      } else if (flag !== NONE) {
        header[2 + 2 * c] = this.textLength(part);
        arrays.push(...present, bytesOf(part.ends.subarray(0, rows)), part.bytes.subarray(0, this.textLength(part)));
      }
    });
    const out: Uint8Array[] = [];
    for (const array of arrays) {
      out.push(array);
      if (pad8(array.length) > array.length) out.push(PADDING.subarray(0, pad8(array.length) - array.length));
    }
    return out;
  }
}
