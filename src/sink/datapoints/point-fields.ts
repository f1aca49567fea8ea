import {
  CLOSE_OBJECT,
  decodeString,
  JsonBytes,
  MINUS,
  NINE,
  OPEN_OBJECT,
  QUOTE,
  sameBytes,
  ZERO,
} from '../parquet/json-bytes.js';
import { mayPassDoubleRange, pastDoubleRange } from '../../util/json-limits.js';

/** The start of a value that is not there. */
export const ABSENT = -1;

/** The values a bad numeric point may carry instead of a number, as the doubles they stand for. */
export const SPECIAL_VALUES: Readonly<Record<string, number>> = { 'NaN': NaN, 'Infinity': Infinity, '-Infinity': -Infinity };

const BACKSLASH = 0x5c;
const DOT = 0x2e;
const PLUS = 0x2b;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

/** The plain point's bytes up to its timestamp, and between the timestamp and the value (readPlain). */
const COMMON_HEAD = Buffer.from('{"timestamp":');
const COMMON_VALUE = Buffer.from(',"value":');

/** Integers up to this are exact doubles. */
const MAX_EXACT = 2 ** 53 - 1;
/** 10^0 to 10^22: the powers of ten that are exact doubles. */
const POWERS_OF_TEN = Array.from({ length: 23 }, (_, k) => Number(`1e${k}`));

/** Keys are looked up by their length and first byte; longer keys are none of the names. */
const MAX_INDEXED_KEY = 64;

/**
 * The members of one JSON object found where they lie in its bytes, without building it: a point
 * of a datapoints answer (`timestamp`, `value`, `status`, aggregates) or a point's status (`code`,
 * `symbol`). The bytes must be valid JSON and UTF-8 (the page scan checked them): like JsonBytes,
 * it trusts the grammar.
 *
 * For each of `names` it records where the value lies, the last one when the name is given twice
 * (as JSON.parse keeps it); keys written with escapes are decoded first, so they name what
 * JSON.parse would. Members of other names are listed in their order.
 */
export class PointFields extends JsonBytes {
  /** Per name: where its value starts (ABSENT when not given) and ends. */
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  /**
   * Members of other names, five numbers each: key start and end (inside its quotes), value
   * start and end, and 1 when the key holds an escape.
   */
  others = new Int32Array(5 * 4);
  otherCount = 0;
  /** The object read was `{"timestamp":<integer>,"value":<number>}` to the byte (readPlain). */
  plain = false;
  /** The timestamp of the plain point read. */
  plainTimestamp = 0;
  /** The names' indices of `timestamp` and `value`, for the plain point (readPlain); -1 when not names. */
  private readonly timestampName: number;
  private readonly valueName: number;
  private readonly names: readonly Buffer[];
  private readonly index: ReadonlyMap<string, number>;
  /** Candidate names by key length and first byte (`length * 256 + byte`). */
  private readonly byKey: (number[] | undefined)[] = [];

  constructor(names: readonly string[]) {
    super();
    this.starts = new Int32Array(names.length).fill(ABSENT);
    this.ends = new Int32Array(names.length);
    this.names = names.map((name) => Buffer.from(name));
    this.index = new Map(names.map((name, i) => [name, i]));
    this.timestampName = names.indexOf('timestamp');
    this.valueName = names.indexOf('value');
    this.names.forEach((name, i) => {
      if (name.length > 0 && name.length < MAX_INDEXED_KEY) (this.byKey[name.length * 256 + name[0]!] ??= []).push(i);
    });
  }

