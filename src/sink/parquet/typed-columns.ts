/**
 * The column types data-model instances add to columns.ts: INT32 and DATE, FLOAT, a STRUCT of
 * named child columns (a direct relation's `{space, externalId}`), and a LIST of any column.
 * Each checks a value whole before it writes any of it (`accepts`), so that a caller can send a
 * value the column cannot hold elsewhere (to `extra`) instead of writing part of it.
 */
import { type Data, type DataType, DateDay, Float32, Int32, List, makeData, Struct } from 'apache-arrow';
import { type CheckedColumn, ColumnTypeError, describe, grow, Validity, wrongType } from './columns.js';

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/** INT32, and DATE (days since 1970-01-01, the same 32-bit integers). */
export class Int32Column implements CheckedColumn {
  private values: Int32Array;
  private readonly validity: Validity;
  length = 0;

  constructor(capacity: number) {
    this.values = new Int32Array(Math.max(capacity, 1));
    this.validity = new Validity(capacity);
  }

  accepts(value: unknown): boolean {
    if (value === undefined || value === null) return true;
    return Number.isInteger(value) && (value as number) >= INT32_MIN && (value as number) <= INT32_MAX;
  }

  push(value: unknown): void {
    if (!this.accepts(value)) throw new ColumnTypeError(`expected a 32-bit integer, got ${describe(value)}`);
    const i = this.length;
    if (i >= this.values.length) this.values = grow(this.values, this.values.length * 2);
    const present = value !== undefined && value !== null;
    this.validity.set(i, present);
    this.values[i] = present ? (value as number) : 0;
    this.length++;
  }

  toData(type: DataType): Data<Int32> | Data<DateDay> {
    const { length } = this;
    const props = { ...this.validity.rows(length), data: this.values.subarray(0, length) };
    if (type instanceof Int32) return makeData({ type, ...props });
    if (type instanceof DateDay) return makeData({ type, ...props });
    throw wrongType('Int32Column', type);
  }

  reset(): void {
    this.length = 0;
    this.validity.reset();
  }
}

/** FLOAT (32-bit): a number, rounded to the nearest float as the platform stores float32. */
export class Float32Column implements CheckedColumn {
  private values: Float32Array;
  private readonly validity: Validity;
  length = 0;

  constructor(capacity: number) {
    this.values = new Float32Array(Math.max(capacity, 1));
    this.validity = new Validity(capacity);
  }

  accepts(value: unknown): boolean {
    return value === undefined || value === null || typeof value === 'number';
  }

  push(value: unknown): void {
    if (!this.accepts(value)) throw new ColumnTypeError(`expected a number, got ${describe(value)}`);
    const i = this.length;
    if (i >= this.values.length) {
      const bigger = new Float32Array(this.values.length * 2);
      bigger.set(this.values);
      this.values = bigger;
    }
    const present = value !== undefined && value !== null;
    this.validity.set(i, present);
    this.values[i] = present ? (value as number) : 0;
    this.length++;
  }

  toData(type: DataType): Data<Float32> {
    if (!(type instanceof Float32)) throw wrongType('Float32Column', type);
    const { length } = this;
    return makeData({ type, ...this.validity.rows(length), data: this.values.subarray(0, length) });
  }

  reset(): void {
    this.length = 0;
    this.validity.reset();
  }
}

/** A field of a StructColumn: its name, whether every value must have it, and its column. */
export interface CheckedField {
  readonly name: string;
  readonly required: boolean;
  readonly column: CheckedColumn;
}

/**
 * STRUCT of named fields: per row null or an object with exactly these fields (a required one
 * present); an object with any other key is not taken (accepts is false), so nothing is dropped.
 */
export class StructColumn implements CheckedColumn {
  private readonly validity: Validity;
  private readonly names: ReadonlySet<string>;
  length = 0;

  constructor(
    capacity: number,
    readonly fields: readonly CheckedField[],
  ) {
    this.validity = new Validity(capacity);
    this.names = new Set(fields.map((field) => field.name));
  }

  accepts(value: unknown): boolean {
    if (value === undefined || value === null) return true;
    if (typeof value !== 'object' || Array.isArray(value)) return false;
    const object = value as Record<string, unknown>;
    for (const key in object) if (!this.names.has(key)) return false;
    return this.fields.every(({ name, required, column }) => {
      const field = object[name];
      return (!required || (field !== undefined && field !== null)) && column.accepts(field);
    });
  }

  push(value: unknown): void {
    if (!this.accepts(value)) {
      throw new ColumnTypeError(`expected an object of ${[...this.names].join(', ')}, got ${describe(value)}`);
    }
    const object = value === undefined || value === null ? undefined : (value as Record<string, unknown>);
    this.validity.set(this.length, object !== undefined);
    // A null row still takes a (null) slot in every child: Arrow's struct children are as long as it.
    for (const { name, column } of this.fields) column.push(object?.[name]);
    this.length++;
  }

  /**
   * Adds a row that is not null, whose values the caller has pushed to each field's column, one
   * each (a reader of bytes, InstanceWalk, that checked them).
   */
  closeRow(): void {
    this.validity.set(this.length, true);
    this.length++;
  }

  toData(type: DataType): Data<Struct> {
    if (!(type instanceof Struct) || type.children.length !== this.fields.length) throw wrongType('StructColumn', type);
    const children = this.fields.map(({ column }, c) => column.toData(type.children[c]!.type as DataType));
    return makeData({ type, ...this.validity.rows(this.length), children });
  }

  reset(): void {
    this.length = 0;
    this.validity.reset();
    for (const { column } of this.fields) column.reset();
  }
}

/** LIST of any checked column: per row null or an array, every element taken by the child column. */
export class ListColumn implements CheckedColumn {
  private offsets: Int32Array;
  private readonly validity: Validity;
  length = 0;

  constructor(
    capacity: number,
    readonly elements: CheckedColumn,
  ) {
    this.offsets = new Int32Array(capacity + 1);
    this.validity = new Validity(capacity);
  }

  accepts(value: unknown): boolean {
    if (value === undefined || value === null) return true;
    return Array.isArray(value) && value.every((element) => this.elements.accepts(element));
  }

  push(value: unknown): void {
    if (!this.accepts(value)) throw new ColumnTypeError(`expected a list, got ${describe(value)}`);
    const i = this.length;
    if (i + 2 > this.offsets.length) this.offsets = grow(this.offsets, this.offsets.length * 2);
    const list = value === undefined || value === null ? undefined : (value as unknown[]);
    this.validity.set(i, list !== undefined);
    for (const element of list ?? []) this.elements.push(element);
    this.offsets[i + 1] = this.elements.length;
    this.length++;
  }

  /** Adds a list that is not null, whose elements the caller has pushed to `elements` (InstanceWalk). */
  closeRow(): void {
    const i = this.length;
    if (i + 2 > this.offsets.length) this.offsets = grow(this.offsets, this.offsets.length * 2);
    this.validity.set(i, true);
    this.offsets[i + 1] = this.elements.length;
    this.length++;
  }

  toData(type: DataType): Data<List> {
    if (!(type instanceof List)) throw wrongType('ListColumn', type);
    const child = this.elements.toData(type.valueType as DataType);
    const { length } = this;
    return makeData({ type, ...this.validity.rows(length), valueOffsets: this.offsets.subarray(0, length + 1), child });
  }

  reset(): void {
    this.length = 0;
    this.validity.reset();
    this.elements.reset();
  }
}
