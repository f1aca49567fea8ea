/**
 * A stream's Arrow schema as a Delta table's schema (delta-io/delta PROTOCOL.md, "Schema
 * Serialization Format"), the Arrow schema the Delta output's data files must have, and the
 * conversion of our batches to it; and back, a table's `schemaString` as a list of columns.
 *
 * Arrow -> Delta (what the sinks write is marked *):
 *
 * | Arrow                                   | Delta                                  |
 * | --------------------------------------- | -------------------------------------- |
 * | Int8, Int16                             | byte, short                            |
 * | Int32 *, Int64 *                        | integer, long                          |
 * | Float32 *, Float64 *                    | float, double                          |
 * | Utf8 *, LargeUtf8                       | string                                 |
 * | Binary, LargeBinary                     | binary                                 |
 * | Bool *                                  | boolean                                |
 * | DateDay *                               | date                                   |
 * | Timestamp(MILLISECOND *, MICROSECOND, with a time zone) | timestamp (microseconds, UTC) |
 * | Decimal (128 bits, precision <= 38)     | decimal(p,s)                           |
 * | List * of T                             | {type: array, elementType: T, containsNull: item nullable} |
 * | Struct * of fields                      | {type: struct, fields}                 |
 * | Map_ * of K to V                        | {type: map, keyType: K, valueType: V,                  |
 * |                                         |  valueContainsNull: value nullable}    |
 *
 * Anything else is refused (a ConfigError naming the column and its type): unsigned integers, Float16,
 * Date in milliseconds, Time, Duration, Interval, Null, Union, FixedSizeList, FixedSizeBinary,
 * dictionary-encoded columns, Decimal256, timestamps in seconds or nanoseconds, and timestamps
 * without a time zone (Delta's `timestamp_ntz` needs the `timestampNtz` table feature, reader
 * version 3 and writer version 7, which this writer does not ask for).
 */
import {
  type Data,
  type DataType,
  type Decimal,
  Field,
  List,
  makeData,
  Map_,
  RecordBatch,
  Schema,
  Struct,
  Table,
  TimestampMicrosecond,
  TimeUnit,
  type Timestamp,
  Type,
} from 'apache-arrow';
import { ConfigError, DeltaLogError } from '../../errors.js';

export interface DeltaStructField {
  name: string;
  type: DeltaType;
  nullable: boolean;
  metadata: Record<string, unknown>;
}

export interface DeltaStructType {
  type: 'struct';
  fields: DeltaStructField[];
}

export interface DeltaArrayType {
  type: 'array';
  elementType: DeltaType;
  containsNull: boolean;
}

export interface DeltaMapType {
  type: 'map';
  keyType: DeltaType;
  valueType: DeltaType;
  valueContainsNull: boolean;
}

/** A primitive type's name (`long`, `decimal(10,2)`), or a struct, array or map. */
export type DeltaType = string | DeltaStructType | DeltaArrayType | DeltaMapType;

/**
 * Characters Delta without column mapping refuses in a column name (Spark's
 * SchemaUtils.checkFieldNames): space, `,;{}()`, newline, tab and `=`.
 */
const INVALID_NAME = /[ ,;{}()\n\t=]/;

/**
 * The Delta schema of an Arrow schema: every field, its nullability, no metadata. A column (or
 * nested field) whose type Delta has no equivalent for, a name Delta refuses, and two names equal
 * but for case (Delta compares names without case) are refused with a ConfigError naming them.
 *
 * The writer must write the data files in deltaDataSchema(schema), not `schema`: Delta's
 * `timestamp` is microseconds since the epoch, UTC-adjusted, and our shards hold milliseconds
 * (TimestampMillisecond('UTC')); toDeltaBatch converts a batch.
 */
export function deltaSchema(schema: Schema): DeltaStructType {
  return { type: 'struct', fields: deltaFields(schema.fields, '') };
}

/** deltaSchema as the `schemaString` of a `metaData` action. */
export function deltaSchemaString(schema: Schema): string {
  return JSON.stringify(deltaSchema(schema));
}

function deltaFields(fields: readonly Field[], parent: string): DeltaStructField[] {
  const seen = new Map<string, string>();
  return fields.map((field) => {
    const path = `${parent}${field.name}`;
    if (INVALID_NAME.test(field.name)) {
      throw new ConfigError(`column '${path}': Delta refuses a name holding a space or any of ,;{}()=, tab or newline`);
    }
    const folded = field.name.toLowerCase();
    const other = seen.get(folded);
    if (other !== undefined) {
      throw new ConfigError(`columns '${parent}${other}' and '${path}': Delta compares column names without case`);
    }
    seen.set(folded, field.name);
    return { name: field.name, type: deltaType(field.type as DataType, path), nullable: field.nullable, metadata: {} };
  });
}

