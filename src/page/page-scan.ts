import { isUtf8 } from 'node:buffer';
import { MAX_JSON_DEPTH } from '../util/json-limits.js';
import { BAD, CLOSED, JsonGrammar } from './json-grammar.js';

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
  /** Some number of the page has a run of more than 15 digits (JsonGrammar.longDigits). */
  readonly longNumbers: boolean;
  /** Where each element's `space` and `externalId` texts lie (ItemKeys). */
  readonly keys: ItemKeys;
}

/**
 * Four offsets per element of `items`: the start and end (exclusive, quotes included) of the
 * string token of its top-level member `space`, then of `externalId` (an instance's key); -1 and
 * -1 where the element has no such member holding a string. Of a name given twice, the last, as
 * JSON.parse reads it.
 */
export type ItemKeys = readonly number[];

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

const ITEMS = Buffer.from('items');
const NEXT_CURSOR = Buffer.from('nextCursor');
const SPACE = Buffer.from('space');
const EXTERNAL_ID = Buffer.from('externalId');

/**
 * Scans a list page, `{"items": [...], "nextCursor": "..."}`, in one pass over its bytes: checks
 * that they are valid JSON (the grammar JSON.parse accepts) and finds the byte range of every
 * element of `items` and the value of `nextCursor`, without building a single object. About a
 * tenth of the work of `JSON.parse` on a page of events (bench/RESULTS.md).
 *
 * It answers undefined whenever the page is not the plain case, and the caller then parses the
 * body with JSON.parse, which accepts it or names what is wrong: bytes that are not UTF-8, not JSON,
 * a body that is not an object, `items` missing or not an array, `items` or `nextCursor` given
 * twice, a `nextCursor` that is not a non-empty string, a key of the body or of an item written
 * with escapes, or nesting deeper than MAX_DEPTH. So when it answers, JSON.parse would have given
 * the same items and cursor, and each item the same `space` and `externalId` (ItemKeys).
 */
export function scanPage(body: Uint8Array): ScannedPage | undefined {
  if (!isUtf8(body)) return undefined;
  return new Scanner(body).page();
}

export class Scanner extends JsonGrammar {
  page(): ScannedPage | undefined {
    const { b } = this;
    this.ws();
    if (b[this.pos] !== OPEN_OBJECT) return undefined;
    this.pos++;
    this.depth = 1;
    let bounds: number[] | undefined;
    const keys: number[] = [];
    let lineBreaks = false;
    let cursor: string | undefined;
    let cursorSeen = false;
    this.ws();
    if (b[this.pos] === CLOSE_OBJECT) return undefined;
    for (;;) {
      const key = this.plainKey();
      if (key === undefined) return undefined;
      if (equal(key, ITEMS)) {
        if (bounds !== undefined || b[this.pos] !== OPEN_ARRAY) return undefined;
        bounds = [];
        const items = this.items(bounds, keys);
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
    return { bounds, nextCursor: cursor, lineBreaks, longNumbers: this.longDigits, keys };
  }

  /**
   * The `items` array at `pos`: pushes each element's range to `bounds`, and where its key lies to
   * `keys` (ItemKeys); answers whether one holds a line break.
   */
  protected items(bounds: number[], keys: number[]): boolean | undefined {
    const { b } = this;
    this.pos++;
    this.ws();
    if (b[this.pos] === CLOSE_ARRAY) {
      this.pos++;
      return false;
    }
    let lineBreaks = false;
    this.depth++;
    for (;;) {
      const start = this.pos;
      this.broke = false;
      if (!this.item(keys)) return undefined;
      bounds.push(start, this.pos);
      lineBreaks ||= this.broke;
      const next = this.separator(CLOSE_ARRAY);
      if (next === BAD) return undefined;
      if (next === CLOSED) break;
    }
    this.depth--;
    return lineBreaks;
  }

  /**
   * An element of `items` at `pos`, read as value() reads it; of an object, the string tokens of
   * its members `space` and `externalId` are noted in `keys` (ItemKeys) on the way, in the same
   * pass. False, as value(), when the bytes are not one value.
   */
  private item(keys: number[]): boolean {
    const { b } = this;
    const at = keys.length;
    keys.push(-1, -1, -1, -1);
    if (b[this.pos] !== OPEN_OBJECT) return this.value();
    if (++this.depth > MAX_JSON_DEPTH) return false;
    this.pos++;
    this.ws();
    if (b[this.pos] === CLOSE_OBJECT) {
      this.pos++;
      this.depth--;
      return true;
    }
    for (;;) {
      const keyStart = this.pos;
      if (b[keyStart] !== QUOTE || !this.string()) return false;
      const slot = keySlot(b, keyStart, this.pos, at);
      this.ws();
      if (b[this.pos] !== COLON) return false;
      this.pos++;
      this.ws();
      const valueStart = this.pos;
      if (!this.value()) return false;
      if (slot >= 0) {
        const text = b[valueStart] === QUOTE;
        keys[slot] = text ? valueStart : -1;
        keys[slot + 1] = text ? this.pos : -1;
      }
      const next = this.separator(CLOSE_OBJECT);
      if (next === BAD) return false;
      if (next === CLOSED) break;
    }
    this.depth--;
    return true;
  }
}

/**
 * Where in `keys` the member whose key is the string token [start, end) of `b` (quotes included)
 * goes: `at` for `space`, `at + 2` for `externalId`, -1 for any other. A key written with escapes
 * (`"sp\u0061ce"` is `space` to JSON.parse too) is decoded first: rare, so slow.
 */
function keySlot(b: Uint8Array, start: number, end: number, at: number): number {
  const length = end - start - 2;
  const first = b[start + 1];
  if (first !== SPACE[0] && first !== EXTERNAL_ID[0] && first !== BACKSLASH) return -1;
  if (length === SPACE.length && same(b, start + 1, SPACE)) return at;
  if (length === EXTERNAL_ID.length && same(b, start + 1, EXTERNAL_ID)) return at + 2;
  // Escaped, `externalId` is at most 6 bytes a character.
  if (length > 6 * EXTERNAL_ID.length) return -1;
  for (let k = start + 1; k < end - 1; k++) {
    if (b[k] !== BACKSLASH) continue;
    const key = JSON.parse(Buffer.from(b.buffer, b.byteOffset + start, end - start).toString('utf8')) as string;
    return key === 'space' ? at : key === 'externalId' ? at + 2 : -1;
  }
  return -1;
}

/** Whether `word` lies in `b` from `start`. */
function same(b: Uint8Array, start: number, word: Uint8Array): boolean {
  for (let k = 0; k < word.length; k++) if (b[start + k] !== word[k]) return false;
  return true;
}

export function equal(a: Uint8Array, b: Uint8Array): boolean {
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