  /**
   * Reads the object at `start` of `body` (its opening brace), leaving `pos` after its closing
   * brace; false, having read nothing, when the value there is not an object.
   */
  read(body: Buffer, start: number): boolean {
    const { starts } = this;
    for (let i = 0; i < starts.length; i++) starts[i] = ABSENT;
    this.otherCount = 0;
    if (body[start] !== OPEN_OBJECT) return false;
    this.b = body;
    this.end = body.length;
    this.plain = this.readPlain(body, start);
    if (this.plain) return true;
    this.pos = start + 1;
    for (let c = this.ws(); c !== CLOSE_OBJECT; c = this.next()) {
      const keyStart = this.pos + 1;
      const escaped = this.string();
      const keyEnd = this.pos - 1;
      this.ws();
      this.pos++;
      this.ws();
      const name = escaped ? this.nameOf(decodeString(body, keyStart, keyEnd)) : this.nameAt(keyStart, keyEnd);
      const valueStart = this.pos;
      this.value();
      if (name >= 0) {
        starts[name] = valueStart;
        this.ends[name] = this.pos;
      } else {
        this.other(keyStart, keyEnd, valueStart, escaped);
      }
    }
    this.pos++;
    return true;
  }

  /**
   * The point as the platform writes most of them, `{"timestamp":<integer>,"value":<number>}` to
   * the byte, its timestamp a safe integer in digits: read without looking its keys up, its
   * timestamp into `plainTimestamp`, `pos` left after it; false, having read nothing, for any other
   * bytes. Its grammar is checked as JSON.parse checks it (no leading zero, a digit after a point
   * or an exponent), so that a scan may take it without a pass of its own over it.
   */
  readPlain(b: Buffer, start: number): boolean {
    const { timestampName: timestamp, valueName: value } = this;
    if (value < 0 || timestamp < 0 || !sameBytes(b, start, COMMON_HEAD, 0, COMMON_HEAD.length)) return false;
    const timestampStart = start + COMMON_HEAD.length;
    let i = timestampStart;
    const negative = b[i] === MINUS;
    if (negative) i++;
    const digitsStart = i;
    let time = 0;
    for (let c = b[i]!; c >= ZERO && c <= NINE; c = b[++i]!) time = time * 10 + (c - ZERO);
    // Up to 16 digits, if the result is safe, every step of the sum was exact (JsonBytes.integer).
    const digits = i - digitsStart;
    if (digits === 0 || digits > 16 || time > MAX_EXACT || (digits > 1 && b[digitsStart] === ZERO)) return false;
    const timestampEnd = i;
    if (!sameBytes(b, i, COMMON_VALUE, 0, COMMON_VALUE.length)) return false;
    i += COMMON_VALUE.length;
    const valueStart = i;
    i = numberEnd(b, i);
    if (i < 0 || b[i] !== CLOSE_OBJECT) return false;
    const { starts } = this;
    for (let n = 0; n < starts.length; n++) starts[n] = ABSENT;
    this.otherCount = 0;
    this.b = b;
    this.end = b.length;
    this.starts[timestamp] = timestampStart;
    this.ends[timestamp] = timestampEnd;
    this.starts[value] = valueStart;
    this.ends[value] = i;
    this.plainTimestamp = negative ? -time : time;
    this.pos = i + 1;
    return true;
  }

  /** The first byte of name `n`'s value (a quote for a string, `{` for an object...); 0 when absent. */
  first(n: number): number {
    const start = this.starts[n]!;
    return start === ABSENT ? 0 : this.b[start]!;
  }

  /** Name `n`'s value, when it is a safe integer written in digits (no fraction or exponent). */
  integerOf(n: number): number | undefined {
    const start = this.starts[n]!;
    if (start === ABSENT) return undefined;
    this.pos = start;
    return this.integer();
  }

  /** Name `n`'s value as a number: a number token, or a string standing for one (SPECIAL_VALUES). */
  numberOf(n: number): number | undefined {
    const c = this.first(n);
    if (c === MINUS || (c >= ZERO && c <= NINE)) return numberAt(this.b, this.starts[n]!, this.ends[n]!);
    if (c !== QUOTE) return undefined;
    const text = this.textOf(n);
    return Object.hasOwn(SPECIAL_VALUES, text) ? SPECIAL_VALUES[text] : undefined;
  }

  /** Name `n`'s value, a string (its first byte is a quote), decoded. */
  textOf(n: number): string {
    const start = this.starts[n]! + 1;
    const end = this.ends[n]! - 1;
    const { b } = this;
    for (let i = start; i < end; i++) if (b[i] === BACKSLASH) return decodeString(b, start, end);
    return b.toString('utf8', start, end);
  }

