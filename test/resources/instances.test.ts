import { readFileSync } from 'node:fs';
/*
 * The official SDK's own type of a view definition: instanceColumns takes it as it is. Imported by
 * its path, because the SDK's declarations reach it through extensionless paths that NodeNext does
 * not follow from the package's entry.
 */
import type { ViewDefinition as SdkViewDefinition } from '../../node_modules/@cognite/sdk/dist/src/api/views/types.gen.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  fieldColumns,
  type InstanceColumn,
  instanceColumns,
  type ViewDefinition,
} from '../../src/resources/instances.js';
import { FOLDER_KEYS } from '../../src/resources/resource.js';

/** A view as `POST /models/views/byids` returns it, typed as the official SDK types it. */
function fixture(name: string): SdkViewDefinition {
  return JSON.parse(readFileSync(new URL(`fixtures/${name}.view.json`, import.meta.url), 'utf8')) as SdkViewDefinition;
}

/** Each column as `name kind`, `[]` after a list's kind, `!` after a required one, `<- property` if renamed. */
const brief = (columns: readonly InstanceColumn[]) =>
  columns.map(({ name, kind, list, required, from }) => {
    const renamed = 'property' in from && from.property !== name ? ` <- ${from.property}` : '';
    return `${name} ${kind}${list ? '[]' : ''}${required ? '!' : ''}${renamed}`;
  });

const NODE_FIELDS = [
  'space string!',
  'externalId string!',
  'instanceType string!',
  'version int64!',
  'type node-ref',
  'createdTime timestamp!',
  'lastUpdatedTime timestamp!',
  'deletedTime timestamp',
];
const SOURCEABLE = [
  'source node-ref',
  'sourceContext string',
  'sourceCreatedTime timestamp',
  'sourceCreatedUser string',
  'sourceId string',
  'sourceUpdatedTime timestamp',
  'sourceUpdatedUser string',
];

describe('instanceColumns: views of the Core Data Model as the platform returns them', () => {
  it("an asset-like view: its fields, its properties in the view's order, `type` renamed, no column for connections", () => {
    const { columns, renamed, connections, untyped } = instanceColumns(fixture('cognite-asset'), 'node');
    expect(brief(columns)).toEqual([
      ...NODE_FIELDS,
      'aliases string[]',
      'assetClass node-ref',
      'description string',
      'name string',
      'object3D node-ref',
      'parent node-ref',
      'path node-ref[]',
      'pathLastUpdatedTime timestamp',
      'root node-ref',
      ...SOURCEABLE,
      'tags string[]',
      'property_type node-ref <- type',
      'extra extra-json',
    ]);
    expect(renamed).toEqual([{ property: 'type', column: 'property_type' }]);
    expect(connections).toEqual(['activities', 'children', 'equipment', 'files', 'timeSeries']);
    expect(untyped).toEqual([]);
  });

  it('an activity-like view: lists of direct relations and the times of a schedule', () => {
    const { columns, renamed, connections } = instanceColumns(fixture('cognite-activity'), 'node');
    expect(brief(columns)).toEqual([
      ...NODE_FIELDS,
      'aliases string[]',
      'assets node-ref[]',
      'description string',
      'endTime timestamp',
      'equipment node-ref[]',
      'name string',
      'scheduledEndTime timestamp',
      'scheduledStartTime timestamp',
      ...SOURCEABLE,
      'startTime timestamp',
      'tags string[]',
      'timeSeries node-ref[]',
      'extra extra-json',
    ]);
    expect(renamed).toEqual([]);
    expect(connections).toEqual([]);
  });

  it('a time-series-like view: its enum `type` renamed, a boolean, a unit', () => {
    const { columns, renamed, connections } = instanceColumns(fixture('cognite-time-series'), 'node');
    expect(brief(columns)).toEqual([
      ...NODE_FIELDS,
      'aliases string[]',
      'assets node-ref[]',
      'description string',
      'equipment node-ref[]',
      'isStep boolean',
      'name string',
      ...SOURCEABLE.slice(0, 5),
      'sourceUnit string',
      ...SOURCEABLE.slice(5),
      'tags string[]',
      'property_type string <- type',
      'unit node-ref',
      'extra extra-json',
    ]);
    expect(columns.find((column) => column.name === 'property_type')?.from).toEqual({ property: 'type', type: 'enum' });
    expect(renamed).toEqual([{ property: 'type', column: 'property_type' }]);
    expect(connections).toEqual(['activities']);
  });
});

const container = { space: 'sp', externalId: 'Everything', type: 'container' } as const;
/** A mapped property of `type`, as the API returns one. */
type PropertyType = { type: string } & Record<string, unknown>;
const mapped = (type: PropertyType) => ({ container, containerPropertyIdentifier: 'p', type, nullable: true });

/** A view whose properties are `properties`, each mapped to a container property. */
const viewOf = (properties: Record<string, PropertyType>): ViewDefinition => ({
  space: 'sp',
  externalId: 'Everything',
  version: '1',
  properties: Object.fromEntries(Object.entries(properties).map(([name, type]) => [name, mapped(type)])),
});

