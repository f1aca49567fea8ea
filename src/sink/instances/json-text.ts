import {
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  decodeString,
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
/** Not the plain case: the instance is left to its parser (an integer beyond 2^53, a key twice). */
export const REFUSED = -1;
export type JsonTextKind = typeof AS_IS | typeof REWRITE | typeof REFUSED;

const BACKSLASH = 0x5c;
const SLASH = 0x2f;
const LOWER_U = 0x75;
/** The characters JSON.stringify writes with a short escape (\b \t \n \f \r) rather than \u00XX. */
const SHORT_ESCAPED = new Set([0x08, 0x09, 0x0a, 0x0c, 0x0d]);
/** The most keys of one object compared pairwise for repeats; a bigger object is refused. */
const MAX_KEYS = 256;

/**
 * A JSON value (of a `json` column) read where it lies in valid JSON bytes: whether the text a
 * column keeps of it, JSON.stringify of the parsed value, is its bytes as they are. That holds when
 * they have no whitespace, no escape but those JSON.stringify writes, numbers written as
 * JavaScript writes them, and no object key of digits only (an object orders those first). It
 * refuses what a parse of the whole instance might read otherwise: an integer that is not safe
 * (an exact parse keeps it as a BigInt), a key given twice (JSON.parse keeps the last, the exact
 * parse throws).
 */
export class JsonText extends JsonBytes {
  private asIs = true;
  /** Start, end and whether it holds an escape, of each key of the objects being read, innermost last. */
  private keys = new Int32Array(3 * 16);
  private keyCount = 0;
  /** The string read last held an escape. */
  private escaped = false;

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
        this.text();
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
      this.text();
      if (!this.key(base, keyStart, this.pos - 1)) return false;
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

  /**
   * A key [start, end) of the object whose keys start at `base`: false when it is there already
   * (keys with escapes compared decoded).
   */
  private key(base: number, start: number, end: number): boolean {
    const { b, keys, escaped } = this;
    const length = end - start;
    if (this.keyCount - base >= MAX_KEYS) return false;
    const decoded = escaped ? decodeString(b, start, end) : undefined;
    for (let k = 3 * base; k < 3 * this.keyCount; k += 3) {
      const other = keys[k]!;
      const otherEnd = keys[k + 1]!;
      const same = decoded === undefined && keys[k + 2] === 0
        ? otherEnd - other === length && sameBytes(b, start, b, other, length)
        : (decoded ?? b.toString('utf8', start, end)) === decodeString(b, other, otherEnd);
      if (same) return false;
    }
    // A key of digits (an array index) comes first in an object, whatever its place in the text.
    if (decoded === undefined ? length > 0 && digitsOnly(b, start, end) : /^[0-9]+$/.test(decoded)) this.asIs = false;
    if (3 * this.keyCount + 3 > keys.length) {
      this.keys = new Int32Array(keys.length * 2);
      this.keys.set(keys);
    }
    this.keys.set([start, end, escaped ? 1 : 0], 3 * this.keyCount++);
    return true;
  }

  /**
   * The string at `pos`, `pos` left after it; `escaped` says whether it holds an escape. Its
   * bytes are not its text as they are when an escape is not the one JSON.stringify writes: that
   * writes `\"`, `\\`, the short escapes of \b \t \n \f \r, `\u00xx` for the other control
   * characters and `\udxxx` for a lone surrogate, in lower case, and nothing else.
   */
  private text(): void {
    const { b } = this;
    let i = this.pos + 1;
    let escaped = false;
    for (let c = b[i]!; c !== QUOTE; c = b[i]!) {
      if (c !== BACKSLASH) {
        i++;
        continue;
      }
      escaped = true;
      const next = b[i + 1]!;
      if (next !== LOWER_U) {
        if (next === SLASH) this.asIs = false;
        i += 2;
        continue;
      }
      const unit = hex4(b, i + 2);
      const lower = lowerCase(b, i + 2);
      i += 6;
      const high = unit >= 0xd800 && unit <= 0xdbff;
      // A high surrogate before a low one is a pair, written as the character it is.
      const paired = high && b[i] === BACKSLASH && b[i + 1] === LOWER_U && (hex4(b, i + 2) & 0xfc00) === 0xdc00;
      const surrogate = unit >= 0xd800 && unit <= 0xdfff;
      const control = unit < 0x20 && !SHORT_ESCAPED.has(unit);
      if (!lower || paired || !(control || surrogate)) this.asIs = false;
    }
    this.escaped = escaped;
    this.pos = i + 1;
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
    const start = this.pos;
    const integer = this.integer();
    if (integer !== undefined) {
      if (Object.is(integer, -0)) this.asIs = false;
      return true;
    }
    if (!this.fractionRest()) return false;
    if (this.asIs) {
      const text = this.b.toString('latin1', start, this.pos);
      if (String(Number(text)) !== text) this.asIs = false;
    }
    return true;
  }
}

/** The four hexadecimal digits at `at` (after `\u`) as a number. */
function hex4(b: Buffer, at: number): number {
  let value = 0;
  for (let k = at; k < at + 4; k++) {
    const c = b[k]! | 0x20;
    value = value * 16 + (c <= NINE ? c - ZERO : c - 0x61 + 10);
  }
  return value;
}

/** Whether the four hexadecimal digits at `at` have no upper-case letter (JSON.stringify writes lower case). */
function lowerCase(b: Buffer, at: number): boolean {
  for (let k = at; k < at + 4; k++) if (b[k]! >= 0x41 && b[k]! <= 0x46) return false;
  return true;
}
