/**
 * The columns of a datapoints shard's Arrow batches, each filled straight from RowBlocks' typed
 * arrays (a range of rows at a time where a column allows) into buffers reused batch after batch.
 */
import { type Data, type DataType, Float64, Int64, makeData, TimestampMillisecond, Utf8 } from 'apache-arrow';
import type { ColumnSpec } from '../../resources/index.js';
import { ColumnTypeError, describe, grow, wrongType } from '../parquet/columns.js';
import { type BlockPart, type NumberPart, RowBlock, type TextPart } from './row-block.js';
import type { SeriesTable } from './series-table.js';

const TWO_32 = 4294967296;

/** A validity bitmap (least significant bit first) and its count of nulls. */
class Bits {
  readonly bits: Uint8Array;
  nulls = 0;

  constructor(capacity: number) {
    this.bits = new Uint8Array((capacity + 7) >> 3);
  }

  /** Rows `at` to `at + n - 1` valid where `present[from..]` is 1. */
  copy(present: Uint8Array, from: number, n: number, at: number): void {
    for (let i = 0; i < n; i++) {
      const row = at + i;
      if (present[from + i] === 1) this.bits[row >> 3]! |= 1 << (row & 7);
      else this.nulls++;
    }
  }

  /** As makeData takes them; no bitmap when nothing is null, as readers need none then. */
  rows(length: number) {
    const nullBitmap = this.nulls === 0 ? undefined : this.bits.subarray(0, (length + 7) >> 3);
    return { length, nullCount: this.nulls, nullBitmap };
  }

  /** Every row null: `length` nulls, the bitmap all zeros. */
  none(length: number) {
    return { length, nullCount: length, nullBitmap: this.bits.subarray(0, (length + 7) >> 3) };
  }

  reset(): void {
    this.bits.fill(0);
    this.nulls = 0;
  }
}

/** UTF-8 text: offsets and bytes. */
class Texts {
  readonly offsets: Int32Array;
  bytes: Uint8Array;
  end = 0;

  constructor(capacity: number) {
    this.offsets = new Int32Array(capacity + 1);
    this.bytes = new Uint8Array(capacity * 8);
  }

  room(size: number): void {
    if (this.end + size <= this.bytes.length) return;
    this.bytes = grow(this.bytes, Math.max(this.bytes.length * 2, this.end + size));
  }

  data(type: DataType, validity: ReturnType<Bits['rows']>): Data<Utf8> {
    if (!(type instanceof Utf8)) throw wrongType('a text column', type);
    const valueOffsets = this.offsets.subarray(0, validity.length + 1);
    return makeData({ type, ...validity, valueOffsets, data: this.bytes.subarray(0, this.end) });
  }
}

/** An int64 (or millisecond timestamp) a row as two 32-bit words, no BigInt; `number` a safe integer. */
function putWords(words: Int32Array, row: number, number: number): void {
  const high = Math.floor(number / TWO_32);
  words[2 * row] = number - high * TWO_32;
  words[2 * row + 1] = high;
}

function int64Data(type: DataType, words: Int32Array, validity: ReturnType<Bits['rows']>): Data {
  const data = new BigInt64Array(words.buffer, 0, validity.length);
  if (type instanceof Int64) return makeData({ type, ...validity, data });
  if (type instanceof TimestampMillisecond) return makeData({ type, ...validity, data });
  throw wrongType('an int64 column', type);
}

/** One column of a batch: fills rows from a block's range, then gives its Arrow data for the batch. */
export interface BatchColumn {
  copy(block: RowBlock, from: number, n: number, at: number): void;
  data(type: DataType, length: number): Data;
  reset(): void;
}

/** The series' ids (of `series`). */
export function seriesIds(series: SeriesTable, capacity: number): BatchColumn {
  const words = new Int32Array(2 * capacity);
  const none = new Bits(0);
  return {
    copy: (block, from, n, at) => {
      for (let i = 0; i < n; i++) putWords(words, at + i, series.id(block.series[from + i]!));
    },
    data: (type, length) => int64Data(type, words, none.rows(length)),
    reset: () => undefined,
  };
}

