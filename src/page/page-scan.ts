import { isUtf8 } from 'node:buffer';
import { MAX_ITEM_DEPTH } from '../util/json-depth.js';

/**
 * What one pass over a list page's bytes finds without building its objects: where each element
 * of the top-level `items` array lies, and the page's `nextCursor`.
 */
export interface ScannedPage {
  /** Start and end (exclusive) byte offsets of each element of `items`, in pairs. */
  readonly bounds: readonly number[];
  readonly nextCursor: string | undefined;
  /** Some element holds a line break between its tokens, so its bytes are not one line as they are. */
  readonly lineBreaks: boolean;
}

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

/** What follows a member or an element (Scanner.separator). */
const MORE = 0;
const CLOSED = 1;
const BAD = 2;
type Separator = typeof MORE | typeof CLOSED | typeof BAD;

/**
 * Nesting deeper than this is left to JSON.parse (the scan recurses once per level), whose caller
 * refuses an item that deep: MAX_ITEM_DEPTH.
 */
const MAX_DEPTH = MAX_ITEM_DEPTH;

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

const ITEMS = Buffer.from('items');
const NEXT_CURSOR = Buffer.from('nextCursor');

/**
 * Scans a list page, `{"items": [...], "nextCursor": "..."}`, in one pass over its bytes: checks
 * that they are valid JSON (the grammar JSON.parse accepts) and finds the byte range of every
 * element of `items` and the value of `nextCursor`, without building a single object. About a
 * tenth of the work of `JSON.parse` on a page of events (bench/RESULTS.md).
 *
 * It answers undefined whenever the page is not the plain case, and the caller then parses the
 * body with JSON.parse, which accepts it or names what is wrong: bytes that are not UTF-8, not JSON,
 * a body that is not an object, `items` missing or not an array, `items` or `nextCursor` given
 * twice, a `nextCursor` that is not a non-empty string, a top-level key written with escapes, or
 * nesting deeper than MAX_DEPTH. So when it answers, JSON.parse would have given the same items
 * and cursor.
 */
export function scanPage(body: Uint8Array): ScannedPage | undefined {
  if (!isUtf8(body)) return undefined;
  return new Scanner(body).page();
}

/** Four hexadecimal digits at `at` (what follows `\u`). */
function isHex4(b: Uint8Array, at: number): boolean {
  return HEX[b[at]!] === 1 && HEX[b[at + 1]!] === 1 && HEX[b[at + 2]!] === 1 && HEX[b[at + 3]!] === 1;
}

class Scanner {
  private pos = 0;
  private depth = 0;
  /** A line break was skipped as whitespace since this was last cleared. */
  private broke = false;

  constructor(private readonly b: Uint8Array) {}

  page(): ScannedPage | undefined {
    const { b } = this;
    this.ws();
    if (b[this.pos] !== OPEN_OBJECT) return undefined;
    this.pos++;
    let bounds: number[] | undefined;
    let lineBreaks = false;
    let cursor: string | undefined;
    let cursorSeen = false;
    this.ws();
    if (b[this.pos] === CLOSE_OBJECT) return undefined;
    for (;;) {
      const keyStart = this.pos + 1;
      if (b[this.pos] !== QUOTE || !this.string()) return undefined;
      const key = b.subarray(keyStart, this.pos - 1);
      if (key.includes(BACKSLASH)) return undefined;
      this.ws();
      if (b[this.pos] !== COLON) return undefined;
      this.pos++;
      this.ws();
      if (equal(key, ITEMS)) {
        if (bounds !== undefined || b[this.pos] !== OPEN_ARRAY) return undefined;
        bounds = [];
        const items = this.items(bounds);
        if (items === undefined) return undefined;
        lineBreaks = items;
      } else if (equal(key, NEXT_CURSOR)) {
        const start = this.pos;
        if (cursorSeen || b[start] !== QUOTE || !this.string() || this.pos - start === 2) return undefined;
        cursor = decodeString(b, start, this.pos);
        cursorSeen = true;
      } else if (!this.value()) {
        return undefined;
      }
      const next = this.separator(CLOSE_OBJECT);
      if (next === BAD) return undefined;
      if (next === CLOSED) break;
    }
    this.ws();
    if (this.pos !== b.length || bounds === undefined) return undefined;
    return { bounds, nextCursor: cursor, lineBreaks };
  }

  /** The `items` array at `pos`: pushes each element's range; answers whether one holds a line break. */
  private items(bounds: number[]): boolean | undefined {
    const { b } = this;
    this.pos++;
    this.ws();
    if (b[this.pos] === CLOSE_ARRAY) {
      this.pos++;
      return false;
    }
    let lineBreaks = false;
    for (;;) {
      const start = this.pos;
      this.broke = false;
      if (!this.value()) return undefined;
      bounds.push(start, this.pos);
      lineBreaks ||= this.broke;
      const next = this.separator(CLOSE_ARRAY);
      if (next === BAD) return undefined;
      if (next === CLOSED) return lineBreaks;
    }
  }

  /**
   * After a member or element: the closing byte `close` (CLOSED) or a comma and the whitespace
   * after it (MORE), else BAD.
   */
  private separator(close: number): Separator {
    this.ws();
    const c = this.b[this.pos++];
    if (c === close) return CLOSED;
    if (c !== COMMA) return BAD;
    this.ws();
    return MORE;
  }

  private ws(): void {
    const { b } = this;
    let c = b[this.pos]!;
    while (WHITESPACE[c] === 1) {
      if (c === LF || c === CR) this.broke = true;
      c = b[++this.pos]!;
    }
  }

  /** Skips one JSON value at `pos`; false when the bytes there are not one. */
  private value(): boolean {
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
  private string(): boolean {
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

  /** `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` */
  private number(): boolean {
    const { b } = this;
    let i = this.pos;
    if (b[i] === MINUS) i++;
    if (b[i] === ZERO) i++;
    else if (isDigit(b[i])) while (isDigit(b[i])) i++;
    else return false;
    if (b[i] === DOT) {
      i++;
      if (!isDigit(b[i])) return false;
      while (isDigit(b[i])) i++;
    }
    if (b[i] === 0x65 || b[i] === 0x45) {
      i++;
      if (b[i] === PLUS || b[i] === MINUS) i++;
      if (!isDigit(b[i])) return false;
      while (isDigit(b[i])) i++;
    }
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

function equal(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false;
  return true;
}

/** The string token at [start, end), quotes included. */
function decodeString(b: Uint8Array, start: number, end: number): string {
  const token = Buffer.from(b.buffer, b.byteOffset + start, end - start);
  if (token.includes(BACKSLASH)) return JSON.parse(token.toString('utf8')) as string;
  return token.toString('utf8', 1, token.length - 1);
}
