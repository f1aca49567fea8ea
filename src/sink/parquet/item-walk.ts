import type { BoolColumn, Column, Float64Column, Int64Column, Utf8Column } from './columns.js';
import type { Int64ListColumn, StringMapColumn } from './nested-columns.js';
import type { ColumnKind, ColumnSpec } from './schemas.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
const DOT = 0x2e;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const LOWER_T = 0x74;
const LOWER_F = 0x66;
const LOWER_N = 0x6e;

const WHITESPACE = new Uint8Array(256);
for (const c of [0x20, 0x09, 0x0a, 0x0d]) WHITESPACE[c] = 1;

/** No value was given for the column (the field is absent). */
const ABSENT = -1;
/** The value is JSON null. */
const NULL = -2;

const VALUE_ESCAPED = 1;
const KEY_ESCAPED = 2;

/** Keys are looked up by their length and first byte; longer keys by a linear search. */
const MAX_INDEXED_KEY = 64;

/** The most entries of one map (`metadata`) the walk takes; a bigger map is parsed. */
const MAX_MAP_ENTRIES = 256;

/**
 * Reads one item straight from its bytes (as received, already checked to be valid JSON and UTF-8
 * by the page scan) into a row group's columns, without building its object: strings are copied
 * as the UTF-8 bytes they are (a string with an escape is decoded alone), integers are read digit
 * by digit. Fields outside the schema are parsed alone into `extra`, as RowGroupBuilder.addOne
 * writes it.
 *
 * It takes only the plain case and answers false, having changed nothing, for anything else: a
 * schema field given twice, a key written with escapes, a value of another type than its column's,
 * an integer that is not safe, a required field missing, a map key of digits only (an object
 * orders those first) or given twice, a kind it does not read (sequences' `columns`). The caller
 * then parses that item with JSON.parse as before, so the columns end up the same either way, and
 * a bad item fails with the same message.
 *
 * Two passes per item: `read` finds where each field's value lies and checks its shape; `fill`
 * pushes the values.
 */
export class ItemWalk {
  private b: Buffer = Buffer.alloc(0);
  private pos = 0;
  /** Where the item being read ends in `b`. */
  private end = 0;
  /** Per column: where its value token starts (ABSENT, NULL or an offset in `b`) and ends. */
  private readonly starts: Int32Array;
  private readonly ends: Int32Array;
  /** Per column: its integer (int64 and timestamp columns), or whether its string holds an escape. */
  private readonly numbers: Float64Array;
  /**
   * Map entries of the item, five numbers each: key start, key end, value start, value end (inside
   * the quotes), and which of key (KEY_ESCAPED) and value (VALUE_ESCAPED) holds an escape.
   */
  private entries = new Int32Array(5 * 16);
  private entryCount = 0;
  /** Fields outside the schema, four numbers each: key start, key end, value start, value end. */
  private unknowns = new Int32Array(4 * 4);
  private unknownCount = 0;
  /** Candidate columns by key length and first byte (`length * 256 + byte`). */
  private readonly byKey: (number[] | undefined)[] = [];
  private readonly names: Buffer[];
  /** Per column: the UTF-8 bytes of its metadata key, for `metadata_<key>` columns. */
  private readonly metadataKeys: (Buffer | undefined)[];
  private readonly required: number[];
  private readonly kinds: readonly ColumnKind[];
  /** Whether every column is of a kind the walk reads. */
  readonly usable: boolean;

