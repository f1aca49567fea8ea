/** Reading JSON tokens where they lie in a page's bytes, for the item walk (item-fields.ts, item-walk.ts). */

export const QUOTE = 0x22;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;
export const MINUS = 0x2d;
export const ZERO = 0x30;
export const NINE = 0x39;
export const LOWER_T = 0x74;
export const LOWER_F = 0x66;
export const LOWER_N = 0x6e;
const BACKSLASH = 0x5c;
const DOT = 0x2e;
const PLUS = 0x2b;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

const WHITESPACE = new Uint8Array(256);
for (const c of [0x20, 0x09, 0x0a, 0x0d]) WHITESPACE[c] = 1;

/**
 * A position in bytes that are valid JSON (the page scan checked them): each method reads the token
 * at `pos` and leaves `pos` after it, trusting the grammar, so none looks for errors JSON.parse
 * would report.
 */
export class JsonBytes {
  b: Buffer = Buffer.alloc(0);
  pos = 0;
  /** Where the value being read ends in `b`. */
  end = 0;

  /** Skips whitespace; the byte at `pos` after it. */
  ws(): number {
    const { b } = this;
    let c = b[this.pos]!;
    while (WHITESPACE[c] === 1) c = b[++this.pos]!;
    return c;
  }

  /** The string at `pos` (its opening quote), `pos` left after the closing quote; whether it holds an escape. */
  string(): boolean {
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

  /** The safe integer written at `pos` as digits (no fraction, no exponent); undefined for any other token. */
  integer(): number | undefined {
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

  /**
   * After integer() answered undefined: whether the number goes on with a fraction or an
   * exponent (then skipped, `pos` after it); false for an integer that is not safe.
   */
  fractionRest(): boolean {
    const c = this.b[this.pos];
    if (c !== DOT && c !== LOWER_E && c !== UPPER_E) return false;
    this.number();
    return true;
  }

  /** Skips the number at `pos`. */
  number(): void {
    const { b } = this;
    let c = b[++this.pos]!;
    while ((c >= ZERO && c <= NINE) || c === DOT || c === LOWER_E || c === UPPER_E || c === MINUS || c === PLUS) {
      c = b[++this.pos]!;
    }
  }

  /** Skips the value at `pos`, whatever it is. */
  value(): void {
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

  /** After an element of an array or object: skips a comma and the whitespace around it; the byte at `pos`. */
  next(): number {
    const { b } = this;
    let c = b[this.pos]!;
    while (WHITESPACE[c] === 1) c = b[++this.pos]!;
    if (c !== COMMA) return c;
    c = b[++this.pos]!;
    while (WHITESPACE[c] === 1) c = b[++this.pos]!;
    return c;
  }
}

/** The string inside quotes at [start, end) of `b`, decoded. */
export function decodeString(b: Buffer, start: number, end: number): string {
  return JSON.parse(b.toString('utf8', start - 1, end + 1)) as string;
}

export function sameBytes(a: Uint8Array, aStart: number, b: Uint8Array, bStart: number, length: number): boolean {
  for (let k = 0; k < length; k++) if (a[aStart + k] !== b[bStart + k]) return false;
  return true;
}

export function digitsOnly(b: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (b[i]! < ZERO || b[i]! > NINE) return false;
  return true;
}
