/** The types of an instance stream's columns as the manifest names them (no Arrow loaded here). */
import type { InstanceColumn, InstanceColumnKind } from '../../resources/index.js';

/** A column's type as the manifest names it. */
export function instanceTypeName(column: Pick<InstanceColumn, 'kind' | 'list'>): string {
  const scalar = SCALAR_NAMES[column.kind];
  return column.list ? `LIST<${scalar}>` : scalar;
}

const SCALAR_NAMES: Readonly<Record<InstanceColumnKind, string>> = {
  'string': 'STRING',
  'int32': 'INT32',
  'int64': 'INT64',
  'float': 'FLOAT',
  'double': 'DOUBLE',
  'boolean': 'BOOLEAN',
  'timestamp': 'TIMESTAMP(MILLIS, UTC)',
  'date': 'DATE',
  'json': 'STRING (JSON)',
  'node-ref': 'STRUCT<space STRING, externalId STRING>',
  'extra-json': 'STRING (JSON object of what no column holds)',
};

/** An instance stream's columns with their types, as the manifest records them. */
export function instanceTypedColumns(columns: readonly InstanceColumn[]): { name: string; type: string }[] {
  return columns.map((column) => ({ name: column.name, type: instanceTypeName(column) }));
}
