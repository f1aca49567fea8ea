import { DuckDBInstance, type DuckDBValue } from '@duckdb/node-api';
import { type ColumnKind, columnsOf, SEQUENCE_COLUMN_FIELDS } from '../../src/sink/parquet/schemas.js';
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

/**
 * `read_parquet` of a glob, or of exactly the files listed (a Delta version's), without the hive
 * `part` column.
 */
export function parquetAt(glob: string | readonly string[]): string {
  const files = typeof glob === 'string' ? `'${glob}'` : `[${glob.map((path) => `'${path.replaceAll('\'', '\'\'')}'`).join(', ')}]`;
  return `read_parquet(${files}, hive_partitioning = false)`;
}

export function ndjsonAt(glob: string): string {
  return `read_json_auto('${glob}', hive_partitioning = false)`;
}

/** The Parquet profile as DuckDB's DESCRIBE shows it. */
function duckType(kind: ColumnKind): string {
  switch (kind) {
    case 'int64':
      return 'BIGINT';
    case 'string':
    case 'json':
    case 'unknown-fields':
    case 'extra-json':
      return 'VARCHAR';
    case 'int32':
      return 'INTEGER';
    case 'float':
      return 'FLOAT';
    case 'date':
      return 'DATE';
    case 'node-ref':
      return 'STRUCT(space VARCHAR, externalId VARCHAR)';
    case 'boolean':
      return 'BOOLEAN';
    case 'double':
      return 'DOUBLE';
    case 'timestamp':
      return 'TIMESTAMP WITH TIME ZONE';
    case 'int64-list':
      return 'BIGINT[]';
    case 'label-list':
      return 'VARCHAR[]';
    case 'string-map':
      return 'MAP(VARCHAR, VARCHAR)';
    case 'sequence-columns':
      return `STRUCT(${SEQUENCE_COLUMN_FIELDS.map((field) => `${quoted(field.name)} ${duckType(field.kind)}`).join(', ')})[]`;
  }
}

/** A name as DuckDB's DESCRIBE spells it inside a STRUCT type: quoted when it is a keyword. */
function quoted(name: string): string {
  return name === 'name' ? '"name"' : name;
}

export function expectedDuckColumns(resource: Resource): { name: string; type: string }[] {
  return columnsOf(resource).map((spec) => ({ name: spec.name, type: duckType(spec.kind) }));
}

/** A struct element read back as the object the platform sent: nulls left out, `extra` merged in. */
function asElement(element: Record<string, unknown>): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(element)) {
    if (value === null) continue;
    if (name === 'extra') Object.assign(object, JSON.parse(value as string));
    else object[name] = value;
  }
  return object;
}

export function asNumber(value: DuckDBValue | undefined): number {
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'number') return value;
  throw new Error(`expected a number, got ${String(value)}`);
}

/**
 * Reads Parquet rows back (of a glob, or of the files listed) as the items the platform sent: times
 * as epoch ms, lists and maps via JSON, nulls left out, `extra` merged back in. Ids stay below
 * 2^53, so numbers are exact.
 */
export async function parquetItems(
  duck: Duck,
  resource: Resource,
  glob: string | readonly string[],
): Promise<Record<string, unknown>[]> {
  const select = columnsOf(resource)
    .map((spec) => {
      const col = `"${spec.name}"`;
      switch (spec.kind) {
        case 'timestamp':
          return `epoch_ms(${col}) AS ${col}`;
        case 'int64-list':
        case 'label-list':
        case 'string-map':
          return `to_json(${col})::VARCHAR AS ${col}`;
        case 'sequence-columns': {
          // Times inside the struct as epoch ms, then the whole list as JSON.
          const fields = SEQUENCE_COLUMN_FIELDS.map((field) =>
            field.kind === 'timestamp' ? `"${field.name}" := epoch_ms(c."${field.name}")` : `"${field.name}" := c."${field.name}"`,
          );
          return `to_json(list_transform(${col}, c -> struct_pack(${fields.join(', ')})))::VARCHAR AS ${col}`;
        }
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
        case 'double':
          item[spec.name] = asNumber(value);
          break;
        case 'int64-list':
        case 'string-map':
          item[spec.name] = JSON.parse(String(value));
          break;
        case 'label-list':
          item[spec.name] = (JSON.parse(String(value)) as string[]).map((externalId) => ({ externalId }));
          break;
        case 'sequence-columns':
          item[spec.name] = (JSON.parse(String(value)) as Record<string, unknown>[]).map(asElement);
          break;
        case 'unknown-fields':
          Object.assign(item, JSON.parse(String(value)));
          break;
        case 'string':
        case 'boolean':
          item[spec.name] = value;
      }
    }
    return item;
  });
}
