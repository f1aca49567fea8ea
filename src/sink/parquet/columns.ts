/**
 * Arrow column buffers filled by hand: typed arrays, offsets and validity bitmaps, reused from one
 * row group to the next. apache-arrow's Builders do the same job about 4x slower (bench/RESULTS.md).
 */
import { Bool, type Data, type DataType, Float64, Int64, makeData, TimestampMillisecond, Type, Utf8 } from 'apache-arrow';

const TWO_32 = 4294967296;
const encoder = new TextEncoder();

/** Thrown for a value that does not fit its column; the caller adds which item and field. */
export class ColumnTypeError extends TypeError {}

export function grow<T extends Int32Array | Uint8Array>(array: T, size: number): T {
  const bigger = new (array.constructor as new (n: number) => T)(size);
  bigger.set(array);
  return bigger;
}

export function wrongType(column: string, type: DataType): Error {
  return new Error(`${column} cannot fill an Arrow ${Type[type.typeId]} column`);
}

/** Validity bitmap, least significant bit first. */
export class Validity {
  private bits: Uint8Array;
  nullCount = 0;

  constructor(capacity: number) {
    this.bits = new Uint8Array((capacity + 7) >> 3);
  }

  set(i: number, valid: boolean): void {
    if (i >> 3 >= this.bits.length) this.bits = grow(this.bits, this.bits.length * 2 + 1);
    if (valid) this.bits[i >> 3]! |= 1 << (i & 7);
    else this.nullCount++;
  }

  /**
   * Rows `at` to `at + n - 1`: valid where `present[from]` to `present[from + n - 1]` is 1, null
   * where 0; every one valid when `present` is undefined.
   */
  copy(present: Uint8Array | undefined, from: number, n: number, at: number): void {
    const bytes = (at + n + 7) >> 3;
    if (bytes > this.bits.length) this.bits = grow(this.bits, Math.max(this.bits.length * 2, bytes));
    const { bits } = this;
    if (present === undefined) {
      for (let row = at; row < at + n; row++) bits[row >> 3]! |= 1 << (row & 7);
      return;
    }
    let nulls = 0;
    for (let i = 0; i < n; i++) {
      const row = at + i;
      if (present[from + i] === 1) bits[row >> 3]! |= 1 << (row & 7);
      else nulls++;
    }
    this.nullCount += nulls;
  }

  /** The row count, null count and bitmap of `length` rows, as makeData takes them. */
  rows(length: number) {
    return { length, nullCount: this.nullCount, nullBitmap: this.bitmap(length) };
  }

  /** Undefined when nothing is null: the reader then needs no bitmap. */
  bitmap(length: number): Uint8Array | undefined {
    return this.nullCount === 0 ? undefined : this.bits.subarray(0, (length + 7) >> 3);
  }

  reset(): void {
    this.bits.fill(0);
    this.nullCount = 0;
  }
}

export interface Column {
  readonly length: number;
  push(value: unknown): void;
  toData(type: DataType): Data;
  reset(): void;
}

/**
 * A column that can say, without changing anything, whether push() takes a value: a struct field or
 * list element (typed-columns.ts) is checked whole before any of it is written.
 */
export interface CheckedColumn extends Column {
  /** True for null, undefined and every value push() writes. */
  accepts(value: unknown): boolean;
}

const isNull = (value: unknown) => value === undefined || value === null;

/**
 * INT64 (ids, epoch-millisecond times): each safe integer split into two 32-bit words, no BigInt;
 * a BigInt is taken too, for the int64 values beyond 2^53 only it holds exactly.
 */
export class Int64Column implements CheckedColumn {
  private words: Int32Array;
  private readonly validity: Validity;
  length = 0;

  constructor(capacity: number) {
    this.words = new Int32Array(capacity * 2);
    this.validity = new Validity(capacity);
  }

  accepts(value: unknown): boolean {
    return isNull(value) || Number.isSafeInteger(value) || (typeof value === 'bigint' && BigInt.asIntN(64, value) === value);
  }