  /** `columns` are the columns of `specs`, in order; `extra` the column of fields outside them. */
  constructor(
    specs: readonly ColumnSpec[],
    private readonly columns: readonly Column[],
    private readonly extra: Utf8Column,
  ) {
    const n = specs.length;
    this.starts = new Int32Array(n);
    this.ends = new Int32Array(n);
    this.numbers = new Float64Array(n);
    this.kinds = specs.map((spec) => spec.kind);
    this.names = specs.map((spec) => Buffer.from(spec.name));
    this.metadataKeys = specs.map(({ metadataKey: key }) => (key === undefined ? undefined : Buffer.from(key)));
    this.required = specs.flatMap((spec, c) => (spec.required ? [c] : []));
    specs.forEach((spec, c) => {
      if (spec.metadataKey !== undefined) return;
      const name = this.names[c]!;
      if (name.length >= MAX_INDEXED_KEY) return;
      const slot = name.length * 256 + name[0]!;
      (this.byKey[slot] ??= []).push(c);
    });
    this.usable = specs.every((spec) => spec.kind !== 'sequence-columns' && spec.kind !== 'extra-json');
  }

  /**
   * Adds the item at [start, end) of `body` (one JSON value) to the columns; false, nothing added,
   * if it is not the plain case.
   */
  add(body: Buffer, start: number, end: number): boolean {
    if (!this.usable || !this.read(body, start, end)) return false;
    this.fill();
    return true;
  }

  private read(body: Buffer, start: number, end: number): boolean {
    this.b = body;
    this.pos = start;
    this.end = end;
    this.starts.fill(ABSENT);
    this.entryCount = 0;
    this.unknownCount = 0;
    const { b } = this;
    if (this.ws() !== OPEN_OBJECT) return false;
    this.pos++;
    if (this.ws() === CLOSE_OBJECT) {
      this.pos++;
    } else {
      for (;;) {
        if (b[this.pos] !== QUOTE) return false;
        const keyStart = this.pos + 1;
        if (this.string()) return false;
        const keyEnd = this.pos - 1;
        const c = this.column(keyStart, keyEnd);
        if (c >= 0 && this.starts[c] !== ABSENT) return false;
        if (this.ws() !== COLON) return false;
        this.pos++;
        this.ws();
        if (c < 0) this.unknown(keyStart, keyEnd);
        else if (!this.value(c)) return false;
        const next = this.ws();
        this.pos++;
        if (next === CLOSE_OBJECT) break;
        if (next !== COMMA) return false;
        this.ws();
      }
    }
    this.ws();
    if (this.pos !== this.end) return false;
    for (const c of this.required) if (this.starts[c]! < 0) return false;
    return true;
  }

  /** The value of column `c` at `pos`: records where it lies when its shape fits the column. */
  private value(c: number): boolean {
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
        this.skipNumber();
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
      case 'string-map':
        if (first !== OPEN_OBJECT || !this.metadataMap()) return false;
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
    this.skipValue();
    if (4 * this.unknownCount + 4 > this.unknowns.length) {
      const bigger = new Int32Array(this.unknowns.length * 2);
      bigger.set(this.unknowns);
      this.unknowns = bigger;
    }
    const u = 4 * this.unknownCount++;
    this.unknowns.set([keyStart, keyEnd, valueStart, this.pos], u);
  }

  /** Skips the value at `pos`, whatever it is. */
  private skipValue(): void {
    const { b } = this;
    const first = b[this.pos];
    if (first === QUOTE) {
      this.string();
    } else if (first === OPEN_OBJECT || first === OPEN_ARRAY) {
      let depth = 0;
      do {
        const c = b[this.pos]!;
        if (c === QUOTE) {
          this.string();
          continue;
        }
        if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth++;
        else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--;
        this.pos++;
      } while (depth > 0);
    } else {
      let c = b[this.pos]!;
      while (c !== COMMA && c !== CLOSE_OBJECT && WHITESPACE[c] !== 1 && this.pos < this.end) c = b[++this.pos]!;
    }
  }

  /**
   * The fields outside the schema into `extra`: each value parsed alone and set on an object in
   * the order of the item, so that repeated keys and keys of digits end up as JSON.parse would
   * place them.
   */
  private fillExtra(): void {
    if (this.unknownCount === 0) {
      this.extra.push(null);
      return;
    }
    const { b, unknowns } = this;
    const fields: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (let u = 0; u < 4 * this.unknownCount; u += 4) {
      fields[b.toString('utf8', unknowns[u], unknowns[u + 1])] = JSON.parse(b.toString('utf8', unknowns[u + 2], unknowns[u + 3]));
    }
    this.extra.push(JSON.stringify(fields));
  }