describe('instanceColumns: every property type', () => {
  it('maps each type of the platform to its column kind, lists to lists, and leaves an unknown type to extra', () => {
    const view = viewOf({
      text: { type: 'text', collation: 'ucs_basic' },
      i32: { type: 'int32' },
      i64s: { type: 'int64', list: true, maxListSize: 100 },
      f32: { type: 'float32', unit: { externalId: 'temperature:deg_c' } },
      f64: { type: 'float64' },
      flag: { type: 'boolean' },
      at: { type: 'timestamp' },
      day: { type: 'date' },
      days: { type: 'date', list: true },
      doc: { type: 'json' },
      docs: { type: 'json', list: true },
      link: { type: 'direct', source: { type: 'view', space: 'sp', externalId: 'Other', version: '1' } },
      state: { type: 'enum', values: { on: {}, off: {} }, unknownValue: 'off' },
      series: { type: 'timeseries' },
      document: { type: 'file', list: true },
      table: { type: 'sequence' },
      embedding: { type: 'vector', dimensions: 3 },
    });
    const { columns, untyped } = instanceColumns(view, 'node');
    expect(brief(columns.slice(NODE_FIELDS.length))).toEqual([
      'text string',
      'i32 int32',
      'i64s int64[]',
      'f32 float',
      'f64 double',
      'flag boolean',
      'at timestamp',
      'day date',
      'days date[]',
      'doc json',
      'docs json[]',
      'link node-ref',
      'state string',
      'series string',
      'document string[]',
      'table string',
      'extra extra-json',
    ]);
    expect(untyped).toEqual([{ property: 'embedding', type: 'vector' }]);
  });

  it('edges have startNode and endNode, and type, startNode and endNode are required of them', () => {
    const { columns } = instanceColumns(viewOf({}), 'edge');
    expect(brief(columns)).toEqual([
      'space string!',
      'externalId string!',
      'instanceType string!',
      'version int64!',
      'type node-ref!',
      'createdTime timestamp!',
      'lastUpdatedTime timestamp!',
      'deletedTime timestamp',
      'startNode node-ref!',
      'endNode node-ref!',
      'extra extra-json',
    ]);
    expect(fieldColumns('edge').map((column) => column.from)).toEqual(columns.slice(0, -1).map((column) => ({ field: column.name })));
  });
});

describe('instanceColumns: names that collide', () => {
  it('renames a property named as a fixed column, without regard to case, and one that collides with a rename', () => {
    const view = viewOf({
      Version: { type: 'int64' },
      property_version: { type: 'text' },
      startNode: { type: 'direct' },
      EXTRA: { type: 'json' },
      name: { type: 'text' },
      Name: { type: 'text' },
      property_Name: { type: 'text' },
    });
    const { columns, renamed } = instanceColumns(view, 'edge');
    expect(brief(columns.slice(10))).toEqual([
      'property_Version_2 int64 <- Version',
      'property_version string',
      'property_startNode node-ref <- startNode',
      'property_EXTRA json <- EXTRA',
      'name string',
      'property_Name_2 string <- Name',
      'property_Name string',
      'extra extra-json',
    ]);
    expect(renamed).toEqual([
      { property: 'Version', column: 'property_Version_2' },
      { property: 'startNode', column: 'property_startNode' },
      { property: 'EXTRA', column: 'property_EXTRA' },
      { property: 'Name', column: 'property_Name_2' },
    ]);
  });

  it('renames a property named like a folder of the output (part, run), without regard to case', () => {
    const { columns, renamed } = instanceColumns(viewOf({ part: { type: 'text' }, run: { type: 'int64' }, Part: { type: 'text' } }), 'node');
    expect(brief(columns.slice(8))).toEqual([
      'property_part string <- part',
      'property_run int64 <- run',
      'property_Part_2 string <- Part',
      'extra extra-json',
    ]);
    expect(renamed).toEqual([
      { property: 'part', column: 'property_part' },
      { property: 'run', column: 'property_run' },
      { property: 'Part', column: 'property_Part_2' },
    ]);
  });

  it('a node keeps a property named startNode: only edges have that column', () => {
    const { renamed } = instanceColumns(viewOf({ startNode: { type: 'direct' }, endNode: { type: 'direct' } }), 'node');
    expect(renamed).toEqual([]);
  });

  it('gives every column a name of its own, without regard to case, and keeps every name that collides with none', () => {
    const names = ['type', 'Type', 'TYPE', 'property_type', 'Property_Type', 'property_type_2', 'version', 'extra', 'a', 'A', 'endNode', 'part', 'RUN', 'property_part'];
    fc.assert(
      fc.property(fc.uniqueArray(fc.constantFrom(...names)), fc.constantFrom('node' as const, 'edge' as const), (chosen, type) => {
        const view = viewOf(Object.fromEntries(chosen.map((name) => [name, { type: 'text' }])));
        const { columns, renamed } = instanceColumns(view, type);
        const folded = columns.map((column) => column.name.toLowerCase());
        expect(new Set(folded).size).toBe(folded.length);
        const fixed = new Set([...fieldColumns(type).map((column) => column.name), 'extra', ...FOLDER_KEYS].map((name) => name.toLowerCase()));
        const firstOfItsCase = (name: string, i: number) =>
          !chosen.slice(0, i).some((earlier) => earlier.toLowerCase() === name.toLowerCase());
        const kept = chosen.filter((name, i) => !fixed.has(name.toLowerCase()) && firstOfItsCase(name, i));
        expect(chosen.filter((name) => !renamed.some((rename) => rename.property === name))).toEqual(kept);
        expect(instanceColumns(view, type).columns).toEqual(columns);
      }),
    );
  });
});