  push(value: unknown): void {
    const i = this.length;
    if (2 * i + 2 > this.words.length) this.words = grow(this.words, this.words.length * 2 + 2);
    if (value === undefined || value === null) {
      this.validity.set(i, false);
      this.words[2 * i] = 0;
      this.words[2 * i + 1] = 0;
    } else if (typeof value === 'bigint') {
      // An int64 beyond 2^53, read exactly from the bytes (data-model properties).
      if (BigInt.asIntN(64, value) !== value) throw new ColumnTypeError(`expected a 64-bit integer, got ${value}`);
      this.validity.set(i, true);
      this.words[2 * i] = Number(BigInt.asIntN(32, value));
      this.words[2 * i + 1] = Number(value >> 32n);
    } else {
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
        throw new ColumnTypeError(`expected an integer, got ${describe(value)}`);
      }
      this.validity.set(i, true);
      const high = Math.floor(value / TWO_32);
      this.words[2 * i] = value - high * TWO_32;
      this.words[2 * i + 1] = high;
    }
    this.length++;
  }

  /**
   * Rows `from` to `from + n - 1` of `values`, each a safe integer, null where `present` is 0 (every
   * one valid when it is undefined); all are checked before any is written.
   */
  pushRun(values: Float64Array, present: Uint8Array | undefined, from: number, n: number): void {
    for (let i = from; i < from + n; i++) {
      if ((present === undefined || present[i] === 1) && !Number.isSafeInteger(values[i])) {
        throw new ColumnTypeError(`expected an integer, got ${describe(values[i])}`);
      }
    }
    const at = this.length;
    if (2 * (at + n) > this.words.length) this.words = grow(this.words, Math.max(this.words.length * 2, 2 * (at + n)));
    const { words } = this;
    for (let i = 0; i < n; i++) {
      const value = present === undefined || present[from + i] === 1 ? values[from + i]! : 0;
      const high = Math.floor(value / TWO_32);
      words[2 * (at + i)] = value - high * TWO_32;
      words[2 * (at + i) + 1] = high;
    }
    this.validity.copy(present, from, n, at);
    this.length += n;
  }

  toData(type: DataType): Data<Int64> | Data<TimestampMillisecond> {
    if (type instanceof Int64) return this.int64Data(type);
    if (type instanceof TimestampMillisecond) return makeData({ ...this.props(), type });
    throw wrongType('Int64Column', type);
  }

  int64Data(type: Int64): Data<Int64> {
    return makeData({ ...this.props(), type });
  }

  private props() {
    const { length } = this;
    return {
      ...this.validity.rows(length),
      data: new BigInt64Array(this.words.buffer, 0, length),
    };
  }

  reset(): void {
    this.length = 0;
    this.validity.reset();
  }
}

/** UTF-8 strings: Int32 offsets and one growing byte buffer written with TextEncoder.encodeInto. */
export class Utf8Column implements CheckedColumn {
  private offsets: Int32Array;
  private bytes: Uint8Array;
  private end = 0;
  private readonly validity: Validity;
  length = 0;

  /** `bytesPerRow`: room for text at first (it grows past it); default 16. */
  constructor(capacity: number, bytesPerRow = 16) {
    this.offsets = new Int32Array(capacity + 1);
    this.bytes = new Uint8Array(capacity * bytesPerRow);
    this.validity = new Validity(capacity);
  }

  accepts(value: unknown): boolean {
    return isNull(value) || typeof value === 'string';
  }

  push(value: unknown): void {
    const i = this.length;
    if (i + 2 > this.offsets.length) this.offsets = grow(this.offsets, this.offsets.length * 2);
    if (value === undefined || value === null) {
      this.validity.set(i, false);
    } else {
      if (typeof value !== 'string') throw new ColumnTypeError(`expected a string, got ${describe(value)}`);
      this.validity.set(i, true);
      if (this.end + value.length * 3 > this.bytes.length) {
        this.bytes = grow(this.bytes, Math.max(this.bytes.length * 2, this.end + value.length * 3));
      }
      this.end += encoder.encodeInto(value, this.bytes.subarray(this.end)).written;
    }
    this.offsets[i + 1] = this.end;
    this.length++;
  }

  /** A string given as its UTF-8 bytes, [start, end) of `source`. */
  pushUtf8(source: Uint8Array, start: number, end: number): void {
    const i = this.length;
    if (i + 2 > this.offsets.length) this.offsets = grow(this.offsets, this.offsets.length * 2);
    this.validity.set(i, true);
    const size = end - start;
    if (this.end + size > this.bytes.length) {
      this.bytes = grow(this.bytes, Math.max(this.bytes.length * 2, this.end + size));
    }
    const { bytes } = this;
    // Most strings are short: a loop costs less than a view to copy from.
    if (size < 64) for (let k = 0; k < size; k++) bytes[this.end + k] = source[start + k]!;
    else bytes.set(source.subarray(start, end), this.end);
    this.end += size;
    this.offsets[i + 1] = this.end;
    this.length++;
  }

