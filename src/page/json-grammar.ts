import { MAX_JSON_DEPTH, mayPassDoubleRange, pastDoubleRange } from '../util/json-limits.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const LF = 0x0a;
const CR = 0x0d;

/** What follows a member or an element (JsonGrammar.separator). */
export const MORE = 0;
export const CLOSED = 1;
export const BAD = 2;
export type Separator = typeof MORE | typeof CLOSED | typeof BAD;

/**
 * Nesting deeper than this is not read (the scan recurses once per level): the scan leaves the
 * answer, and the client's check (checkAnswerBytes) refuses it, naming where.
 */
const MAX_DEPTH = MAX_JSON_DEPTH;
/** The most digits of an integer that is always safe: 2^53 has 16. */
const SAFE_DIGITS = 15;

/** Bytes a string holds as they are: not a quote, a backslash or a control character. */
const PLAIN = new Uint8Array(256);
for (let c = 0x20; c < 256; c++) PLAIN[c] = c === QUOTE || c === BACKSLASH ? 0 : 1;
/** Bytes that may follow a backslash, `u` aside. */
const ESCAPE = new Uint8Array(256);
for (const c of '"\\/bfnrt') ESCAPE[c.charCodeAt(0)] = 1;
const HEX = new Uint8Array(256);
for (const c of '0123456789abcdefABCDEF') HEX[c.charCodeAt(0)] = 1;
const WHITESPACE = new Uint8Array(256);
for (const c of [0x20, 0x09, LF, CR]) WHITESPACE[c] = 1;

/** Four hexadecimal digits at `at` (what follows `\u`). */
function isHex4(b: Uint8Array, at: number): boolean {
  return HEX[b[at]!] === 1 && HEX[b[at + 1]!] === 1 && HEX[b[at + 2]!] === 1 && HEX[b[at + 3]!] === 1;
}

/**
 * JSON's grammar, checked byte by byte where it lies (the grammar JSON.parse accepts, bytes known to
 * be UTF-8): each method reads the token at `pos`, leaves `pos` after it and answers false when the
 * bytes there are not one. For scans that must refuse what JSON.parse would refuse, and leave it to
 * JSON.parse to say what is wrong (page-scan.ts, and the datapoints answer's scan).
 *
 * It answers false too for what the client refuses before any parse (checkAnswerBytes), so that a
 * scan that answers has read none of it: nesting deeper than MAX_JSON_DEPTH levels of the answer
 * (`depth` counts them: a scan that reads a level itself, not through value(), counts it there) and
 * a number past the range of a double.
 */
export class JsonGrammar {
  pos = 0;
  /** Levels of objects and arrays of the answer around `pos`. */
  depth = 0;
  /** A line break was skipped as whitespace since this was last cleared. */
  broke = false;
  /**
   * A number read so far has a run of more than 15 digits (an integer such a number holds may be
   * beyond 2^53, which JSON.parse would round).
   */
  longDigits = false;

  constructor(public b: Uint8Array) {}

  /**
   * After a member or element: the closing byte `close` (CLOSED) or a comma and the whitespace
   * after it (MORE), else BAD.
   */
  separator(close: number): Separator {
    this.ws();
    const c = this.b[this.pos++];
    if (c === close) return CLOSED;
    if (c !== COMMA) return BAD;
    this.ws();
    return MORE;
  }

  ws(): void {
    const { b } = this;
    let c = b[this.pos]!;
    while (WHITESPACE[c] === 1) {
      if (c === LF || c === CR) this.broke = true;
      c = b[++this.pos]!;
    }
  }

  /** Skips one JSON value at `pos`; false when the bytes there are not one. */
  value(): boolean {
    const c = this.b[this.pos];
    if (c === QUOTE) return this.string();
    if (c === OPEN_OBJECT) return this.object();
    if (c === OPEN_ARRAY) return this.array();
    if (c === MINUS || (c !== undefined && c >= ZERO && c <= NINE)) return this.number();
    if (c === 0x74) return this.literal('true');
    if (c === 0x66) return this.literal('false');
    if (c === 0x6e) return this.literal('null');
    return false;
  }

  private object(): boolean {
    return this.container(CLOSE_OBJECT, true);
  }

  private array(): boolean {
    return this.container(CLOSE_ARRAY, false);
  }