  /**
   * The members of other names as one object, keys and values as JSON.parse gives them and in the
   * order it gives them (integer keys first, a key given twice where it came first with its last
   * value); undefined when there are none.
   */
  othersObject(): Record<string, unknown> | undefined {
    const { b, others, otherCount } = this;
    if (otherCount === 0) return undefined;
    const object = Object.create(null) as Record<string, unknown>;
    for (let o = 0; o < 5 * otherCount; o += 5) {
      const key = others[o + 4] === 1 ? decodeString(b, others[o]!, others[o + 1]!) : b.toString('utf8', others[o], others[o + 1]);
      object[key] = JSON.parse(b.toString('utf8', others[o + 2], others[o + 3]));
    }
    return object;
  }

  /** The name of a key written with escapes, decoded; -1 when none. */
  private nameOf(key: string): number {
    return this.index.get(key) ?? -1;
  }

  /** The name of the key at [start, end) of `b`, written without escapes; -1 when none. */
  private nameAt(start: number, end: number): number {
    const length = end - start;
    if (length >= MAX_INDEXED_KEY) return -1;
    const candidates = this.byKey[length * 256 + this.b[start]!];
    if (candidates === undefined) return -1;
    for (const n of candidates) if (sameBytes(this.b, start, this.names[n]!, 0, length)) return n;
    return -1;
  }

  private other(keyStart: number, keyEnd: number, valueStart: number, escaped: boolean): void {
    let { others } = this;
    const at = 5 * this.otherCount++;
    if (at + 5 > others.length) {
      others = new Int32Array(others.length * 2);
      others.set(this.others);
      this.others = others;
    }
    others[at] = keyStart;
    others[at + 1] = keyEnd;
    others[at + 2] = valueStart;
    others[at + 3] = this.pos;
    others[at + 4] = escaped ? 1 : 0;
  }
}

/**
 * The number token at [start, end) of `b`, as Number() reads it. Digits that make a safe integer
 * scaled by a power of ten of at most 22 are exact doubles, whose quotient is the correctly rounded
 * value (Clinger's fast path); other numbers are read by Number().
 */
export function numberAt(b: Buffer, start: number, end: number): number {
  let i = start;
  const negative = b[i] === MINUS;
  if (negative) i++;
  let mantissa = 0;
  let scale = 0;
  for (let c = b[i]!; c >= ZERO && c <= NINE; c = b[++i]!) mantissa = mantissa * 10 + (c - ZERO);
  if (b[i] === DOT) {
    for (let c = b[++i]!; c >= ZERO && c <= NINE; c = b[++i]!) {
      mantissa = mantissa * 10 + (c - ZERO);
      scale--;
    }
  }
  // Each partial sum is at most the digits' value: all are exact when it is below 2^53, and when
  // it is not, the sum (rounded up, never down past it) is not either.
  if (i !== end || mantissa > MAX_EXACT || scale < -22) return Number(b.toString('latin1', start, end));
  const value = scale === 0 ? mantissa : mantissa / POWERS_OF_TEN[-scale]!;
  return negative ? -value : value;
}

/**
 * Where the JSON number at `i` of `b` ends, `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`; -1 for
 * none, and for one past the range of a double (the scan then leaves the answer to the client's check).
 */
function numberEnd(b: Buffer, i: number): number {
  const start = i;
  if (b[i] === MINUS) i++;
  const digits = i;
  if (b[i] === ZERO) i++;
  else if (isDigit(b[i]!)) while (isDigit(b[i]!)) i++;
  else return -1;
  const integerDigits = i - digits;
  if (b[i] === DOT) {
    if (!isDigit(b[++i]!)) return -1;
    while (isDigit(b[i]!)) i++;
  }
  const exponent = b[i] === LOWER_E || b[i] === UPPER_E;
  if (exponent) {
    i++;
    if (b[i] === PLUS || b[i] === MINUS) i++;
    if (!isDigit(b[i]!)) return -1;
    while (isDigit(b[i]!)) i++;
  }
  return mayPassDoubleRange(integerDigits, exponent) && pastDoubleRange(b, start, i) ? -1 : i;
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}