  /** Pushes the values `read` found into the columns, one per column, and `extra`. */
  private fill(): void {
    this.fillExtra();
    const { b, columns, kinds } = this;
    for (let c = 0; c < columns.length; c++) {
      const start = this.starts[c]!;
      const column = columns[c]!;
      const metadataKey = this.metadataKeys[c];
      if (metadataKey !== undefined) {
        this.fillMetadataValue(column as Utf8Column, metadataKey);
        continue;
      }
      if (start < 0) {
        column.push(null);
        continue;
      }
      const end = this.ends[c]!;
      switch (kinds[c]) {
        case 'int64':
        case 'timestamp':
          (column as Int64Column).push(this.numbers[c]);
          break;
        case 'double':
          (column as Float64Column).push(Number(b.toString('latin1', start, end)));
          break;
        case 'string':
          pushString(column as Utf8Column, b, start, end, this.numbers[c] === 1);
          break;
        case 'boolean':
          (column as BoolColumn).push(b[start] === LOWER_T);
          break;
        case 'int64-list':
          this.fillList(column as Int64ListColumn, start);
          break;
        case 'string-map':
          this.fillMap(column as StringMapColumn);
          break;
      }
    }
  }

  private fillList(column: Int64ListColumn, start: number): void {
    column.openRow();
    this.pos = start + 1;
    for (let c = this.ws(); c !== CLOSE_ARRAY; c = this.ws()) {
      if (c === COMMA) {
        this.pos++;
        this.ws();
      }
      if (this.b[this.pos] === LOWER_N) {
        this.pos += 4;
        column.element(null);
      } else {
        column.element(this.integer()!);
      }
    }
    column.closeRow();
  }

  private fillMap(column: StringMapColumn): void {
    const { b, entries } = this;
    column.openRow();
    for (let e = 0; e < 5 * this.entryCount; e += 5) {
      const flags = entries[e + 4]!;
      const key = flags & KEY_ESCAPED ? decodeString(b, entries[e]!, entries[e + 1]!) : undefined;
      const escaped = (flags & VALUE_ESCAPED) !== 0;
      column.entry(b, entries[e]!, entries[e + 1]!, key, entries[e + 2]!, entries[e + 3]!, escaped);
    }
    column.closeRow();
  }

  /** A `metadata_<key>` column: the item's `metadata[key]`, a string, or null. */
  private fillMetadataValue(column: Utf8Column, key: Buffer): void {
    const { b, entries } = this;
    for (let e = 0; e < 5 * this.entryCount; e += 5) {
      const keyStart = entries[e]!;
      const keyEnd = entries[e + 1]!;
      const flags = entries[e + 4]!;
      const same = flags & KEY_ESCAPED
        ? decodeString(b, keyStart, keyEnd) === key.toString()
        : keyEnd - keyStart === key.length && sameBytes(b, keyStart, key, 0, key.length);
      if (same) {
        pushString(column, b, entries[e + 2]! - 1, entries[e + 3]! + 1, (flags & VALUE_ESCAPED) !== 0);
        return;
      }
    }
    column.push(null);
  }

