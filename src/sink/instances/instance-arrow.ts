/** The Arrow types and columns of an instance stream's Parquet columns (resources/instances.ts). */
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
import type { InstanceColumn, InstanceColumnKind } from '../../resources/index.js';
import { BoolColumn, type CheckedColumn, Float64Column, Int64Column, Utf8Column } from '../parquet/columns.js';
import { Float32Column, Int32Column, ListColumn, StructColumn } from '../parquet/typed-columns.js';

/** A direct relation (or an instance's `type`, `startNode`, `endNode`): `{space, externalId}`. */
function nodeRefType(): Struct {
  return new Struct([new Field('space', new Utf8(), false), new Field('externalId', new Utf8(), false)]);
}

function scalarType(kind: InstanceColumnKind): DataType {
  switch (kind) {
    case 'string':
    case 'json':
    case 'extra-json':
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
    case 'node-ref':
      return nodeRefType();
  }
}

/** The Arrow field of a column: nullable unless required, a list of its kind when `list`. */
export function arrowField(column: InstanceColumn): Field {
  const scalar = scalarType(column.kind);
  const type = column.list ? new List(new Field('item', scalar, true)) : scalar;
  return new Field(column.name, type, !column.required);
}

function scalarColumn(kind: InstanceColumnKind, capacity: number): CheckedColumn {
  switch (kind) {
    case 'string':
    case 'json':
    case 'extra-json':
      return new Utf8Column(capacity);
    case 'int32':
    case 'date':
      return new Int32Column(capacity);
    case 'int64':
    case 'timestamp':
      return new Int64Column(capacity);
    case 'float':
      return new Float32Column(capacity);
    case 'double':
      return new Float64Column(capacity);
    case 'boolean':
      return new BoolColumn(capacity);
    case 'node-ref':
      return new StructColumn(capacity, [
        { name: 'space', required: true, column: new Utf8Column(capacity) },
        { name: 'externalId', required: true, column: new Utf8Column(capacity) },
      ]);
  }
}

/** The column that fills a column's Arrow data. */
export function newInstanceColumn(column: Pick<InstanceColumn, 'kind' | 'list'>, capacity: number): CheckedColumn {
  const scalar = scalarColumn(column.kind, column.list ? capacity * 2 : capacity);
  return column.list ? new ListColumn(capacity, scalar) : scalar;
}
