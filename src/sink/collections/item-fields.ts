import {
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  decodeString,
  digitsOnly,
  JsonBytes,
  LOWER_F,
  LOWER_N,
  LOWER_T,
  MINUS,
  NINE,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
  sameBytes,
  ZERO,
} from '../parquet/json-bytes.js';
import type { ColumnKind, ColumnSpec } from '../parquet/schemas.js';

/** No value was given for the column (the field is absent). */
export const ABSENT = -1;
/** The value is JSON null. */
export const NULL = -2;

/** A map entry's flags: its value holds an escape; its key does. */
export const VALUE_ESCAPED = 1;
export const KEY_ESCAPED = 2;

/** The one key of a label (`{"externalId": "..."}`). */
const EXTERNAL_ID = Buffer.from('externalId');

/** Keys are looked up by their length and first byte; longer keys are no column's. */
const MAX_INDEXED_KEY = 64;

/** The most entries of one map (`metadata`) read here; a bigger map is left to JSON.parse. */
const MAX_MAP_ENTRIES = 256;

/**
 * Where each field of one item lies in its bytes, for the columns of `specs`: the first pass of
 * ItemWalk. `read` checks that every value has its column's shape and records its place; it
 * answers false for anything that is not the plain case (see ItemWalk).
 */
export class ItemFields extends JsonBytes {
  /** Per column: where its value token starts (ABSENT, NULL or an offset in `b`) and ends. */
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  /** Per column: its integer (int64 and timestamp columns), or 1 if its string holds an escape. */
  readonly numbers: Float64Array;
  /**
   * The item's map entries, five numbers each: key start, key end, value start, value end (inside
   * the quotes), and which of key (KEY_ESCAPED) and value (VALUE_ESCAPED) holds an escape.
   */
  entries = new Int32Array(5 * 16);
  entryCount = 0;
  /** Fields outside the schema, four numbers each: key start, key end, value start, value end. */
  unknowns = new Int32Array(4 * 4);
  unknownCount = 0;
  readonly kinds: readonly ColumnKind[];
  /** Candidate columns by key length and first byte (`length * 256 + byte`). */
  private readonly byKey: (number[] | undefined)[] = [];
  private readonly names: Buffer[];
  private readonly required: number[];

  constructor(specs: readonly ColumnSpec[]) {
    super();
    const n = specs.length;
    this.starts = new Int32Array(n);
    this.ends = new Int32Array(n);
    this.numbers = new Float64Array(n);
    this.kinds = specs.map((spec) => spec.kind);
    this.names = specs.map((spec) => Buffer.from(spec.name));
    this.required = specs.flatMap((spec, c) => (spec.required ? [c] : []));
    specs.forEach((spec, c) => {
      // A metadata column is no field of the item.
      if (spec.metadataKey !== undefined) return;
      const name = this.names[c]!;
      if (name.length >= MAX_INDEXED_KEY) return;
      (this.byKey[name.length * 256 + name[0]!] ??= []).push(c);
    });
  }

  /** Reads the item at [start, end) of `body`; false when it is not the plain case. */
  read(body: Buffer, start: number, end: number): boolean {
    this.b = body;
    this.pos = start;
    this.end = end;
    this.starts.fill(ABSENT);
    this.entryCount = 0;
    this.unknownCount = 0;
    if (this.ws() !== OPEN_OBJECT) return false;
    this.pos++;
    for (let c = this.ws(); c !== CLOSE_OBJECT; c = this.next()) {
      if (c !== QUOTE) return false;
      const keyStart = this.pos + 1;
      if (this.string()) return false;
      const keyEnd = this.pos - 1;
      const column = this.column(keyStart, keyEnd);
      if (column >= 0 && this.starts[column] !== ABSENT) return false;
      if (this.ws() !== COLON) return false;
      this.pos++;
      this.ws();
      if (column < 0) this.unknown(keyStart, keyEnd);
      else if (!this.field(column)) return false;
    }
    this.pos++;
    this.ws();
    if (this.pos !== this.end) return false;
    for (const c of this.required) if (this.starts[c]! < 0) return false;
    return true;
  }

  /** The value of column `c` at `pos`: records where it lies when its shape fits the column. */
  private field(c: number): boolean {
    const { b } = this;
    const first = b[this.pos];
    const start = this.pos;
    if (first === LOWER_N) {
      this.pos += 4;
      this.starts[c] = NULL;
      return true;
    }
    switch (this.kinds[c]) {
      case 'int64':
      case 'timestamp': {
        const value = this.integer();
        if (value === undefined) return false;
        this.numbers[c] = value;
        break;
      }
      case 'double':
        if (first !== MINUS && (first! < ZERO || first! > NINE)) return false;
        this.number();
        break;
      case 'string':
        if (first !== QUOTE) return false;
        this.numbers[c] = this.string() ? 1 : 0;
        break;
      case 'boolean':
        if (first === LOWER_T) this.pos += 4;
        else if (first === LOWER_F) this.pos += 5;
        else return false;
        break;
      case 'int64-list':
        if (first !== OPEN_ARRAY || !this.integers()) return false;
        break;
      case 'label-list':
        if (first !== OPEN_ARRAY || !this.labels()) return false;
        break;
      case 'string-map':
        if (first !== OPEN_OBJECT || !this.map()) return false;
        break;
      default:
        return false;
    }
    this.starts[c] = start;
    this.ends[c] = this.pos;
    return true;
  }

