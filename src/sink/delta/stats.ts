/**
 * The per-file statistics of a Delta `add` action (delta-io/delta PROTOCOL.md, "Per-file
 * Statistics"), computed from the Arrow batches of one data file, in the shape and formats Spark
 * writes them (its golden tables: `kernel-timestamp-TIMESTAMP_MILLIS`, `parquet-all-types`,
 * `data-skipping-basic-stats-all-types`):
 *
 * - `numRecords`: the file's rows. `nullCount`: every column, a struct's as an object of its
 *   fields' counts (a field counts as null where its struct is), a list's or a map's as the count
 *   of its own nulls. `minValues`/`maxValues`: the columns that have one, a struct's as an object
 *   of its fields'; a column with no non-null value is left out of both, as Spark does.
 * - Integers and floating point numbers: JSON numbers (a long beyond 2^53 written exactly). A float
 *   column holding NaN or an infinity has no min or max: JSON has no such number.
 * - Strings: compared as UTF-8 bytes (what Parquet and Spark compare), the min cut to its first 32
 *   characters (a prefix is a lower bound). The max is the value itself up to 32 characters; a
 *   longer one becomes its 32-character prefix plus a tie-breaker that keeps it an upper bound, as
 *   Spark's truncateMaxStringAgg does: U+007F when the first character cut is below it, U+10FFFF
 *   otherwise, the prefix taken longer over characters that are U+10FFFF themselves; when that
 *   reaches 64 characters the column has no max. Characters are code points here, where Spark
 *   counts UTF-16 units: the same for text without characters beyond U+FFFF, a valid bound either
 *   way.
 * - Timestamps (milliseconds or microseconds): ISO-8601 in UTC with a millisecond fraction,
 *   `2020-02-01T08:09:10.000Z` as Spark writes them, truncated down to the millisecond (the
 *   protocol says readers expect that; our times are whole milliseconds, so nothing is lost).
 *   Dates: `2000-01-01`. A time outside the years 0000 to 9999 leaves the column without a min or
 *   max, as ISO-8601 needs a sign and more digits there.
 * - Booleans, binary, decimals, lists and maps: nullCount only.
 */
import { type DataType, type Data, type Field, type RecordBatch, type Schema, TimeUnit, type Timestamp, Type } from 'apache-arrow';
import { arrowTypeName } from './schema.js';

/** A column's min or max: a number, an exact long, a string, or a struct's values by field. */
export type DeltaStatValue = number | bigint | string | DeltaStatValues;
export interface DeltaStatValues {
  [column: string]: DeltaStatValue;
}
export interface DeltaNullCounts {
  [column: string]: number | DeltaNullCounts;
}

export interface DeltaStats {
  numRecords: number;
  minValues: DeltaStatValues;
  maxValues: DeltaStatValues;
  nullCount: DeltaNullCounts;
}

/** Characters kept of a string's min and max (Spark's `delta.dataSkippingStringPrefixLength`). */
export const STRING_PREFIX = 32;

/** The stats of one data file holding `batches`, all of `schema`. */
export function deltaStats(schema: Schema, batches: readonly RecordBatch[]): DeltaStats {
  const collector = new DeltaStatsCollector(schema);
  for (const batch of batches) collector.add(batch);
  return collector.stats();
}

/**
 * The stats of a data file gathered a batch at a time, as its writer hands the batches on: what
 * each column needs is kept (a count, a least and a greatest value), never the batches.
 */
export class DeltaStatsCollector {
  private readonly columns: Collector[];
  private rows = 0;

  constructor(private readonly schema: Schema) {
    this.columns = schema.fields.map((field) => collector(field.type as DataType));
  }

  add(batch: RecordBatch): void {
    this.schema.fields.forEach((field, c) => {
      const data = batch.data.children[c];
      if (data === undefined || !sameType(data.type, field.type as DataType)) {
        throw new TypeError(`a batch's column ${c} is not ${field.name} ${arrowTypeName(field.type as DataType)}`);
      }
      this.columns[c]!.add(data, validity(data), data.nullCount);
    });
    this.rows += batch.numRows;
  }

