import { grow } from '../parquet/columns.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Distinct texts a TextStore remembers to reuse: statuses and `extra` repeat a few symbols. */
const RECENT_TEXTS = 64;

/** One number column of the rows held: a double and a presence byte a row (0: null). */
export class NumberStore {
  values: Float64Array;
  present: Uint8Array;

  constructor(capacity: number) {
    this.values = new Float64Array(capacity);
    this.present = new Uint8Array(capacity);
  }

  /** Room for `capacity` rows, the rows held kept. */
  resize(capacity: number): void {
    const values = new Float64Array(capacity);
    values.set(this.values);
    this.values = values;
    this.present = grow(this.present, capacity);
  }

  put(row: number, value: unknown): void {
    this.present[row] = value === null ? 0 : 1;
    this.values[row] = value === null ? 0 : (value as number);
  }

  get(row: number): number | null {
    return this.present[row] === 1 ? this.values[row]! : null;
  }
}

/**
 * One text column of the rows held: per row the number of an entry (-1: null), each entry a
 * text's UTF-8 bytes in one buffer. A text seen lately reuses its entry, so statuses and `extra`,
 * a few symbols in almost every row, cost their 4-byte entry numbers; distinct values (a string
 * series') cost their bytes, and no string object is kept for them.
 */
export class TextStore {
  codes: Int32Array;
  /** Per entry, where its bytes end in `bytes`; entry e starts where entry e - 1 ends. */
  ends = new Int32Array(16);
  bytes = new Uint8Array(4096);
  entries = 0;
  private readonly recent = new Map<string, number>();

  constructor(capacity: number) {
    this.codes = new Int32Array(capacity);
  }

  resize(capacity: number): void {
    this.codes = grow(this.codes, capacity);
  }

  /** Bytes of the entries held. */
  get used(): number {
    return this.entries === 0 ? 0 : this.ends[this.entries - 1]!;
  }

  put(row: number, value: unknown): void {
    if (value === null) {
      this.codes[row] = -1;
      return;
    }
    const text = value as string;
    let code = this.recent.get(text);
    if (code === undefined) {
      code = this.add(text);
      if (this.recent.size >= RECENT_TEXTS) this.recent.clear();
      this.recent.set(text, code);
    }
    this.codes[row] = code;
  }

  get(row: number): string | null {
    const code = this.codes[row]!;
    return code < 0 ? null : decoder.decode(this.bytes.subarray(this.start(code), this.ends[code]));
  }

  start(code: number): number {
    return code === 0 ? 0 : this.ends[code - 1]!;
  }

  /** Forgets every row and entry; the buffers are kept for the next rows. */
  reset(): void {
    this.entries = 0;
    this.recent.clear();
  }

  private add(text: string): number {
    const code = this.entries++;
    if (code >= this.ends.length) this.ends = grow(this.ends, this.ends.length * 2);
    const start = this.start(code);
    if (start + text.length * 3 > this.bytes.length) {
      this.bytes = grow(this.bytes, Math.max(this.bytes.length * 2, start + text.length * 3));
    }
    this.ends[code] = start + encoder.encodeInto(text, this.bytes.subarray(start)).written;
    return code;
  }
}