  /**
   * The map at `pos`, string keys to string values: records its entries. False when it is not the
   * plain case: a key of digits only, a key given twice, a value not a string, more than
   * MAX_MAP_ENTRIES entries.
   */
  private metadataMap(): boolean {
    this.pos++;
    let escapedKeys = false;
    for (let c = this.ws(); c !== CLOSE_OBJECT; c = this.ws()) {
      if (c === COMMA) {
        this.pos++;
        this.ws();
      }
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
    const { b, entries } = this;
    const keys = new Set<string>();
    for (let e = 0; e < 5 * this.entryCount; e += 5) {
      const key = decodeString(b, entries[e]!, entries[e + 1]!);
      if (keys.has(key) || /^[0-9]+$/.test(key)) return false;
      keys.add(key);
    }
    return true;
  }

  /** The list at `pos` of integers and nulls; false when an element is anything else. */
  private integers(): boolean {
    this.pos++;
    for (let c = this.ws(); c !== CLOSE_ARRAY; c = this.ws()) {
      if (c === COMMA) {
        this.pos++;
        this.ws();
      }
      if (this.b[this.pos] === LOWER_N) this.pos += 4;
      else if (this.integer() === undefined) return false;
    }
    this.pos++;
    return true;
  }

  /** The safe integer written at `pos` as digits (no fraction, no exponent); undefined for any other token. */
  private integer(): number | undefined {
    const { b } = this;
    const negative = b[this.pos] === MINUS;
    if (negative) this.pos++;
    const first = this.pos;
    let value = 0;
    let c = b[this.pos]!;
    while (c >= ZERO && c <= NINE) {
      value = value * 10 + (c - ZERO);
      c = b[++this.pos]!;
    }
    // Up to 16 digits: if the result is safe, every step of the sum was exact.
    const digits = this.pos - first;
    if (digits === 0 || digits > 16 || c === DOT || c === LOWER_E || c === UPPER_E) return undefined;
    if (value > Number.MAX_SAFE_INTEGER) return undefined;
    return negative ? -value : value;
  }

  private skipNumber(): void {
    const { b } = this;
    let c = b[++this.pos]!;
    while ((c >= ZERO && c <= NINE) || c === DOT || c === LOWER_E || c === UPPER_E || c === MINUS || c === 0x2b) {
      c = b[++this.pos]!;
    }
  }

  /** The string at `pos` (its opening quote): leaves `pos` after the closing quote; whether it holds an escape. */
  private string(): boolean {
    const { b } = this;
    let i = this.pos + 1;
    let escaped = false;
    for (let c = b[i]!; c !== QUOTE; c = b[i]!) {
      if (c === BACKSLASH) {
        escaped = true;
        i += 2;
      } else {
        i++;
      }
    }
    this.pos = i + 1;
    return escaped;
  }

  /** The column whose name is the key [start, end) of `b`, or -1. */
  private column(start: number, end: number): number {
    const { b } = this;
    const length = end - start;
    const candidates = length < MAX_INDEXED_KEY ? this.byKey[length * 256 + b[start]!] : undefined;
    if (candidates === undefined) return -1;
    for (const c of candidates) {
      if (sameBytes(b, start, this.names[c]!, 0, length)) return c;
    }
    return -1;
  }

  /** Skips whitespace; the byte at `pos` after it. */
  private ws(): number {
    const { b } = this;
    let c = b[this.pos]!;
    while (WHITESPACE[c] === 1) c = b[++this.pos]!;
    return c;
  }
}

/** The string token [start, end) of `b` (quotes included) into the column: its bytes, or decoded if `escaped`. */
function pushString(column: Utf8Column, b: Buffer, start: number, end: number, escaped: boolean): void {
  if (escaped) column.push(JSON.parse(b.toString('utf8', start, end)));
  else column.pushUtf8(b, start + 1, end - 1);
}

/** The string inside quotes at [start, end) of `b`, decoded. */
function decodeString(b: Buffer, start: number, end: number): string {
  return JSON.parse(b.toString('utf8', start - 1, end + 1)) as string;
}

function sameBytes(a: Uint8Array, aStart: number, b: Uint8Array, bStart: number, length: number): boolean {
  for (let k = 0; k < length; k++) if (a[aStart + k] !== b[bStart + k]) return false;
  return true;
}

function digitsOnly(b: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (b[i]! < ZERO || b[i]! > NINE) return false;
  return true;
}
