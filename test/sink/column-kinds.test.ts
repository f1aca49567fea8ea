import { describe, expect, it } from 'vitest';
import { COLUMN_KINDS, type ColumnKind, INSTANCE_COLUMN_KINDS } from '../../src/resources/index.js';
import { arrowTypeName } from '../../src/sink/delta/schema.js';
import { arrowType } from '../../src/sink/parquet/arrow-types.js';
import { newColumn, newInstanceColumn } from '../../src/sink/parquet/column-builders.js';
import { typeName } from '../../src/sink/parquet/schemas.js';

/**
 * The three tables over the column kinds (resources/column-kinds.ts): each kind's Arrow type, the
 * column that fills it, and its type as the manifest names it. The names and types are what
 * readers of earlier outputs know: they are pinned here, kind by kind.
 */
const EXPECTED: Readonly<Record<ColumnKind, { name: string; arrow: string }>> = {
  'int64': { name: 'INT64', arrow: 'Int64' },
  'int32': { name: 'INT32', arrow: 'Int32' },
  'double': { name: 'DOUBLE', arrow: 'Float64' },
  'float': { name: 'FLOAT', arrow: 'Float32' },
  'boolean': { name: 'BOOLEAN', arrow: 'Bool' },
  'string': { name: 'STRING', arrow: 'Utf8' },
  'timestamp': { name: 'TIMESTAMP(MILLIS, UTC)', arrow: 'Timestamp<MILLISECOND, UTC>' },
  'date': { name: 'DATE', arrow: 'Date32<DAY>' },
  'json': { name: 'STRING (JSON)', arrow: 'Utf8' },
  'node-ref': { name: 'STRUCT<space STRING, externalId STRING>', arrow: 'Struct<{space:Utf8, externalId:Utf8}>' },
  'int64-list': { name: 'LIST<INT64>', arrow: 'List<Int64>' },
  'label-list': { name: 'LIST<STRING>', arrow: 'List<Utf8>' },
  'string-map': { name: 'MAP<STRING, STRING>', arrow: 'Map<{key:Utf8, value:Utf8}>' },
  'sequence-columns': {
    name:
      'LIST<STRUCT<id INT64, externalId STRING, name STRING, description STRING, valueType STRING, ' +
      'metadata MAP<STRING, STRING>, createdTime TIMESTAMP(MILLIS, UTC), lastUpdatedTime TIMESTAMP(MILLIS, UTC), ' +
      'extra STRING (JSON object of fields outside the schema)>>',
    arrow:
      'List<Struct<{id:Int64, externalId:Utf8, name:Utf8, description:Utf8, valueType:Utf8, ' +
      'metadata:Map<{key:Utf8, value:Utf8}>, createdTime:Timestamp<MILLISECOND, UTC>, ' +
      'lastUpdatedTime:Timestamp<MILLISECOND, UTC>, extra:Utf8}>>',
  },
  'unknown-fields': { name: 'STRING (JSON object of fields outside the schema)', arrow: 'Utf8' },
  'extra-json': { name: 'STRING (JSON object of what no column holds)', arrow: 'Utf8' },
};

describe('the column kinds\' tables', () => {
  it('name each kind\'s type as manifests always have, and give it the Arrow type shards always had', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual([...COLUMN_KINDS].sort());
    for (const kind of COLUMN_KINDS) {
      const arrow = arrowTypeName(arrowType({ kind }));
      expect({ kind, name: typeName({ kind }), arrow }).toEqual({ kind, ...EXPECTED[kind] });
    }
  });

  it('make an instance column a list of its kind: LIST<...> in the manifest, nullable elements in Arrow', () => {
    for (const kind of INSTANCE_COLUMN_KINDS) {
      expect(typeName({ kind, list: true })).toBe(`LIST<${EXPECTED[kind].name}>`);
      const type = arrowType({ kind, list: true });
      expect(arrowTypeName(type)).toBe(`List<${EXPECTED[kind].arrow}>`);
      expect(type.children[0]?.nullable).toBe(true);
    }
  });

  it('fill each kind\'s Arrow type with its builder\'s column, a null row included', () => {
    for (const kind of COLUMN_KINDS) {
      const column = newColumn(kind, 2);
      column.push(null);
      expect(column.toData(arrowType({ kind })).length, kind).toBe(1);
    }
    for (const kind of INSTANCE_COLUMN_KINDS) {
      for (const list of [false, true]) {
        const column = newInstanceColumn({ kind, list }, 2);
        expect(column.accepts(null)).toBe(true);
        column.push(null);
        expect(column.toData(arrowType({ kind, list })).nullCount, `${kind} list=${list}`).toBe(1);
      }
    }
  });
});