/** An Arrow type as apache-arrow writes it: `Uint8`, `Timestamp<SECOND, UTC>`, `List<Int64>`. */
export function arrowTypeName(type: DataType): string {
  return (type as unknown as { toString(): string }).toString();
}

function deltaType(type: DataType, path: string): DeltaType {
  const refuse = (why = 'which Delta has no type for') =>
    new ConfigError(`column '${path}' is Arrow ${arrowTypeName(type)}, ${why}: it cannot be written to a Delta table`);
  switch (type.typeId) {
    case Type.Int: {
      const { isSigned, bitWidth } = type as unknown as { isSigned: boolean; bitWidth: number };
      if (!isSigned) throw refuse('unsigned (Delta integers are signed)');
      return ({ 8: 'byte', 16: 'short', 32: 'integer', 64: 'long' } as Record<number, string>)[bitWidth]!;
    }
    case Type.Float: {
      const { precision } = type as unknown as { precision: number };
      if (precision === 0) throw refuse();
      return precision === 1 ? 'float' : 'double';
    }
    case Type.Utf8:
    case Type.LargeUtf8:
      return 'string';
    case Type.Binary:
    case Type.LargeBinary:
      return 'binary';
    case Type.Bool:
      return 'boolean';
    case Type.Date:
      if ((type as unknown as { unit: number }).unit !== 0) {
        throw refuse('a date in milliseconds (Delta dates are days: write DateDay)');
      }
      return 'date';
    case Type.Timestamp: {
      const { unit, timezone } = type as unknown as Timestamp;
      if (timezone === null || timezone === undefined || timezone === '') {
        throw refuse('without a time zone (Delta timestamp_ntz needs the timestampNtz table feature)');
      }
      if (unit !== TimeUnit.MILLISECOND && unit !== TimeUnit.MICROSECOND) {
        throw refuse('not in milliseconds or microseconds');
      }
      return 'timestamp';
    }
    case Type.Decimal: {
      const { precision, scale, bitWidth } = type as unknown as Decimal;
      if (bitWidth !== 128 || precision > 38) throw refuse('beyond Delta decimal precision 38');
      return `decimal(${precision},${scale})`;
    }
    case Type.List: {
      const item = (type as List).children[0]!;
      return { type: 'array', elementType: deltaType(item.type as DataType, `${path}.${item.name}`), containsNull: item.nullable };
    }
    case Type.Struct:
      return { type: 'struct', fields: deltaFields((type as Struct).children, `${path}.`) };
    case Type.Map: {
      const [key, value] = (type as Map_).children[0]!.type.children as [Field, Field];
      return {
        type: 'map',
        keyType: deltaType(key.type as DataType, `${path}.key`),
        valueType: deltaType(value.type as DataType, `${path}.value`),
        valueContainsNull: value.nullable,
      };
    }
    default:
      throw refuse();
  }
}

/**
 * The Arrow schema the Delta output's data files must be written in: `schema` with every
 * millisecond timestamp (nested ones too) in microseconds, its time zone kept; everything else,
 * field names, nullability and metadata included, unchanged.
 */
export function deltaDataSchema(schema: Schema): Schema {
  return new Schema(schema.fields.map(deltaDataField), schema.metadata);
}

function deltaDataField(field: Field): Field {
  const type = deltaDataType(field.type as DataType);
  return type === field.type ? field : new Field(field.name, type, field.nullable, field.metadata);
}

/** `type` with millisecond timestamps in microseconds; the same object when nothing changes. */
function deltaDataType(type: DataType): DataType {
  if (type.typeId === Type.Timestamp) {
    const { unit, timezone } = type as unknown as Timestamp;
    return unit === TimeUnit.MILLISECOND ? new TimestampMicrosecond(timezone) : type;
  }
  if (type.typeId === Type.List) {
    const item = (type as List).children[0]!;
    const converted = deltaDataField(item);
    return converted === item ? type : new List(converted);
  }
  if (type.typeId === Type.Struct) {
    const fields = (type as Struct).children;
    const converted = fields.map(deltaDataField);
    return converted.every((field, i) => field === fields[i]) ? type : new Struct(converted);
  }
  if (type.typeId === Type.Map) {
    const map = type as Map_;
    const entries = map.children[0]!;
    const converted = deltaDataField(entries);
    if (converted === entries) return type;
    return new Map_(converted as Field<Struct<{ key: DataType; value: DataType }>>, map.keysSorted);
  }
  return type;
}

/** The last millisecond that is still a 64-bit count of microseconds. */
const MAX_MS = 9_223_372_036_854_775n;

/**
 * A batch as the Delta output writes it (deltaDataSchema): every millisecond timestamp, nested ones
 * too, multiplied by 1000 into microseconds; nulls stay null, negative times (before 1970) stay
 * exact. Columns with no timestamp are shared with `batch`, not copied.
 */
