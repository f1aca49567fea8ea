import { dmsDateDays, dmsTimestampMs } from '../../resources/index.js';
import {
  CLOSE_OBJECT,
  decodeString,
  JsonBytes,
  LOWER_F,
  LOWER_T,
  MINUS,
  NINE,
  OPEN_OBJECT,
  QUOTE,
  sameBytes,
  ZERO,
} from '../parquet/json-bytes.js';
import { JsonText, REFUSED } from './json-text.js';
import { BOOLEAN, DATE, DOUBLE, FLOAT, INT32, INT64, JSON_VALUE, NODE_REF, STRING, TIMESTAMP } from './value-kinds.js';

const SPACE = Buffer.from('space');
const EXTERNAL_ID = Buffer.from('externalId');
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
/** The largest finite float32. */
const FLOAT32_MAX = 3.4028234663852886e38;

/**
 * The values of an instance found where they lie in its bytes, each checked against its column's
 * kind as columnValue (instance-values.ts) checks a parsed value, and kept as entries, one per
 * scalar (a direct relation two: its space, then its externalId): a string's bytes inside its
 * quotes, and 1 in `numbers` when it holds an escape; a number's, a time's (epoch ms, days) or a
 * boolean's value in `numbers`; a json value's bytes, and in `numbers` whether they are its text
 * as they are (AS_IS) or must be written again (REWRITE). InstanceFields reads the instance around them.
 */
export class ValueEntries extends JsonBytes {
  starts = new Int32Array(64);
  ends = new Int32Array(64);
  numbers = new Float64Array(64);
  entryCount = 0;
  private readonly json = new JsonText();

  /** Skips the colon after a key and the whitespace around it. */
  protected colon(): void {
    this.ws();
    this.pos++;
    this.ws();
  }

  /** A value of `kind` at `pos` (not null): its entries, when it is one the kind takes. */
  protected scalar(kind: number): boolean {
    const { b } = this;
    const first = b[this.pos]!;
    const numeric = first === MINUS || (first >= ZERO && first <= NINE);
    switch (kind) {
      case STRING:
        return first === QUOTE && this.text();
      case INT32: {
        const value = numeric ? this.numberValue() : undefined;
        const inRange = value !== undefined && Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX;
        return inRange && this.entry(value);
      }
      case INT64: {
        const value = numeric ? this.numberValue() : undefined;
        return value !== undefined && Number.isSafeInteger(value) && this.entry(value);
      }
      case FLOAT: {
        const value = numeric ? this.numberValue() : undefined;
        return value !== undefined && Math.abs(value) <= FLOAT32_MAX && this.entry(value);
      }
      case DOUBLE: {
        const value = numeric ? this.numberValue() : undefined;
        return value !== undefined && Number.isFinite(value) && this.entry(value);
      }
      case BOOLEAN:
        if (first === LOWER_T) this.pos += 4;
        else if (first === LOWER_F) this.pos += 5;
        else return false;
        return this.entry(first === LOWER_T ? 1 : 0);
      case TIMESTAMP: {
        const value = numeric ? this.numberValue() : first === QUOTE ? this.time(dmsTimestampMs) : undefined;
        return value !== undefined && Number.isSafeInteger(value) && this.entry(value);
      }
      case DATE: {
        const value = first === QUOTE ? this.time(dmsDateDays) : undefined;
        return value !== undefined && this.entry(value);
      }
      case JSON_VALUE: {
        const { json } = this;
        json.b = b;
        json.pos = this.pos;
        json.end = this.end;
        const text = json.read();
        const start = this.pos;
        this.pos = json.pos;
        return text !== REFUSED && this.entry(text, start, this.pos);
      }
      case NODE_REF:
        return first === OPEN_OBJECT && this.nodeRef();
      default:
        return false;
    }
  }

  /** The string at `pos`: an entry of its bytes inside the quotes, 1 if it holds an escape. */
  private text(): boolean {
    const start = this.pos + 1;
    const escaped = this.string();
    return this.entry(escaped ? 1 : 0, start, this.pos - 1);
  }

  /**
   * The string at `pos` read by `read` (dms-time.ts). Its bytes are read as Latin-1: the reader
   * accepts only ASCII, which any other byte fails in either decoding.
   */
  private time(read: (text: string) => number | undefined): number | undefined {
    const start = this.pos + 1;
    const escaped = this.string();
    const end = this.pos - 1;
    return read(escaped ? decodeString(this.b, start, end) : this.b.toString('latin1', start, end));
  }

  /**
   * A number at `pos`, as JSON.parse reads it; undefined for an integer that is not safe (an exact
   * parse of the instance reads it as a BigInt).
   */
  private numberValue(): number | undefined {
    const start = this.pos;
    const integer = this.integer();
    if (integer !== undefined) return integer;
    return this.fractionRest() ? Number(this.b.toString('latin1', start, this.pos)) : undefined;
  }

  /** A direct relation at `pos`: `{space, externalId}`, texts, nothing else; two entries, space first. */
  private nodeRef(): boolean {
    const { b } = this;
    const at = this.entryCount;
    this.reserve(2);
    this.entryCount += 2;
    let seen = 0;
    this.pos++;
    for (let c = this.ws(); c !== CLOSE_OBJECT; c = this.next()) {
      const keyStart = this.pos + 1;
      if (this.string()) return false;
      const length = this.pos - 1 - keyStart;
      const which = length === SPACE.length && sameBytes(b, keyStart, SPACE, 0, length)
        ? 0
        : length === EXTERNAL_ID.length && sameBytes(b, keyStart, EXTERNAL_ID, 0, length) ? 1 : -1;
      if (which < 0 || (seen & (1 << which)) !== 0) return false;
      seen |= 1 << which;
      this.colon();
      if (b[this.pos] !== QUOTE) return false;
      const start = this.pos + 1;
      this.numbers[at + which] = this.string() ? 1 : 0;
      this.starts[at + which] = start;
      this.ends[at + which] = this.pos - 1;
    }
    this.pos++;
    return seen === 3;
  }

  /** Adds an entry; true, for chaining in a condition. */
  private entry(value: number, start = 0, end = 0): boolean {
    this.reserve(1);
    const e = this.entryCount++;
    this.numbers[e] = value;
    this.starts[e] = start;
    this.ends[e] = end;
    return true;
  }

  private reserve(more: number): void {
    const size = this.entryCount + more;
    if (size <= this.numbers.length) return;
    const length = Math.max(size, this.numbers.length * 2);
    const starts = new Int32Array(length);
    const ends = new Int32Array(length);
    const numbers = new Float64Array(length);
    starts.set(this.starts);
    ends.set(this.ends);
    numbers.set(this.numbers);
    this.starts = starts;
    this.ends = ends;
    this.numbers = numbers;
  }
}