/** The series' externalIds (of `series`): each copied from its UTF-8, encoded once per series. */
export function externalIds(series: SeriesTable, capacity: number): BatchColumn {
  const texts = new Texts(capacity);
  const validity = new Bits(capacity);
  const named = new Uint8Array(capacity);
  return {
    copy: (block, from, n, at) => {
      for (let i = 0; i < n; i++) {
        const index = block.series[from + i]!;
        named[at + i] = series.hasExternalId(index) ? 1 : 0;
        const start = series.start(index);
        const size = series.end(index) - start;
        texts.room(size);
        const { bytes, end } = texts;
        // externalIds are short: a loop costs less than a view to copy from.
        for (let k = 0; k < size; k++) bytes[end + k] = series.bytes[start + k]!;
        texts.end += size;
        texts.offsets[at + i + 1] = texts.end;
      }
      validity.copy(named, at, n, at);
    },
    data: (type, length) => texts.data(type, validity.rows(length)),
    reset: () => {
      texts.end = 0;
      validity.reset();
    },
  };
}

/** The rows' times, as epoch milliseconds. */
export function timestamps(capacity: number): BatchColumn {
  const words = new Int32Array(2 * capacity);
  const none = new Bits(0);
  return {
    copy: (block, from, n, at) => {
      for (let i = 0; i < n; i++) putWords(words, at + i, block.times[from + i]!);
    },
    data: (type, length) => int64Data(type, words, none.rows(length)),
    reset: () => undefined,
  };
}

/** The same text in every row (an aggregates stream's granularity), or null in every row. */
export function constantText(text: string | undefined, capacity: number): BatchColumn {
  const value = text === undefined ? new Uint8Array(0) : Buffer.from(text);
  const texts = new Texts(capacity);
  texts.bytes = new Uint8Array(value.length * capacity);
  for (let row = 0; row < capacity; row++) {
    texts.bytes.set(value, row * value.length);
    texts.offsets[row + 1] = (row + 1) * value.length;
  }
  const validity = new Bits(capacity);
  return {
    copy: () => undefined,
    data: (type, length) => {
      texts.end = length * value.length;
      return texts.data(type, text === undefined ? validity.none(length) : validity.rows(length));
    },
    reset: () => undefined,
  };
}

/** Value column `spec`, the block's part `c`. */
export function valueColumn(spec: ColumnSpec, c: number, capacity: number): BatchColumn {
  const validity = new Bits(capacity);
  const partOf = (block: RowBlock): BlockPart => block.parts[c]!;
  if (spec.kind === 'double') {
    const values = new Float64Array(capacity);
    return {
      copy: (block, from, n, at) => {
        const part = partOf(block) as NumberPart;
        values.set(part.values.subarray(from, from + n), at);
        validity.copy(part.present, from, n, at);
      },
      data: (type, length) => {
        if (!(type instanceof Float64)) throw wrongType('a double column', type);
        return makeData({ type, ...validity.rows(length), data: values.subarray(0, length) });
      },
      reset: () => validity.reset(),
    };
  }
  if (spec.kind === 'int64') {
    const words = new Int32Array(2 * capacity);
    return {
      copy: (block, from, n, at) => {
        const part = partOf(block) as NumberPart;
        for (let i = 0; i < n; i++) {
          const value = part.present[from + i] === 1 ? part.values[from + i]! : 0;
          // The answer's check lets only safe integers through; anything else would be written wrong.
          if (!Number.isSafeInteger(value)) throw new ColumnTypeError(`${spec.name}: expected an integer, got ${describe(value)}`);
          putWords(words, at + i, value);
        }
        validity.copy(part.present, from, n, at);
      },
      data: (type, length) => int64Data(type, words, validity.rows(length)),
      reset: () => validity.reset(),
    };
  }
  const texts = new Texts(capacity);
  return {
    copy: (block, from, n, at) => {
      const part = partOf(block) as TextPart;
      const start = RowBlock.textStart(part, from);
      const size = n === 0 ? 0 : part.ends[from + n - 1]! - start;
      texts.room(size);
      texts.bytes.set(part.bytes.subarray(start, start + size), texts.end);
      for (let i = 0; i < n; i++) texts.offsets[at + i + 1] = texts.end + part.ends[from + i]! - start;
      texts.end += size;
      validity.copy(part.present, from, n, at);
    },
    data: (type, length) => texts.data(type, validity.rows(length)),
    reset: () => {
      texts.end = 0;
      validity.reset();
    },
  };
}
