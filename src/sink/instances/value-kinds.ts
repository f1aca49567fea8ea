import type { InstanceColumnKind } from '../../resources/index.js';

/** The column kinds as small numbers, for the switches of the walk's inner loops. */
export const STRING = 0;
export const INT32 = 1;
export const INT64 = 2;
export const FLOAT = 3;
export const DOUBLE = 4;
export const BOOLEAN = 5;
export const TIMESTAMP = 6;
export const DATE = 7;
export const JSON_VALUE = 8;
export const NODE_REF = 9;
/** `extra`: no value of the instance is read into it. */
export const EXTRA = 10;

const CODES: Readonly<Record<InstanceColumnKind, number>> = {
  'string': STRING,
  'int32': INT32,
  'int64': INT64,
  'float': FLOAT,
  'double': DOUBLE,
  'boolean': BOOLEAN,
  'timestamp': TIMESTAMP,
  'date': DATE,
  'json': JSON_VALUE,
  'node-ref': NODE_REF,
  'extra-json': EXTRA,
};

export function kindCode(kind: InstanceColumnKind): number {
  return CODES[kind];
}
