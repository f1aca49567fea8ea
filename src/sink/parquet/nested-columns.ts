/** LIST and MAP columns, built on the flat columns of columns.ts. */
import { type Data, type DataType, Int64, List, Map_, makeData, type Struct, type Utf8 } from 'apache-arrow';
import {
  type Column,
  ColumnTypeError,
  describe,
  grow,
  Int64Column,
  Utf8Column,
  Validity,
  wrongType,
} from './columns.js';

/**
 * A list-shaped column (LIST, MAP): per row, null or a run of child entries; offsets mark where
 * each row's run starts. An absent value stays null, an empty one stays empty.
 */
abstract class NestedColumn<V> implements Column {
  protected offsets: Int32Array;
  protected readonly validity: Validity;
  length = 0;

  constructor(capacity: number) {
    this.offsets = new Int32Array(capacity + 1);
    this.validity = new Validity(capacity);
  }

  /** Checks a non-null value's shape and returns it typed, or throws a ColumnTypeError. */
  protected abstract accept(value: unknown): V;
  /** Appends the value's entries to the child columns. */
  protected abstract pushEntries(value: V): void;
  /** Entries in the child columns so far. */
  protected abstract entries(): number;
  abstract toData(type: DataType): Data;
  protected abstract resetEntries(): void;

  push(value: unknown): void {
    const i = this.length;
    if (i + 2 > this.offsets.length) this.offsets = grow(this.offsets, this.offsets.length * 2);
    if (value === undefined || value === null) {
      this.validity.set(i, false);
    } else {
      const accepted = this.accept(value);
      this.validity.set(i, true);
      this.pushEntries(accepted);
    }
    this.offsets[i + 1] = this.entries();
    this.length++;
  }

  /** Starts a row that is not null; its entries follow (`element`, `entry`), then closeRow(). */
  openRow(): void {
    const i = this.length;
    if (i + 2 > this.offsets.length) this.offsets = grow(this.offsets, this.offsets.length * 2);
    this.validity.set(i, true);
  }

  closeRow(): void {
    this.offsets[this.length + 1] = this.entries();
    this.length++;
  }

  protected rowProps() {
    const { length } = this;
    return {
      ...this.validity.rows(length),
      valueOffsets: this.offsets.subarray(0, length + 1),
    };
  }

  reset(): void {
    this.length = 0;
    this.validity.reset();
    this.resetEntries();
  }
}

/** LIST<INT64>. */
export class Int64ListColumn extends NestedColumn<unknown[]> {
  private readonly values: Int64Column;

  constructor(capacity: number) {
    super(capacity);
    this.values = new Int64Column(capacity * 2);
  }

  protected accept(value: unknown): unknown[] {
    if (!Array.isArray(value)) throw new ColumnTypeError(`expected a list of integers, got ${describe(value)}`);
    return value as unknown[];
  }

  protected pushEntries(list: unknown[]): void {
    for (const value of list) this.values.push(value);
  }

  /** One element of the row opened with openRow(). */
  element(value: number | null): void {
    this.values.push(value);
  }

  protected entries(): number {
    return this.values.length;
  }

  toData(type: DataType): Data<List<Int64>> {
    if (!(type instanceof List) || !(type.valueType instanceof Int64)) throw wrongType('Int64ListColumn', type);
    const child = this.values.int64Data(type.valueType);
    return makeData({ ...this.rowProps(), type: type as List<Int64>, child });
  }

  protected resetEntries(): void {
    this.values.reset();
  }
}

/**
 * LIST<STRING> of an item's labels: the platform's `[{externalId}]` as the list of their
 * externalIds. A label with any other field is refused, so nothing is dropped.
 */
export class LabelListColumn extends NestedColumn<unknown[]> {
  private readonly values: Utf8Column;

  constructor(capacity: number) {
    super(capacity);
    this.values = new Utf8Column(capacity);
  }

  protected accept(value: unknown): unknown[] {
    const list = Array.isArray(value) ? (value as unknown[]) : undefined;
    const bad = list === undefined ? -1 : list.findIndex((label) => !isLabel(label));
    if (list === undefined || bad >= 0) {
      const got = list === undefined ? describe(value) : `element ${bad}: ${describe(list[bad])}`;
      throw new ColumnTypeError(`expected a list of {externalId: string} objects, got ${got}`);
    }
    return list;
  }

