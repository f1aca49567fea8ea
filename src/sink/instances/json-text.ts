import {
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  digitsOnly,
  JsonBytes,
  LOWER_F,
  LOWER_T,
  MINUS,
  NINE,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
  sameBytes,
  ZERO,
} from '../parquet/json-bytes.js';

/** What JsonText.read found: the value's bytes are its JSON text as they are. */
export const AS_IS = 1;
/** The value's JSON text is JSON.stringify of it parsed alone (its bytes hold whitespace, escapes, ...). */
export const REWRITE = 0;
/** Not the plain case: the instance is left to its parser (an integer beyond 2^53, a key with escapes or twice). */
export const REFUSED = -1;
export type JsonTextKind = typeof AS_IS | typeof REWRITE | typeof REFUSED;

const DOT = 0x2e;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const PLUS = 0x2b;
/** The most keys of one object compared pairwise for repeats; a bigger object is refused. */
const MAX_KEYS = 256;

/**
 * A JSON value (of a `json` column) read where it lies in valid JSON bytes: whether the text a
 * column keeps of it, JSON.stringify of the parsed value, is its bytes as they are. That holds when
 * they have no whitespace, no escape, numbers written as JavaScript writes them, and no object key
 * of digits only (an object orders those first). It refuses what a parse of the whole instance
 * might read otherwise: an integer that is not safe (an exact parse keeps it as a BigInt), a key
 * given twice (JSON.parse keeps the last, the exact parse throws), a key with an escape.
 */
export class JsonText extends JsonBytes {
  private asIs = true;
  /** Starts and ends of the keys of the objects being read, innermost last. */
  private keys = new Int32Array(2 * 16);
  private keyCount = 0;

  /** Reads the value at `pos` of `b`, leaving `pos` after it. */
  read(): JsonTextKind {
    this.asIs = true;
    this.keyCount = 0;
    if (!this.item()) return REFUSED;
    return this.asIs ? AS_IS : REWRITE;
  }

  /** The value at `pos`; false when it is refused. */
  private item(): boolean {
    const { b } = this;
    switch (b[this.pos]) {
      case QUOTE:
        if (this.string()) this.asIs = false;
        return true;
      case OPEN_OBJECT:
        return this.object();
      case OPEN_ARRAY:
        return this.array();
      case LOWER_T:
        this.pos += 4;
        return true;
      case LOWER_F:
        this.pos += 5;
        return true;
      case MINUS:
        return this.numberText();
      default:
        if (b[this.pos]! >= ZERO && b[this.pos]! <= NINE) return this.numberText();
        this.pos += 4; // null
        return true;
    }
  }

  /** Whitespace at `pos`, skipped (JSON.stringify writes none); the byte after it. */
  private gap(): number {
    const before = this.pos;
    const c = this.ws();
    if (this.pos !== before) this.asIs = false;
    return c;
  }

  private object(): boolean {
    this.pos++;
    if (this.gap() === CLOSE_OBJECT) {
      this.pos++;
      return true;
    }
    const base = this.keyCount;
    for (;;) {
      const keyStart = this.pos + 1;
      if (this.string() || !this.key(base, keyStart, this.pos - 1)) return false;
      this.gap();
      this.pos++;
      this.gap();
      if (!this.item()) return false;
      const c = this.gap();
      this.pos++;
      if (c === CLOSE_OBJECT) break;
      this.gap();
    }
    this.keyCount = base;
    return true;
  }

  /** A key [start, end) of the object whose keys start at `base`: false when it is there already. */
  private key(base: number, start: number, end: number): boolean {
    const { b } = this;
    const length = end - start;
    if (this.keyCount - base >= MAX_KEYS) return false;
    for (let k = 2 * base; k < 2 * this.keyCount; k += 2) {
      const other = this.keys[k]!;
      if (this.keys[k + 1]! - other === length && sameBytes(b, start, b, other, length)) return false;
    }
    if (digitsOnly(b, start, end)) this.asIs = false;
    if (2 * this.keyCount + 2 > this.keys.length) {
      const bigger = new Int32Array(this.keys.length * 2);
      bigger.set(this.keys);
      this.keys = bigger;
    }
    this.keys[2 * this.keyCount] = start;
    this.keys[2 * this.keyCount + 1] = end;
    this.keyCount++;
    return true;
  }

  private array(): boolean {
    this.pos++;
    if (this.gap() === CLOSE_ARRAY) {
      this.pos++;
      return true;
    }
    for (;;) {
      if (!this.item()) return false;
      const c = this.gap();
      this.pos++;
      if (c === CLOSE_ARRAY) return true;
      this.gap();
    }
  }

  /**
   * The number at `pos`: an integer is refused when it is not safe, and is as JSON.stringify
   * writes it unless it is -0; any other number when String() writes it the same.
   */
  private numberText(): boolean {
    const { b } = this;
    const start = this.pos;
    const negative = b[this.pos] === MINUS;
    if (negative) this.pos++;
    const first = this.pos;
    let value = 0;
    let c = b[this.pos]!;
    while (c >= ZERO && c <= NINE) {
      value = value * 10 + (c - ZERO);
      c = b[++this.pos]!;
    }
    if (c === DOT || c === LOWER_E || c === UPPER_E) {
      while ((c >= ZERO && c <= NINE) || c === DOT || c === LOWER_E || c === UPPER_E || c === PLUS || c === MINUS) {
        c = b[++this.pos]!;
      }
      if (this.asIs) {
        const text = b.toString('latin1', start, this.pos);
        if (String(Number(text)) !== text) this.asIs = false;
      }
      return true;
    }
    // Up to 16 digits: if the result is safe, every step of the sum was exact.
    if (this.pos - first > 16 || value > Number.MAX_SAFE_INTEGER) return false;
    if (negative && value === 0) this.asIs = false;
    return true;
  }
}
