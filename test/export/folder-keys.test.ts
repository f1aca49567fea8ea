import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isOwnedKey, partDir, windowDir } from '../../src/export/state/layout.js';
import {
  AGGREGATES,
  EXTRA_COLUMN,
  fieldColumns,
  FOLDER_KEYS,
  INSTANCE_TYPES,
  instanceColumns,
  metadataColumnName,
  pointColumns,
  RESOURCE_SPECS,
  SEQUENCE_COLUMN_FIELDS,
  streamColumns,
  type ViewDefinition,
} from '../../src/resources/index.js';

/**
 * The output's `key=value` folders (`run=<id>`, `part=<m>-of-<n>`) are columns to a reader that
 * partitions by folder (DuckDB's default read of a glob, Spark, Athena), and they replace a column of
 * the same name in the files. Every key the layout writes is one of FOLDER_KEYS, and no column of
 * any kind of stream is named like one of them, compared without case as those readers compare.
 */
const folded = new Set(FOLDER_KEYS.map((key) => key.toLowerCase()));
const isFolderKey = (name: string) => folded.has(name.toLowerCase());

describe('the keys of the folders bulk-extract writes', () => {
  it('every key=value folder of a shard path has one of FOLDER_KEYS as its key', () => {
    const run = '20260101T000000.000Z';
    const dirs = [partDir('assets', 1, 1), partDir('assets', 3, 10, run), windowDir('assets', run)];
    const keys = dirs.flatMap((dir) => dir.split('/').filter((folder) => folder.includes('=')).map((folder) => folder.split('=')[0]!));
    expect(new Set(keys)).toEqual(new Set(FOLDER_KEYS));
    for (const dir of dirs.slice(0, 2)) expect(isOwnedKey(`${dir}/000000.parquet`)).toBe(true);
  });
});

describe('no column is named like a folder key', () => {
  it('the fixed columns of each collection (and of a sequence column), with any metadataColumns', () => {
    for (const spec of RESOURCE_SPECS) {
      const columns = streamColumns(spec.columns, ['part', 'run', 'Part', 'RUN']);
      expect(columns.map((column) => column.name).filter(isFolderKey), spec.name).toEqual([]);
    }
    expect(SEQUENCE_COLUMN_FIELDS.map((field) => field.name).filter(isFolderKey)).toEqual([]);
  });

  it('a metadata column, whatever its key: metadata_<key>', () => {
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom(...FOLDER_KEYS, 'Part', 'RUN', ''), fc.string()), (key) => {
        expect(isFolderKey(metadataColumnName(key))).toBe(false);
      }),
    );
  });

  it('the columns of datapoints streams: raw with and without status, every aggregate', () => {
    const shapes = [
      { includeStatus: false },
      { includeStatus: true },
      { aggregates: AGGREGATES, granularity: '1h', includeStatus: false },
    ];
    for (const shape of shapes) {
      expect(pointColumns(shape).map((column) => column.name).filter(isFolderKey)).toEqual([]);
    }
  });

  it('the fields and extra of instances, and their properties whatever their names', () => {
    expect(isFolderKey(EXTRA_COLUMN)).toBe(false);
    const names = [...FOLDER_KEYS, 'Part', 'RUN', 'property_part', 'property_Part', 'property_run_2', 'type', 'extra', 'pressure'];
    const text = (name: string) => ({ container: { space: 's', externalId: 'c' }, containerPropertyIdentifier: name, type: { type: 'text' } });
    const chosenNames = fc.uniqueArray(fc.oneof(fc.constantFrom(...names), fc.string({ minLength: 1 })));
    fc.assert(
      fc.property(chosenNames, fc.constantFrom(...INSTANCE_TYPES), (chosen, type) => {
        expect(fieldColumns(type).map((column) => column.name).filter(isFolderKey)).toEqual([]);
        const properties = Object.fromEntries(chosen.map((name) => [name, text(name)]));
        const view: ViewDefinition = { space: 's', externalId: 'v', version: '1', properties };
        expect(instanceColumns(view, type).columns.map((column) => column.name).filter(isFolderKey)).toEqual([]);
      }),
    );
  });
});
