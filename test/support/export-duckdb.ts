import { DuckDBInstance, type DuckDBValue } from '@duckdb/node-api';
import { columnsOf } from '../../src/sink/parquet/schemas.js';
import type { Resource } from '../../src/config/job-schema.js';

export type Row = Record<string, DuckDBValue>;

export interface Duck {
  rows(query: string): Promise<Row[]>;
  /** The single row of a query that must return exactly one. */
  one(query: string): Promise<Row>;
  close(): void;
}

/** An in-memory DuckDB (a fresh one per test, so no file metadata is cached across outputs). */
export async function openDuck(): Promise<Duck> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  const rows = async (query: string) => (await connection.runAndReadAll(query)).getRowObjects();
  return {
    rows,
    one: async (query) => {
      const all = await rows(query);
      if (all.length !== 1 || all[0] === undefined) throw new Error(`expected one row from ${query}, got ${all.length}`);
      return all[0];
    },
    close: () => {
      connection.closeSync();
      instance.closeSync();
    },
  };
}

/** `read_parquet` of a glob, without the hive `part` column. */
export function parquetAt(glob: string): string {
  return `read_parquet('${glob}', hive_partitioning = false)`;
}

export function ndjsonAt(glob: string): string {
  return `read_json_auto('${glob}', hive_partitioning = false)`;
}

/** The Parquet profile as DuckDB's DESCRIBE shows it. */
const DUCK_TYPES = {
  'int64': 'BIGINT',
  'string': 'VARCHAR',
  'timestamp': 'TIMESTAMP WITH TIME ZONE',
  'int64-list': 'BIGINT[]',
  'string-map': 'MAP(VARCHAR, VARCHAR)',
  'extra-json': 'VARCHAR',
} as const;

export function expectedDuckColumns(resource: Resource): { name: string; type: string }[] {
  return columnsOf(resource).map((spec) => ({ name: spec.name, type: DUCK_TYPES[spec.kind] }));
}

export function asNumber(value: DuckDBValue | undefined): number {
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'number') return value;
  throw new Error(`expected a number, got ${String(value)}`);
}

/**
 * Reads Parquet rows back as the items the platform sent: times as epoch ms, lists and maps via
 * JSON, nulls left out, `extra` merged back in. Ids stay below 2^53, so numbers are exact.
 */
export async function parquetItems(duck: Duck, resource: Resource, glob: string): Promise<Record<string, unknown>[]> {
  const select = columnsOf(resource)
    .map((spec) => {
      const col = `"${spec.name}"`;
      switch (spec.kind) {
        case 'timestamp':
          return `epoch_ms(${col}) AS ${col}`;
        case 'int64-list':
        case 'string-map':
          return `to_json(${col})::VARCHAR AS ${col}`;
        default:
          return col;
      }
    })
    .join(', ');
  const rows = await duck.rows(`SELECT ${select} FROM ${parquetAt(glob)}`);
  return rows.map((row) => {
    const item: Record<string, unknown> = {};
    for (const spec of columnsOf(resource)) {
      const value = row[spec.name];
      if (value === null || value === undefined) continue;
      switch (spec.kind) {
        case 'int64':
        case 'timestamp':
          item[spec.name] = asNumber(value);
          break;
        case 'int64-list':
        case 'string-map':
          item[spec.name] = JSON.parse(String(value));
          break;
        case 'extra-json':
          Object.assign(item, JSON.parse(String(value)));
          break;
        case 'string':
          item[spec.name] = value;
      }
    }
    return item;
  });
}