export function toDeltaBatch(batch: RecordBatch): RecordBatch {
  const schema = deltaDataSchema(batch.schema);
  if (schema.fields.every((field, i) => field === batch.schema.fields[i])) return batch;
  const data = toDeltaData(batch.data, new Struct(schema.fields)) as Data<Struct>;
  return new RecordBatch(schema, data);
}

/** toDeltaBatch of each of a table's batches. */
export function toDeltaTable(table: Table): Table {
  return new Table(deltaDataSchema(table.schema), table.batches.map(toDeltaBatch));
}

function toDeltaData(data: Data, type: DataType): Data {
  if (type === data.type) return data;
  if (data.type.typeId === Type.Timestamp && (data.type as unknown as Timestamp).unit === TimeUnit.MILLISECOND) {
    return makeData({
      type: type as TimestampMicrosecond,
      offset: data.offset,
      length: data.length,
      nullCount: data.nullCount,
      nullBitmap: data.nullBitmap,
      data: microseconds(data),
    });
  }
  const children = data.children.map((child, i) => toDeltaData(child, type.children[i]!.type as DataType));
  return data.clone(type, data.offset, data.length, data.nullCount, undefined, children);
}

/**
 * The values of a millisecond timestamp Data times 1000. A fixed-width Data's values start at its
 * first row (a slice cuts them), while its validity bitmap is read at `offset`: both stay so.
 */
function microseconds(data: Data): BigInt64Array {
  const millis = data.values as BigInt64Array;
  const micros = new BigInt64Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const ms = millis[i]!;
    if (ms > MAX_MS || ms < -MAX_MS) {
      if (data.getValid(i)) throw new RangeError(`timestamp ${ms} ms is beyond a 64-bit count of microseconds`);
      continue;
    }
    micros[i] = ms * 1000n;
  }
  return micros;
}

/** A column of a Delta table's schema, its type written out (`array<struct<val: integer>>`). */
export interface DeltaColumn {
  name: string;
  type: string;
  nullable: boolean;
}

/**
 * The columns of a table's `schemaString`, for verify and status: each top-level column with its
 * type written as Spark's simpleString does (`long`, `decimal(10,2)`, `array<string>`,
 * `map<string,string>`, `struct<space:string,externalId:string>`). A string that is not a struct
 * type as the protocol describes it is a DeltaLogError naming what is wrong; a primitive type name
 * this writer does not know (`variant`, `void`) is listed as it is.
 */
export function deltaColumns(schemaString: string): DeltaColumn[] {
  let schema: unknown;
  try {
    schema = JSON.parse(schemaString);
  } catch (error) {
    throw new DeltaLogError(`schemaString is not JSON (${(error as Error).message})`);
  }
  return structFields(schema, 'schemaString').map((field) => ({
    name: field.name,
    type: typeText(field.type, `schemaString.${field.name}`),
    nullable: field.nullable,
  }));
}

type Fields = Record<string, unknown>;

const isFields = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function structFields(value: unknown, at: string): { name: string; type: unknown; nullable: boolean }[] {
  if (!isFields(value) || value.type !== 'struct' || !Array.isArray(value.fields)) {
    throw new DeltaLogError(`${at} is not a struct type ({"type":"struct","fields":[...]})`);
  }
  return value.fields.map((field: unknown, i) => {
    if (!isFields(field) || typeof field.name !== 'string' || typeof field.nullable !== 'boolean' || !('type' in field)) {
      throw new DeltaLogError(`${at}.fields[${i}] is not a field with a name, a type and nullable`);
    }
    return { name: field.name, type: field.type, nullable: field.nullable };
  });
}

function typeText(type: unknown, at: string): string {
  if (typeof type === 'string') return type;
  if (!isFields(type)) throw new DeltaLogError(`${at} has a type that is neither a name nor an object`);
  switch (type.type) {
    case 'struct':
      return `struct<${structFields(type, at).map((field) => `${field.name}:${typeText(field.type, `${at}.${field.name}`)}`).join(',')}>`;
    case 'array':
      if (typeof type.containsNull !== 'boolean') throw new DeltaLogError(`${at}: an array without containsNull`);
      return `array<${typeText(type.elementType, `${at}.element`)}>`;
    case 'map':
      if (typeof type.valueContainsNull !== 'boolean') throw new DeltaLogError(`${at}: a map without valueContainsNull`);
      return `map<${typeText(type.keyType, `${at}.key`)},${typeText(type.valueType, `${at}.value`)}>`;
    default:
      throw new DeltaLogError(`${at} has type ${JSON.stringify(type.type)}, not struct, array or map`);
  }
}