  protected pushEntries(list: unknown[]): void {
    for (const label of list) this.values.push((label as { externalId: string }).externalId);
  }

  /**
   * One label of the row opened with openRow(): its externalId, the string token [start, end) of
   * `source` (quotes included), copied as its bytes or, when `escaped`, decoded.
   */
  element(source: Buffer, start: number, end: number, escaped: boolean): void {
    if (escaped) this.values.push(JSON.parse(source.toString('utf8', start, end)));
    else this.values.pushUtf8(source, start + 1, end - 1);
  }

  protected entries(): number {
    return this.values.length;
  }

  toData(type: DataType): Data<List<Utf8>> {
    if (!(type instanceof List)) throw wrongType('LabelListColumn', type);
    const child = this.values.toData((type as List<Utf8>).valueType);
    return makeData({ ...this.rowProps(), type: type as List<Utf8>, child });
  }

  protected resetEntries(): void {
    this.values.reset();
  }
}

function isLabel(label: unknown): boolean {
  if (typeof label !== 'object' || label === null || Array.isArray(label)) return false;
  const keys = Object.keys(label);
  return keys.length === 1 && keys[0] === 'externalId' && typeof (label as { externalId: unknown }).externalId === 'string';
}

/** MAP<STRING, STRING>: Map_ over List<Struct<key, value>>. */
export class StringMapColumn extends NestedColumn<Record<string, unknown>> {
  private readonly keys: Utf8Column;
  private readonly values: Utf8Column;

  constructor(capacity: number) {
    super(capacity);
    this.keys = new Utf8Column(capacity * 4);
    this.values = new Utf8Column(capacity * 4);
  }

  protected accept(value: unknown): Record<string, unknown> {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new ColumnTypeError(`expected an object of strings, got ${describe(value)}`);
    }
    return value as Record<string, unknown>;
  }

  protected pushEntries(map: Record<string, unknown>): void {
    for (const [key, value] of Object.entries(map)) {
      if (typeof value !== 'string') throw new ColumnTypeError(`key '${key}' holds ${describe(value)}, not a string`);
      this.keys.push(key);
      this.values.push(value);
    }
  }

  /**
   * One entry of the row opened with openRow(): its key as the UTF-8 bytes [keyStart, keyEnd) of
   * `source`, or `key` when given (decoded); its value as the bytes [valueStart, valueEnd), or,
   * when `escaped`, the string token around them decoded.
   */
  entry(
    source: Buffer,
    keyStart: number,
    keyEnd: number,
    key: string | undefined,
    valueStart: number,
    valueEnd: number,
    escaped: boolean,
  ): void {
    if (key === undefined) this.keys.pushUtf8(source, keyStart, keyEnd);
    else this.keys.push(key);
    if (escaped) this.values.push(JSON.parse(source.toString('utf8', valueStart - 1, valueEnd + 1)));
    else this.values.pushUtf8(source, valueStart, valueEnd);
  }

  protected entries(): number {
    return this.keys.length;
  }

  toData(type: DataType): Data<Map_<Utf8, Utf8>> {
    if (!(type instanceof Map_)) throw wrongType('StringMapColumn', type);
    const mapType = type as Map_<Utf8, Utf8>;
    const entriesType: Struct<{ key: Utf8; value: Utf8 }> | undefined = mapType.children[0]?.type;
    const [keyField, valueField] = entriesType?.children ?? [];
    if (entriesType === undefined || keyField === undefined || valueField === undefined) {
      throw wrongType('StringMapColumn', type);
    }
    const child = makeData({
      type: entriesType,
      length: this.keys.length,
      nullCount: 0,
      children: [this.keys.toData(keyField.type), this.values.toData(valueField.type)],
    });
    return makeData({ ...this.rowProps(), type: mapType, child });
  }

  protected resetEntries(): void {
    this.keys.reset();
    this.values.reset();
  }
}