  /** An object (`keyed`: members `"key": value`) or an array at `pos`, up to `close`. */
  private container(close: number, keyed: boolean): boolean {
    const { b } = this;
    if (++this.depth > MAX_DEPTH) return false;
    this.pos++;
    this.ws();
    if (b[this.pos] === close) {
      this.pos++;
      this.depth--;
      return true;
    }
    for (;;) {
      if (keyed && !this.key()) return false;
      if (!this.value()) return false;
      const next = this.separator(close);
      if (next === BAD) return false;
      if (next === CLOSED) break;
    }
    this.depth--;
    return true;
  }

  /** A member's key and colon at `pos`: leaves `pos` at its value. */
  private key(): boolean {
    if (this.b[this.pos] !== QUOTE || !this.string()) return false;
    this.ws();
    if (this.b[this.pos] !== COLON) return false;
    this.pos++;
    this.ws();
    return true;
  }

  /** A string at `pos` (its opening quote): leaves `pos` after the closing quote. */
  string(): boolean {
    const { b } = this;
    const end = b.length;
    let i = this.pos + 1;
    for (;;) {
      while (PLAIN[b[i]!] === 1) i++;
      if (i >= end) return false;
      const c = b[i];
      if (c === QUOTE) break;
      if (c !== BACKSLASH) return false;
      const escaped = b[i + 1]!;
      if (ESCAPE[escaped] === 1) {
        i += 2;
      } else if (escaped === 0x75 && isHex4(b, i + 2)) {
        i += 6;
      } else {
        return false;
      }
    }
    this.pos = i + 1;
    return true;
  }

  /**
   * A member's key and colon at `pos`, `pos` left at its value: the key's bytes inside its quotes;
   * undefined when it is none, or holds an escape (a scan then leaves the object to JSON.parse).
   */
  plainKey(): Uint8Array | undefined {
    const { b } = this;
    const start = this.pos + 1;
    if (b[this.pos] !== QUOTE || !this.string()) return undefined;
    const key = b.subarray(start, this.pos - 1);
    if (key.includes(BACKSLASH)) return undefined;
    this.ws();
    if (b[this.pos] !== COLON) return undefined;
    this.pos++;
    this.ws();
    return key;
  }

  /** The number at `pos` when it is a safe integer written in digits; undefined for any other value. */
  safeInteger(): number | undefined {
    const { b } = this;
    const start = this.pos;
    if (!this.number()) return undefined;
    let i = start;
    const negative = b[i] === MINUS;
    if (negative) i++;
    const digits = this.pos - i;
    let value = 0;
    for (; i < this.pos; i++) {
      const c = b[i]!;
      if (c < ZERO || c > NINE) return undefined;
      value = value * 10 + (c - ZERO);
    }
    // Up to 16 digits: if the result is safe, every step of the sum was exact.
    if (digits > 16 || value > Number.MAX_SAFE_INTEGER) return undefined;
    return negative ? -value : value;
  }

  /** The string at `pos`, decoded; undefined when it is none. */
  text(): string | undefined {
    const start = this.pos;
    if (this.b[start] !== QUOTE || !this.string()) return undefined;
    const token = Buffer.from(this.b.buffer, this.b.byteOffset + start, this.pos - start);
    if (token.includes(BACKSLASH)) return JSON.parse(token.toString('utf8')) as string;
    return token.toString('utf8', 1, token.length - 1);
  }

  /** `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` */
  number(): boolean {
    const { b } = this;
    let i = this.pos;
    if (b[i] === MINUS) i++;
    let run = i;
    if (b[i] === ZERO) i++;
    else if (isDigit(b[i])) while (isDigit(b[i])) i++;
    else return false;
    let longest = i - run;
    const integerDigits = longest;
    let exponent = false;
    if (b[i] === DOT) {
      run = ++i;
      if (!isDigit(b[i])) return false;
      while (isDigit(b[i])) i++;
      longest = Math.max(longest, i - run);
    }
    if (b[i] === 0x65 || b[i] === 0x45) {
      exponent = true;
      i++;
      if (b[i] === PLUS || b[i] === MINUS) i++;
      run = i;
      if (!isDigit(b[i])) return false;
      while (isDigit(b[i])) i++;
      longest = Math.max(longest, i - run);
    }
    if (mayPassDoubleRange(integerDigits, exponent) && pastDoubleRange(b, this.pos, i)) return false;
    if (longest > SAFE_DIGITS) this.longDigits = true;
    this.pos = i;
    return true;
  }

  private literal(word: string): boolean {
    const { b } = this;
    for (let k = 0; k < word.length; k++) if (b[this.pos + k] !== word.charCodeAt(k)) return false;
    this.pos += word.length;
    return true;
  }
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= ZERO && c <= NINE;
}