  /** A field outside the schema, its value at `pos`: recorded for `extra`. */
  private unknown(keyStart: number, keyEnd: number): void {
    const valueStart = this.pos;
    this.value();
    if (4 * this.unknownCount + 4 > this.unknowns.length) {
      const bigger = new Int32Array(this.unknowns.length * 2);
      bigger.set(this.unknowns);
      this.unknowns = bigger;
    }
    this.unknowns.set([keyStart, keyEnd, valueStart, this.pos], 4 * this.unknownCount++);
  }

  /**
   * The map at `pos`, string keys to string values: records its entries. False when it is not the
   * plain case: a key of digits only, a key given twice, a value not a string, more than
   * MAX_MAP_ENTRIES entries.
   */
  private map(): boolean {
    this.pos++;
    let escapedKeys = false;
    for (let c = this.ws(); c !== CLOSE_OBJECT; c = this.next()) {
      const keyStart = this.pos + 1;
      const keyEscaped = this.string();
      const keyEnd = this.pos - 1;
      if (this.ws() !== COLON) return false;
      this.pos++;
      if (this.ws() !== QUOTE) return false;
      const valueStart = this.pos + 1;
      const flags = (this.string() ? VALUE_ESCAPED : 0) | (keyEscaped ? KEY_ESCAPED : 0);
      if (!this.addEntry(keyStart, keyEnd, valueStart, this.pos - 1, flags)) return false;
      escapedKeys ||= keyEscaped;
    }
    this.pos++;
    return !escapedKeys || this.distinctDecodedKeys();
  }

  private addEntry(keyStart: number, keyEnd: number, valueStart: number, valueEnd: number, flags: number): boolean {
    const { b } = this;
    const length = keyEnd - keyStart;
    if (this.entryCount === MAX_MAP_ENTRIES || digitsOnly(b, keyStart, keyEnd)) return false;
    let { entries } = this;
    for (let e = 0; e < 5 * this.entryCount; e += 5) {
      const other = entries[e]!;
      if (entries[e + 1]! - other === length && sameBytes(b, keyStart, b, other, length)) return false;
    }
    if (5 * this.entryCount + 5 > entries.length) {
      entries = new Int32Array(entries.length * 2);
      entries.set(this.entries);
      this.entries = entries;
    }
    const e = 5 * this.entryCount++;
    entries[e] = keyStart;
    entries[e + 1] = keyEnd;
    entries[e + 2] = valueStart;
    entries[e + 3] = valueEnd;
    entries[e + 4] = flags;
    return true;
  }

  /** For a map with keys written with escapes: no two keys are the same once decoded, none is digits only. */
  private distinctDecodedKeys(): boolean {
    const keys = new Set<string>();
    for (let e = 0; e < 5 * this.entryCount; e += 5) {
      const key = decodeString(this.b, this.entries[e]!, this.entries[e + 1]!);
      if (keys.has(key) || /^[0-9]+$/.test(key)) return false;
      keys.add(key);
    }
    return true;
  }

  /** The list at `pos` of integers and nulls; false when an element is anything else. */
  private integers(): boolean {
    this.pos++;
    for (let c = this.ws(); c !== CLOSE_ARRAY; c = this.next()) {
      if (c === LOWER_N) this.pos += 4;
      else if (this.integer() === undefined) return false;
    }
    this.pos++;
    return true;
  }

  /**
   * The list at `pos` of labels, each `{"externalId": <string>}` and nothing else (the key written
   * without escapes); false for anything else.
   */
  private labels(): boolean {
    const { b } = this;
    this.pos++;
    for (let c = this.ws(); c !== CLOSE_ARRAY; c = this.next()) {
      if (c !== OPEN_OBJECT) return false;
      this.pos++;
      if (this.ws() !== QUOTE) return false;
      const keyStart = this.pos + 1;
      if (this.string()) return false;
      const length = this.pos - 1 - keyStart;
      if (length !== EXTERNAL_ID.length || !sameBytes(b, keyStart, EXTERNAL_ID, 0, length)) return false;
      if (this.ws() !== COLON) return false;
      this.pos++;
      if (this.ws() !== QUOTE) return false;
      this.string();
      if (this.ws() !== CLOSE_OBJECT) return false;
      this.pos++;
    }
    this.pos++;
    return true;
  }

  /** The column whose name is the key [start, end) of `b`, or -1. */
  private column(start: number, end: number): number {
    const { b } = this;
    const length = end - start;
    const candidates = length < MAX_INDEXED_KEY ? this.byKey[length * 256 + b[start]!] : undefined;
    if (candidates === undefined) return -1;
    for (const c of candidates) if (sameBytes(b, start, this.names[c]!, 0, length)) return c;
    return -1;
  }
}
