import { isUtf8 } from 'node:buffer';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const LF = 0x0a;
const CR = 0x0d;
const COMMA = 0x2c;
const SPACE = 0x20;
const TAB = 0x09;
const ITEMS = Buffer.from('items');

/**
 * The bytes of each element of a page's top-level `items` array, exactly as the server sent them,
 * so that NDJSON shards hold the items as received without a JSON.stringify per item (it cost more
 * than the JSON.parse of the page: bench/RESULTS.md, "Levers kept").
 *
 * One pass over the bytes, tracking strings (with escapes) and nesting depth. The page was already
 * parsed by JSON.parse, so the body is valid JSON; this only finds boundaries. It answers undefined,
 * and the caller falls back to JSON.stringify, whenever the bytes cannot become one line per item
 * as they are: not valid UTF-8, an element that is not an object or holds a line break between
 * tokens (a pretty-printed body), a second `items` key, or a count other than `expected` (the
 * length of the parsed array).
 */
export function itemBytes(body: Uint8Array, expected: number): Uint8Array[] | undefined {
  if (!isUtf8(body)) return undefined;
  const items: Uint8Array[] = [];
  let depth = 0;
  /** Where the last string at depth 1 (a key of the page object, or a value) started and ended. */
  let keyStart = -1;
  let keyEnd = -1;
  let inItems = false;
  let seenItems = false;
  let elementStart = -1;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === QUOTE) {
      // Strings are most of the bytes: jump to the closing quote (native search) instead of walking.
      const end = closingQuote(body, i);
      if (end < 0 || (inItems && depth === 2)) return undefined;
      if (depth === 1) {
        keyStart = i + 1;
        keyEnd = end;
      }
      i = end;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth++;
      if (depth === 2 && c === OPEN_ARRAY && isItemsKey(body, keyStart, keyEnd)) {
        if (seenItems) return undefined;
        inItems = true;
        seenItems = true;
      } else if (inItems && depth === 3) {
        if (c !== OPEN_OBJECT) return undefined;
        elementStart = i;
      }
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
      if (inItems && depth === 2) {
        items.push(body.subarray(elementStart, i + 1));
        elementStart = -1;
      } else if (inItems && depth === 1) {
        inItems = false;
      }
    } else if (inItems && depth >= 3 && (c === LF || c === CR)) {
      return undefined;
    } else if (inItems && depth === 2 && c !== COMMA && c !== SPACE && c !== TAB && c !== LF && c !== CR) {
      // A number, true, false or null as an element.
      return undefined;
    }
  }
  return items.length === expected ? items : undefined;
}

/** The index of the quote that closes the string opening at `open`, or -1. */
function closingQuote(body: Uint8Array, open: number): number {
  let end = body.indexOf(QUOTE, open + 1);
  while (end > 0 && body[end - 1] === BACKSLASH) {
    // Escaped when an odd number of backslashes precede it.
    let k = end - 1;
    while (body[k] === BACKSLASH) k--;
    if ((end - 1 - k) % 2 === 0) break;
    end = body.indexOf(QUOTE, end + 1);
  }
  return end;
}

function isItemsKey(body: Uint8Array, start: number, end: number): boolean {
  if (end - start !== ITEMS.length) return false;
  for (let k = 0; k < ITEMS.length; k++) if (body[start + k] !== ITEMS[k]) return false;
  return true;
}
