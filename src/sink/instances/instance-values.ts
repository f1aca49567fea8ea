/**
 * The values of data-model instances as their Parquet columns hold them: the platform's property
 * types (text, int32, int64, float32, float64, boolean, timestamp, date, json, direct relations,
 * enums, lists of these) and the instance's own fields.
 */
import {
  Bool,
  type DataType,
  DateDay,
  Field,
  Float32,
  Float64,
  Int32,
  Int64,
  List,
  Struct,
  TimestampMillisecond,
  Utf8,
} from 'apache-arrow';
import { stringify as stringifyExact } from 'lossless-json';
import { BoolColumn, Float64Column, Int64Column, Utf8Column } from '../parquet/columns.js';
import {
  checked,
  type CheckedColumn,
  Float32Column,
  Int32Column,
  ListColumn,
  StructColumn,
} from '../parquet/typed-columns.js';

/** What a column holds; `ref` is a direct relation's (or an instance's `type`'s) `{space, externalId}`. */
export type ValueKind =
  | 'string' |
  'int32' |
  'int64' |
  'float' |
  'double' |
  'boolean' |
  'timestamp' |
  'date' |
  'json' |
  'ref';

/** A column of an instance stream: where its value is, what it holds, and whether it is a list of it. */
export interface InstanceColumnSpec {
  readonly name: string;
  readonly kind: ValueKind;
  readonly list: boolean;
  /** An instance field (`space`, `createdTime`, `startNode`, ...), or a property of the stream's view. */
  readonly from: { readonly field: string } | { readonly property: string };
  /** Every instance has it (`space`, `externalId`, ...): the column is not nullable. */
  readonly required?: boolean;
}

/** A value that is not of its column's type: the instance keeps it in `extra` instead. */
export const NOT_TAKEN: unique symbol = Symbol('not taken');

const DAY_MS = 86_400_000;
/** The platform's timestamps: `2024-01-01T00:00:00.000+00:00`, `Z` or an offset, fractions optional. */
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `value` as the column of `kind` holds it (one element of a list), or NOT_TAKEN. */
export function columnValue(kind: ValueKind, value: unknown): unknown {
  switch (kind) {
    case 'string':
      return typeof value === 'string' ? value : NOT_TAKEN;
    case 'json':
      return jsonText(value);
    case 'int32':
    case 'int64':
    case 'float':
    case 'double':
      // Checked by the column (range, safe integer); a BigInt is an exact int64 beyond 2^53.
      return typeof value === 'number' || (kind === 'int64' && typeof value === 'bigint') ? value : NOT_TAKEN;
    case 'boolean':
      return typeof value === 'boolean' ? value : NOT_TAKEN;
    case 'timestamp':
      return typeof value === 'number' ? value : typeof value === 'string' ? timestampMs(value) : NOT_TAKEN;
    case 'date':
      return typeof value === 'string' ? dateDays(value) : NOT_TAKEN;
    case 'ref':
      return value;
  }
}

/** JSON text of a json property; with the exact text of its integers beyond 2^53 when parsed as BigInt. */
function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return stringifyExact(value) as string;
  }
}

/** Epoch milliseconds of a timestamp as the platform writes it; NOT_TAKEN for anything else. */
export function timestampMs(text: string): number | typeof NOT_TAKEN {
  const match = TIMESTAMP.exec(text);
  if (match === null || !validDate(match)) return NOT_TAKEN;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? NOT_TAKEN : ms;
}

/** Days since 1970-01-01 of a `YYYY-MM-DD` date; NOT_TAKEN for anything else. */
export function dateDays(text: string): number | typeof NOT_TAKEN {
  const match = DATE.exec(text);
  if (match === null || !validDate(match)) return NOT_TAKEN;
  return utcDay(match).getTime() / DAY_MS;
}

/** The UTC midnight of a match's year, month and day (setUTCFullYear: Date.UTC reads 0001 as 1901). */
function utcDay(match: RegExpExecArray): Date {
  const at = new Date(0);
  at.setUTCFullYear(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return at;
}

/** Whether year, month and day exist (a Date would roll 2024-02-30 over into March). */
function validDate(match: RegExpExecArray): boolean {
  const at = utcDay(match);
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  return at.getUTCFullYear() === year && at.getUTCMonth() === month - 1 && at.getUTCDate() === day;
}

function refType(): Struct {
  return new Struct([new Field('space', new Utf8(), false), new Field('externalId', new Utf8(), false)]);
}

function scalarType(kind: ValueKind): DataType {
  switch (kind) {
    case 'string':
    case 'json':
      return new Utf8();
    case 'int32':
      return new Int32();
    case 'int64':
      return new Int64();
    case 'float':
      return new Float32();
    case 'double':
      return new Float64();
    case 'boolean':
      return new Bool();
    case 'timestamp':
      // The UTC zone makes readers treat the values as instants, not local wall-clock times.
      return new TimestampMillisecond('UTC');
    case 'date':
      return new DateDay();
    case 'ref':
      return refType();
  }
}

/** The Arrow type of a column. */
export function arrowTypeOf(spec: Pick<InstanceColumnSpec, 'kind' | 'list'>): DataType {
  const scalar = scalarType(spec.kind);
  return spec.list ? new List(new Field('item', scalar, true)) : scalar;
}

const isText = (value: unknown) => typeof value === 'string';
const isInt64 = (value: unknown) =>
  Number.isSafeInteger(value) || (typeof value === 'bigint' && BigInt.asIntN(64, value) === value);

function scalarColumn(kind: ValueKind, capacity: number): CheckedColumn {
  switch (kind) {
    case 'string':
    case 'json':
      return checked(new Utf8Column(capacity), isText);
    case 'int32':
    case 'date':
      return new Int32Column(capacity);
    case 'int64':
    case 'timestamp':
      return checked(new Int64Column(capacity), isInt64);
    case 'float':
      return new Float32Column(capacity);
    case 'double':
      return checked(new Float64Column(capacity), (v) => typeof v === 'number');
    case 'boolean':
      return checked(new BoolColumn(capacity), (v) => typeof v === 'boolean');
    case 'ref':
      return new StructColumn(capacity, [
        { name: 'space', required: true, column: checked(new Utf8Column(capacity), isText) },
        { name: 'externalId', required: true, column: checked(new Utf8Column(capacity), isText) },
      ]);
  }
}

/** The column that fills a spec's Arrow data. */
export function newInstanceColumn(spec: Pick<InstanceColumnSpec, 'kind' | 'list'>, capacity: number): CheckedColumn {
  const scalar = scalarColumn(spec.kind, spec.list ? capacity * 2 : capacity);
  return spec.list ? new ListColumn(capacity, scalar) : scalar;
}
