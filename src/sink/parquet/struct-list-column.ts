/** LIST<STRUCT<...>> (sequences' `columns`): a list of objects, each field a child column. */
import { type Data, type DataType, List, makeData, Struct } from 'apache-arrow';
import { type Column, ColumnTypeError, describe, grow, type Utf8Column, Validity, wrongType } from './columns.js';

/** A field of the struct: its name, whether every element must have it, and its column. */
export interface StructField {
  readonly name: string;
  readonly required: boolean;
  readonly column: Column;
}

/**
 * Per row, null or a list of objects. Each object's known fields go to their child columns, the
 * others into `extra` as one JSON object string (null when there are none), so nothing is dropped.
 */
export class StructListColumn implements Column {
  private offsets: Int32Array;
  private readonly validity: Validity;
  private readonly known: ReadonlySet<string>;
  private elements = 0;
  length = 0;

  constructor(
    capacity: number,
    private readonly fields: readonly StructField[],
    private readonly extra: Utf8Column,
  ) {
    this.offsets = new Int32Array(capacity + 1);
    this.validity = new Validity(capacity);
    this.known = new Set(fields.map((field) => field.name));
  }

  push(value: unknown): void {
    const i = this.length;
    if (i + 2 > this.offsets.length) this.offsets = grow(this.offsets, this.offsets.length * 2);
    if (value === undefined || value === null) {
      this.validity.set(i, false);
    } else {
      if (!Array.isArray(value)) throw new ColumnTypeError(`expected a list of objects, got ${describe(value)}`);
      this.validity.set(i, true);
      value.forEach((element: unknown, index) => this.pushElement(element, index));
    }
    this.offsets[i + 1] = this.elements;
    this.length++;
  }

  private pushElement(element: unknown, index: number): void {
    if (typeof element !== 'object' || element === null || Array.isArray(element)) {
      throw new ColumnTypeError(`element ${index} is ${describe(element)}, not an object`);
    }
    const fields = element as Record<string, unknown>;
    for (const field of this.fields) {
      const value = fields[field.name];
      if (field.required && (value === undefined || value === null)) {
        throw new ColumnTypeError(`element ${index} has no '${field.name}'`);
      }
      try {
        field.column.push(value);
      } catch (error) {
        if (!(error instanceof ColumnTypeError)) throw error;
        throw new ColumnTypeError(`element ${index}, '${field.name}': ${error.message}`);
      }
    }
    let extra: Record<string, unknown> | undefined;
    for (const key in fields) {
      if (!this.known.has(key)) (extra ??= {})[key] = fields[key];
    }
    this.extra.push(extra === undefined ? null : JSON.stringify(extra));
    this.elements++;
  }

  toData(type: DataType): Data<List<Struct>> {
    const struct: unknown = type instanceof List ? (type).valueType : undefined;
    if (!(struct instanceof Struct) || struct.children.length !== this.fields.length + 1) {
      throw wrongType('StructListColumn', type);
    }
    const columns = [...this.fields.map((field) => field.column), this.extra];
    const child = makeData({
      type: struct,
      length: this.elements,
      nullCount: 0,
      children: columns.map((column, c) => column.toData(struct.children[c]!.type as DataType)),
    });
    const { length } = this;
    return makeData({
      type: type as List<Struct>,
      ...this.validity.rows(length),
      valueOffsets: this.offsets.subarray(0, length + 1),
      child,
    });
  }

  reset(): void {
    this.length = 0;
    this.elements = 0;
    this.validity.reset();
    for (const field of this.fields) field.column.reset();
    this.extra.reset();
  }
}
