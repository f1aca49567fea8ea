import { type ColumnSpec, EXTRA_COLUMN } from '../../resources/index.js';
import { ABSENT, numberAt, PointFields } from './point-fields.js';

const QUOTE = 0x22;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;

/** What a value column takes of a point (takeOf in point-takes.ts says it for a parsed point). */
const VALUE = 0;
const VALUE_STRING = 1;
const STATUS_CODE = 2;
const STATUS_SYMBOL = 3;
const EXTRA = 4;
/** Any other column: the number of the point's field of the column's name (an aggregate). */
const NUMBER = 5;

const CODE = 0;
const SYMBOL = 1;

/**
 * Reads the value columns of a point from its bytes (a point of a scanned answer: valid JSON and
 * UTF-8), giving for each column what `takeOf` (point-takes.ts) gives for the point parsed: a value
 * number, `"NaN"` / `"Infinity"` / `"-Infinity"` as their doubles, a string decoded, the status'
 * code and symbol (code 0 and `Good` when absent), aggregates, and the fields outside the columns
 * as JSON (`extra`). A point it does not take (a status that is not `{code, symbol}` with a
 * number and a string) it answers false for; the caller then parses it.
 */
export class PointReader {
  private readonly fields: PointFields;
  private readonly status = new PointFields(['code', 'symbol']);
  /** Per value column: what it takes, and of which name of `fields`. */
  private readonly roles: Uint8Array;
  private readonly slots: Int32Array;
  private readonly value: number;
  private readonly statusName: number;
  private readonly withStatus: boolean;
  /**
   * Per value column, what it takes of a plain point (`{"timestamp":..,"value":<number>}`): its
   * number (VALUE), or always the same; undefined when `value` is no point field of these columns.
   */
  private readonly plainRow: readonly unknown[] | undefined;
  /** The point read is plain: `plainNumber` is its value (a number field: not boxed per point). */
  private plain = false;
  private plainNumber = 0;
  private isString = false;
  private code = 0;
  private symbol: string | null = null;

  /** `columns` are the value columns; `known` the fields of a point that are no part of `extra`. */
  constructor(columns: readonly ColumnSpec[], known: ReadonlySet<string>) {
    const names = [...known];
    this.fields = new PointFields(names);
    this.value = names.indexOf('value');
    this.statusName = names.indexOf('status');
    this.roles = Uint8Array.from(columns, (spec) => roleOf(spec.name));
    this.slots = Int32Array.from(columns, (spec) => names.indexOf(spec.name));
    this.withStatus = columns.some((spec) => spec.name === 'statusCode' || spec.name === 'statusSymbol');
    this.plainRow = this.value < 0 ? undefined : columns.map((spec) => PLAIN_TAKES[roleOf(spec.name)]);
  }

  /** Reads the point at `start` of `body`; false when it is not the plain case, and nothing is to be asked of it. */
  read(body: Buffer, start: number, isString: boolean): boolean {
    this.plain = false;
    if (!this.fields.read(body, start)) return false;
    this.isString = isString;
    return !this.withStatus || this.readStatus(body);
  }

  /**
   * Takes a plain point, `{"timestamp":..,"value":<number at [start, end) of body>}` to the byte
   * (PointList.plainValue), without reading more of it; false when the columns have no `value`.
   */
  readPlain(body: Buffer, start: number, end: number, isString: boolean): boolean {
    if (this.plainRow === undefined) return false;
    this.plain = true;
    this.isString = isString;
    if (!isString) this.plainNumber = numberAt(body, start, end);
    return true;
  }

  /** Value column `c` of the point read. */
  take(c: number): unknown {
    if (this.plain) {
      const take = this.plainRow![c];
      return take !== PLAIN_NUMBER ? take : this.isString ? null : this.plainNumber;
    }
    const { fields } = this;
    switch (this.roles[c]) {
      case VALUE:
        return this.isString || this.value < 0 ? null : (fields.numberOf(this.value) ?? null);
      case VALUE_STRING:
        if (!this.isString || this.value < 0) return null;
        return fields.first(this.value) === QUOTE ? fields.textOf(this.value) : null;
      case STATUS_CODE:
        return this.code;
      case STATUS_SYMBOL:
        return this.symbol;
      case EXTRA: {
        const extra = fields.othersObject();
        return extra === undefined ? null : JSON.stringify(extra);
      }
      default: {
        const slot = this.slots[c]!;
        return slot < 0 ? null : (fields.numberOf(slot) ?? null);
      }
    }
  }

  /** The platform leaves the Good status (code 0) out of the point; a status taken is `{code, symbol?}`. */
  private readStatus(body: Buffer): boolean {
    const at = this.statusName < 0 ? ABSENT : this.fields.starts[this.statusName]!;
    if (at === ABSENT) {
      this.code = 0;
      this.symbol = 'Good';
      return true;
    }
    const { status } = this;
    if (!status.read(body, at)) return false;
    const code = status.first(CODE);
    if (code !== MINUS && (code < ZERO || code > NINE)) return false;
    this.code = status.numberOf(CODE)!;
    const symbol = status.first(SYMBOL);
    if (symbol !== 0 && symbol !== QUOTE) return false;
    this.symbol = symbol === 0 ? null : status.textOf(SYMBOL);
    return true;
  }
}

/** A plain point's value column takes its number. */
const PLAIN_NUMBER = Symbol('value');

/**
 * What each kind of column takes of a plain point: the value's number; no string; the Good status,
 * which the platform leaves out; no field outside the columns; no other field (an aggregate).
 */
const PLAIN_TAKES: readonly unknown[] = [PLAIN_NUMBER, null, 0, 'Good', null, null];

function roleOf(name: string): number {
  switch (name) {
    case 'value':
      return VALUE;
    case 'valueString':
      return VALUE_STRING;
    case 'statusCode':
      return STATUS_CODE;
    case 'statusSymbol':
      return STATUS_SYMBOL;
    case EXTRA_COLUMN:
      return EXTRA;
    default:
      return NUMBER;
  }
}