  /**
   * Rows `from` to `from + n - 1` of strings laid end to end in `source`: row k's UTF-8 ends at
   * `ends[k]` and starts where row k - 1's ends (row `from`'s at `start`), and it is null where
   * `present[k]` is 0 (no bytes). One copy of their bytes.
   */
  pushRun(source: Uint8Array, start: number, ends: Int32Array, present: Uint8Array, from: number, n: number): void {
    const at = this.length;
    if (at + n + 1 > this.offsets.length) {
      this.offsets = grow(this.offsets, Math.max(this.offsets.length * 2, at + n + 1));
    }
    const size = n === 0 ? 0 : ends[from + n - 1]! - start;
    if (this.end + size > this.bytes.length) {
      this.bytes = grow(this.bytes, Math.max(this.bytes.length * 2, this.end + size));
    }
    this.bytes.set(source.subarray(start, start + size), this.end);
    const { offsets } = this;
    const shift = this.end - start;
    for (let i = 0; i < n; i++) offsets[at + i + 1] = shift + ends[from + i]!;
    this.end += size;
    this.validity.copy(present, from, n, at);
    this.length += n;
  }

  toData(type: DataType): Data<Utf8> {
    if (!(type instanceof Utf8)) throw wrongType('Utf8Column', type);
    const { length } = this;
    return makeData({
      type,
      ...this.validity.rows(length),
      valueOffsets: this.offsets.subarray(0, length + 1),
      data: this.bytes.subarray(0, this.end),
    });
  }

  reset(): void {
    this.length = 0;
    this.end = 0;
    this.validity.reset();
  }
}

/** BOOLEAN: values packed eight to a byte, least significant bit first, as the validity bitmap. */
export class BoolColumn implements CheckedColumn {
  private bits: Uint8Array;
  private readonly validity: Validity;
  length = 0;

  constructor(capacity: number) {
    this.bits = new Uint8Array((capacity + 7) >> 3);
    this.validity = new Validity(capacity);
  }

  accepts(value: unknown): boolean {
    return isNull(value) || typeof value === 'boolean';
  }

  push(value: unknown): void {
    const i = this.length;
    if (i >> 3 >= this.bits.length) this.bits = grow(this.bits, this.bits.length * 2 + 1);
    if (value === undefined || value === null) {
      this.validity.set(i, false);
    } else {
      if (typeof value !== 'boolean') throw new ColumnTypeError(`expected true or false, got ${describe(value)}`);
      this.validity.set(i, true);
      if (value) this.bits[i >> 3]! |= 1 << (i & 7);
    }
    this.length++;
  }

  toData(type: DataType): Data<Bool> {
    if (!(type instanceof Bool)) throw wrongType('BoolColumn', type);
    const { length } = this;
    return makeData({
      type,
      ...this.validity.rows(length),
      data: this.bits.subarray(0, (length + 7) >> 3),
    });
  }

  reset(): void {
    this.bits.fill(0);
    this.length = 0;
    this.validity.reset();
  }
}

/** DOUBLE: a finite JSON number, an integer such as 1 included. */
export class Float64Column implements CheckedColumn {
  private values: Float64Array;
  private readonly validity: Validity;
  length = 0;

  constructor(capacity: number) {
    this.values = new Float64Array(capacity);
    this.validity = new Validity(capacity);
  }

  accepts(value: unknown): boolean {
    return isNull(value) || typeof value === 'number';
  }

  push(value: unknown): void {
    const i = this.length;
    if (i >= this.values.length) {
      const bigger = new Float64Array(this.values.length * 2 + 1);
      bigger.set(this.values);
      this.values = bigger;
    }
    if (value === undefined || value === null) {
      this.validity.set(i, false);
      this.values[i] = 0;
    } else {
      if (typeof value !== 'number') throw new ColumnTypeError(`expected a number, got ${describe(value)}`);
      this.validity.set(i, true);
      this.values[i] = value;
    }
    this.length++;
  }

  /** Rows `from` to `from + n - 1` of `values`, null where `present` is 0 (their values copied as they are). */
  pushRun(values: Float64Array, present: Uint8Array, from: number, n: number): void {
    const at = this.length;
    if (at + n > this.values.length) {
      const bigger = new Float64Array(Math.max(this.values.length * 2, at + n));
      bigger.set(this.values);
      this.values = bigger;
    }
    this.values.set(values.subarray(from, from + n), at);
    this.validity.copy(present, from, n, at);
    this.length += n;
  }

  toData(type: DataType): Data<Float64> {
    if (!(type instanceof Float64)) throw wrongType('Float64Column', type);
    const { length } = this;
    return makeData({
      type,
      ...this.validity.rows(length),
      data: this.values.subarray(0, length),
    });
  }

  reset(): void {
    this.length = 0;
    this.validity.reset();
  }
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value);
  return `${typeof value} ${text.length > 40 ? `${text.slice(0, 40)}...` : text}`;
}
