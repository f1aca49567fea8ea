/**
 * The deepest nesting of objects and arrays a JSON answer may have, its own levels included (a
 * list page's items start at level 3, a sync answer's at level 4): far beyond anything the platform
 * serves (items are a few levels deep), and shallow enough that any parse or walk of it (JSON.parse,
 * lossless-json, JSON.stringify, the Parquet columns) runs in little memory and never out of stack.
 */
export const MAX_JSON_DEPTH = 256;

/** What findJsonProblem found, and where: the byte offset of the bracket one level too deep, or of the number. */
export type JsonProblem =
  | { kind: 'depth'; at: number } |
  /** A number whose value is past the range of a double: JSON.parse would make it ±Infinity. */
  { kind: 'range'; at: number; end: number };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

const OTHER = 0;
const STRING = 1;
const OPEN = 2;
const CLOSE = 3;
const NUMBER = 4;
/** What a byte outside strings starts. */
const KIND = new Uint8Array(256);
KIND[QUOTE] = STRING;
KIND[0x7b] = OPEN;
KIND[0x5b] = OPEN;
KIND[0x7d] = CLOSE;
KIND[0x5d] = CLOSE;
KIND[MINUS] = NUMBER;
for (let c = ZERO; c <= 0x39; c++) KIND[c] = NUMBER;
const DIGIT = new Uint8Array(256);
for (let c = ZERO; c <= 0x39; c++) DIGIT[c] = 1;
/** Bytes inside a string that neither end it nor escape the next one. */
const IN_STRING = new Uint8Array(256).fill(1);
IN_STRING[QUOTE] = 0;
IN_STRING[BACKSLASH] = 0;

/**
 * The largest power of ten below which every decimal number is finite as a double (about 1.8e308):
 * a number whose first digit stands at 10^308 or higher is parsed to tell.
 */
const FINITE_BELOW_DECADE = 308;
/** Exponent digits read exactly; more say "huge" and send the number to the exact check. */
const EXPONENT_DIGITS = 6;

/**
 * One pass over the bytes of a JSON answer, before anything parses them: the first place where its
 * objects and arrays nest deeper than `maxDepth`, or where a number lies past the range of a double
 * (JSON.parse would turn `1e400` into Infinity, which a Parquet double keeps and an instance column
 * or `extra` turns into null). Strings are skipped as wholes, escapes respected, so a bracket or
 * digit inside one counts for nothing. Undefined when there is neither.
 *
 * It does not check the grammar (the scans and JSON.parse do, afterwards, on bytes that passed), and
 * it takes underflow as it comes: `1e-400` rounds to 0 as every decimal rounds to its nearest double.
 * Most numbers cost a digit loop; one that may pass 10^308 (an exponent, or 309 digits) is parsed to
 * tell. About a third of the work of the page scan (bench/RESULTS.md).
 */
export function findJsonProblem(b: Uint8Array, maxDepth = MAX_JSON_DEPTH): JsonProblem | undefined {
  const n = b.length;
  let depth = 0;
  let i = 0;
  while (i < n) {
    const kind = KIND[b[i]!];
    if (kind === OTHER) {
      i++;
    } else if (kind === STRING) {
      i = stringEnd(b, i + 1);
    } else if (kind === OPEN) {
      if (++depth > maxDepth) return { kind: 'depth', at: i };
      i++;
    } else if (kind === CLOSE) {
      depth--;
      i++;
    } else {
      const end = numberEnd(b, i);
      if (end < 0) return { kind: 'range', at: i, end: -end };
      i = end;
    }
  }
  return undefined;
}

/** The offset after the string whose content starts at `i` (after its closing quote), or the end. */
export function stringEnd(b: Uint8Array, i: number): number {
  const n = b.length;
  for (;;) {
    while (IN_STRING[b[i]!] === 1) i++;
    if (i >= n) return n;
    if (b[i] === QUOTE) return i + 1;
    i += 2;
  }
}

/**
 * The offset after the number at `start`; its negation when the number is past the range of a
 * double. Reads `-? digits (. digits)? ([eE] [+-]? digits)?` as far as it goes: the grammar is the
 * scans' to check.
 */
function numberEnd(b: Uint8Array, start: number): number {
  let i = start;
  if (b[i] === MINUS) i++;
  const digits = i;
  while (DIGIT[b[i]!] === 1) i++;
  const integerDigits = i - digits;
  if (b[i] === DOT) {
    i++;
    while (DIGIT[b[i]!] === 1) i++;
  }
  const e = b[i];
  const exponent = e === LOWER_E || e === UPPER_E;
  if (exponent) {
    i++;
    if (b[i] === MINUS || b[i] === PLUS) i++;
    while (DIGIT[b[i]!] === 1) i++;
  }
  return mayPassDoubleRange(integerDigits, exponent) && pastDoubleRange(b, start, i) ? -i : i;
}

/**
 * Whether a number with `integerDigits` digits before its point, and an exponent or not, may lie
 * past the range of a double: the cheap test a scan makes of each number, before pastDoubleRange.
 */
export function mayPassDoubleRange(integerDigits: number, exponent: boolean): boolean {
  return exponent || integerDigits > FINITE_BELOW_DECADE;
}

/**
 * Whether the number token at [start, end) of `b` (JSON's grammar) is past the range of a double,
 * so that JSON.parse would make it ±Infinity. Underflow is not: `1e-400` rounds to 0.
 */
export function pastDoubleRange(b: Uint8Array, start: number, end: number): boolean {
  let i = start;
  if (b[i] === MINUS) i++;
  const digits = i;
  while (i < end && DIGIT[b[i]!] === 1) i++;
  // Where the first digit stands: 10^(integer digits - 1). A leading 0 (0.5, 0e5) stands below 10^1.
  let decade = b[digits] === ZERO ? 0 : i - digits - 1;
  while (i < end && b[i] !== LOWER_E && b[i] !== UPPER_E) i++;
  if (i < end) {
    i++;
    const sign = b[i];
    if (sign === MINUS || sign === PLUS) i++;
    let exponent = 0;
    for (let k = 0; i < end && DIGIT[b[i]!] === 1; k++, i++) {
      exponent = k < EXPONENT_DIGITS ? exponent * 10 + (b[i]! - ZERO) : Infinity;
    }
    decade += sign === MINUS ? -exponent : exponent;
  }
  if (decade < FINITE_BELOW_DECADE) return false;
  const value = Number(Buffer.from(b.buffer, b.byteOffset + start, end - start).toString('latin1'));
  // NaN: not a number at all, which is the grammar's to refuse.
  return value === Infinity || value === -Infinity;
}