  stats(): DeltaStats {
    const stats: DeltaStats = { numRecords: this.rows, minValues: record(), maxValues: record(), nullCount: record() };
    fill(stats, this.schema.fields, this.columns);
    return stats;
  }
}

/** The stats as the `stats` string of an `add` action, members in Spark's order. */
export function deltaStatsJson(stats: DeltaStats): string {
  const { numRecords, minValues, maxValues, nullCount } = stats;
  return json({ numRecords, minValues, maxValues, nullCount });
}

function json(value: unknown): string {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'object' && value !== null) {
    return `{${Object.entries(value).map(([key, member]) => `${JSON.stringify(key)}:${json(member)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** An object without a prototype, so that a column named `__proto__` is a member like any other. */
function record<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

function sameType(a: DataType, b: DataType): boolean {
  return a === b || arrowTypeName(a) === arrowTypeName(b);
}

function fill(target: DeltaStats, fields: readonly Field[], columns: readonly Collector[]): void {
  fields.forEach((field, c) => {
    const column = columns[c]!;
    target.nullCount[field.name] = column.nulls();
    const min = column.min();
    const max = column.max();
    if (min !== undefined) target.minValues[field.name] = min;
    if (max !== undefined) target.maxValues[field.name] = max;
  });
}

/** Whether row `i` of a Data is valid; undefined when every row is. */
type Valid = ((row: number) => boolean) | undefined;

interface Collector {
  /** Adds a Data's values where `valid`; `nulls`: the rows it says are not. */
  add(data: Data, valid: Valid, nulls: number): void;
  nulls(): number | DeltaNullCounts;
  min(): DeltaStatValue | undefined;
  max(): DeltaStatValue | undefined;
}

function collector(type: DataType): Collector {
  switch (type.typeId) {
    case Type.Int:
      return new NumberStats((type as unknown as { bitWidth: number }).bitWidth === 64 ? 'bigint' : 'number');
    case Type.Float:
      // Float16 values are held as their bits: no min or max for them.
      return (type as unknown as { precision: number }).precision === 0 ? new NullStats() : new NumberStats('float');
    case Type.Timestamp: {
      const { unit } = type as unknown as Timestamp;
      if (unit === TimeUnit.MILLISECOND) return new TimeStats(1n);
      if (unit === TimeUnit.MICROSECOND) return new TimeStats(1000n);
      return new NullStats();
    }
    case Type.Date:
      return (type as unknown as { unit: number }).unit === 0 ? new DateStats() : new NullStats();
    case Type.Utf8:
    case Type.LargeUtf8:
      return new StringStats();
    case Type.Struct:
      return new StructStats(type.children);
    default:
      return new NullStats();
  }
}

/**
 * A Data's own validity, read from its bitmap: Data.getValid asks the type whether it is a union,
 * and the Data whether it is nullable, at every row.
 */
function validity(data: Data): Valid {
  if (data.nullCount === 0) return undefined;
  const { nullBitmap: bitmap, offset } = data;
  if (bitmap === undefined || bitmap.length === 0) return (row) => data.getValid(row);
  return (row) => (bitmap[(offset + row) >> 3]! & (1 << ((offset + row) & 7))) !== 0;
}

/** Rows of `length` that `valid` says are null. */
function countNulls(valid: Valid, length: number): number {
  if (valid === undefined) return 0;
  let nulls = 0;
  for (let i = 0; i < length; i++) if (!valid(i)) nulls++;
  return nulls;
}

/** `valid` of a struct's field: its own validity where its struct's rows are valid. */
function within(parent: Valid, data: Data): Valid {
  const own = validity(data);
  if (own === undefined) return parent;
  if (parent === undefined) return own;
  return (row) => parent(row) && own(row);
}

/** A column with a null count only. */
class NullStats implements Collector {
  private count = 0;

  add(_data: Data, _valid: Valid, nulls: number): void {
    this.count += nulls;
  }

  nulls(): number {
    return this.count;
  }

  min(): DeltaStatValue | undefined {
    return undefined;
  }

  max(): DeltaStatValue | undefined {
    return undefined;
  }
}

/** Integers (as number, or as bigint for int64) and floating point numbers. */
class NumberStats<T extends number | bigint> extends NullStats {
  private low: T | undefined;
  private high: T | undefined;
  private nonFinite = false;

  constructor(private readonly kind: 'number' | 'bigint' | 'float') {
    super();
  }

  override add(data: Data, valid: Valid, nulls: number): void {
    super.add(data, valid, nulls);
    if (nulls === data.length) return;
    const values = data.values as ArrayLike<T>;
    for (let i = 0; i < data.length; i++) {
      if (valid !== undefined && !valid(i)) continue;
      const value = values[i]!;
      if (this.kind === 'float' && !Number.isFinite(value)) {
        this.nonFinite = true;
        continue;
      }
      if (this.low === undefined || value < this.low) this.low = value;
      if (this.high === undefined || value > this.high) this.high = value;
    }
  }

  override min(): DeltaStatValue | undefined {
    return this.nonFinite ? undefined : exact(this.low);
  }

  override max(): DeltaStatValue | undefined {
    return this.nonFinite ? undefined : exact(this.high);
  }
}

/** A long as a number where that is exact, else as the bigint (written exactly by deltaStatsJson). */
function exact(value: number | bigint | undefined): number | bigint | undefined {
  if (typeof value !== 'bigint') return value;
  const number = Number(value);
  return Number.isSafeInteger(number) ? number : value;
}

/** 0000-01-01 and 10000-01-01 in ms: ISO-8601 writes the years between with four digits. */
const YEAR_0_MS = -62_167_219_200_000;
const YEAR_10000_MS = 253_402_300_800_000;

function isoTime(ms: number): string | undefined {
  return ms < YEAR_0_MS || ms >= YEAR_10000_MS ? undefined : new Date(ms).toISOString();
}

/** Timestamps, in units of `perMs` a millisecond: the min and max as ISO-8601 of whole milliseconds. */
class TimeStats extends NullStats {
  private low: bigint | undefined;
  private high: bigint | undefined;

  constructor(private readonly perMs: bigint) {
    super();
  }

  override add(data: Data, valid: Valid, nulls: number): void {
    super.add(data, valid, nulls);
    if (nulls === data.length) return;
    const values = data.values as BigInt64Array;
    for (let i = 0; i < data.length; i++) {
      if (valid !== undefined && !valid(i)) continue;
      const value = values[i]!;
      if (this.low === undefined || value < this.low) this.low = value;
      if (this.high === undefined || value > this.high) this.high = value;
    }
  }

  /** Truncated down: the floor of the value in milliseconds, before 1970 as after. */
  private text(value: bigint | undefined): string | undefined {
    if (value === undefined) return undefined;
    const { perMs } = this;
    const floor = value / perMs - (value % perMs < 0n ? 1n : 0n);
    return isoTime(Number(floor));
  }

  override min(): string | undefined {
    return this.text(this.low);
  }

  override max(): string | undefined {
    return this.text(this.high);
  }
}

/** Dates in days since the epoch: `YYYY-MM-DD`. */
class DateStats extends NumberStats<number> {
  constructor() {
    super('number');
  }

  override min(): string | undefined {
    return day(super.min() as number | undefined);
  }

  override max(): string | undefined {
    return day(super.max() as number | undefined);
  }
}

function day(days: number | undefined): string | undefined {
  return days === undefined ? undefined : isoTime(days * 86_400_000)?.slice(0, 10);
}

/** Strings compared as their UTF-8 bytes; only the least and the greatest are decoded. */
class StringStats extends NullStats {
  private low: Uint8Array | undefined;
  private high: Uint8Array | undefined;

  override add(data: Data, valid: Valid, nulls: number): void {
    super.add(data, valid, nulls);
    if (nulls === data.length) return;
    const offsets = data.valueOffsets as ArrayLike<number | bigint>;
    const bytes = data.values as Uint8Array;
    let low: [number, number] | undefined;
    let high: [number, number] | undefined;
    for (let i = 0; i < data.length; i++) {
      if (valid !== undefined && !valid(i)) continue;
      const start = Number(offsets[i]);
      const end = Number(offsets[i + 1]);
      if (low === undefined || compare(bytes, start, end, bytes, low[0], low[1]) < 0) low = [start, end];
      if (high === undefined || compare(bytes, start, end, bytes, high[0], high[1]) > 0) high = [start, end];
    }
    if (low !== undefined) {
      const candidate = bytes.subarray(low[0], low[1]);
      if (this.low === undefined || compare(candidate, 0, candidate.length, this.low, 0, this.low.length) < 0) {
        this.low = candidate.slice();
      }
    }
    if (high !== undefined) {
      const candidate = bytes.subarray(high[0], high[1]);
      if (this.high === undefined || compare(candidate, 0, candidate.length, this.high, 0, this.high.length) > 0) {
        this.high = candidate.slice();
      }
    }
  }

  override min(): string | undefined {
    return this.low === undefined ? undefined : minPrefix(decoder.decode(this.low));
  }

  override max(): string | undefined {
    return this.high === undefined ? undefined : maxPrefix(decoder.decode(this.high));
  }
}

const decoder = new TextDecoder();

function compare(a: Uint8Array, aStart: number, aEnd: number, b: Uint8Array, bStart: number, bEnd: number): number {
  const n = Math.min(aEnd - aStart, bEnd - bStart);
  for (let k = 0; k < n; k++) {
    const difference = a[aStart + k]! - b[bStart + k]!;
    if (difference !== 0) return difference;
  }
  return aEnd - aStart - (bEnd - bStart);
}

/** A string's first STRING_PREFIX characters: no greater than it. */
export function minPrefix(text: string): string {
  const characters = Array.from(text);
  return characters.length <= STRING_PREFIX ? text : characters.slice(0, STRING_PREFIX).join('');
}

const ASCII_MAX = 0x7f;
const UNICODE_MAX = 0x10ffff;

/**
 * A string no longer than STRING_PREFIX characters, or its prefix plus a tie-breaker that keeps it
 * no less than the string (Spark's truncateMaxStringAgg); undefined when the prefix would pass
 * twice that length (a run of U+10FFFF): the column then has no max.
 */
export function maxPrefix(text: string): string | undefined {
  const characters = Array.from(text);
  if (characters.length <= STRING_PREFIX) return text;
  for (let length = STRING_PREFIX; length <= 2 * STRING_PREFIX; length++) {
    if (length >= characters.length) return text;
    const next = characters[length]!.codePointAt(0)!;
    if (next === UNICODE_MAX) continue;
    return characters.slice(0, length).join('') + String.fromCodePoint(next < ASCII_MAX ? ASCII_MAX : UNICODE_MAX);
  }
  return undefined;
}

/** A struct: its fields' stats, each counting a null where the struct is null. */
class StructStats implements Collector {
  private readonly columns: Collector[];

  constructor(private readonly fields: readonly Field[]) {
    this.columns = fields.map((field) => collector(field.type as DataType));
  }

  add(data: Data, valid: Valid, nulls: number): void {
    const rows = within(valid, data);
    const rowNulls = rows === valid ? nulls : countNulls(rows, data.length);
    this.columns.forEach((column, c) => {
      const child = data.children[c]!;
      const fieldValid = within(rows, child);
      column.add(child, fieldValid, fieldValid === rows ? rowNulls : countNulls(fieldValid, child.length));
    });
  }

  nulls(): DeltaNullCounts {
    const counts = record<number | DeltaNullCounts>();
    this.fields.forEach((field, c) => {
      counts[field.name] = this.columns[c]!.nulls();
    });
    return counts;
  }

  min(): DeltaStatValues | undefined {
    return this.values((column) => column.min());
  }

  max(): DeltaStatValues | undefined {
    return this.values((column) => column.max());
  }

  private values(of: (column: Collector) => DeltaStatValue | undefined): DeltaStatValues | undefined {
    const values = record<DeltaStatValue>();
    this.fields.forEach((field, c) => {
      const value = of(this.columns[c]!);
      if (value !== undefined) values[field.name] = value;
    });
    return Object.keys(values).length === 0 ? undefined : values;
  }
}
