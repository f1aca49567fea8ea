/**
 * The Parquet columns of a `resource: instances` stream, from the definition of its view: the
 * instance's own fields, then the view's properties in the view's order, then `extra`.
 *
 * Property types map to columns as issue 29 has it: text, enum and the external-id references to
 * time series, files and sequences -> string; int32 and int64; float32 -> float, float64 ->
 * double; boolean; timestamp -> TIMESTAMP(MILLIS, UTC); date -> DATE; json -> a string of JSON;
 * a direct relation -> a struct {space, externalId}; `list: true` of any of these -> a list of it.
 *
 * Connection definitions (edge connections and reverse direct relations) are not stored
 * properties: the API returns no value for them, so they get no column (they are listed in
 * `connections`). A property of a type not listed above gets no column either (`untyped`): its
 * values stay in `extra`, as does every value the view does not know or a column cannot hold.
 *
 * A property whose name is that of a fixed column, compared without case (CogniteAsset and
 * CogniteTimeSeries have a `type`; DuckDB and Spark do not tell `Type` from `type`), or that of a
 * key of the output's folders (`part`, `run`: FOLDER_KEYS, which a reader that partitions by
 * folder puts over the file's column), is the column `property_<name>`, or `property_<name>_2`,
 * `_3`, ... while that too is taken; the later of two properties whose names differ only in case
 * is renamed the same way. `renamed` lists them.
 */
import type { InstanceColumnKind } from './column-kinds.js';
import { EXTRA_COLUMN, FOLDER_KEYS } from './resource.js';

/** What a view definition (`POST /models/views/byids`, the SDK's ViewDefinition) holds that the columns need. */
export interface ViewDefinition {
  readonly space: string;
  readonly externalId: string;
  readonly version: string;
  readonly properties: Readonly<Record<string, ViewPropertyDefinition | ConnectionDefinition>>;
}

/** A property mapped to a container property: it has values. */
export interface ViewPropertyDefinition {
  readonly container: { readonly space: string; readonly externalId: string };
  readonly containerPropertyIdentifier: string;
  readonly type: {
    readonly type: string;
    readonly list?: boolean | undefined;
    /** Of text: the order the platform compares it in; default ucs_basic (code points). */
    readonly collation?: string | undefined;
  };
  readonly nullable?: boolean | undefined;
}

/** An edge connection or a reverse direct relation: navigation, not a stored value. */
export interface ConnectionDefinition {
  readonly container?: undefined;
  readonly source: unknown;
}

/** A view of the data model: what an instances stream exports. */
export interface ViewRef {
  readonly space: string;
  readonly externalId: string;
  readonly version: string;
}

export const INSTANCE_TYPES = ['node', 'edge'] as const;
export type InstanceType = (typeof INSTANCE_TYPES)[number];

export interface InstanceColumn {
  /** The Parquet column's name. */
  readonly name: string;
  readonly kind: InstanceColumnKind;
  readonly list: boolean;
  /** In every instance (the fields the API always returns). */
  readonly required: boolean;
  /** Where its value is: a field of the instance, a property of the view (its type as the view has it), or `extra`. */
  readonly from:
    | { readonly field: string } |
    { readonly property: string; readonly type: string } |
    { readonly extra: true };
}

export interface InstanceColumns {
  readonly columns: readonly InstanceColumn[];
  /** Properties whose column has another name (see the file's comment). */
  readonly renamed: readonly { readonly property: string; readonly column: string }[];
  /** Connection definitions of the view: no column. */
  readonly connections: readonly string[];
  /** Properties of a type bulk-extract does not know: no column, their values in `extra`. */
  readonly untyped: readonly { readonly property: string; readonly type: string }[];
}

/** A property type's column kind. */
export const PROPERTY_KINDS: Readonly<Record<string, InstanceColumnKind>> = {
  text: 'string',
  int32: 'int32',
  int64: 'int64',
  float32: 'float',
  float64: 'double',
  boolean: 'boolean',
  timestamp: 'timestamp',
  date: 'date',
  json: 'json',
  direct: 'node-ref',
  enum: 'string',
  timeseries: 'string',
  file: 'string',
  sequence: 'string',
};

const field = (name: string, kind: InstanceColumnKind, required: boolean): InstanceColumn => ({
  name,
  kind,
  list: false,
  required,
  from: { field: name },
});

/** The instance's own fields, in the order of the columns; the edges' three are required of edges only. */
export function fieldColumns(instanceType: InstanceType): InstanceColumn[] {
  const edge = instanceType === 'edge';
  return [
    field('space', 'string', true),
    field('externalId', 'string', true),
    field('instanceType', 'string', true),
    field('version', 'int64', true),
    field('type', 'node-ref', edge),
    field('createdTime', 'timestamp', true),
    field('lastUpdatedTime', 'timestamp', true),
    field('deletedTime', 'timestamp', false),
    ...(edge ? [field('startNode', 'node-ref', true), field('endNode', 'node-ref', true)] : []),
  ];
}

/** The columns of the instances of `view`: fields, properties, `extra`. */
export function instanceColumns(view: ViewDefinition, instanceType: InstanceType): InstanceColumns {
  const fields = fieldColumns(instanceType);
  const entries = Object.entries(view.properties);
  const taken = new Set([...fields.map((column) => column.name), EXTRA_COLUMN, ...FOLDER_KEYS].map(folded));
  const names = new Set(entries.map(([property]) => folded(property)));
  const renamed: { property: string; column: string }[] = [];
  const connections: string[] = [];
  const untyped: { property: string; type: string }[] = [];
  const properties: InstanceColumn[] = [];
  for (const [property, definition] of entries) {
    if (definition.container === undefined) {
      connections.push(property);
      continue;
    }
    const type = definition.type.type;
    const kind = Object.hasOwn(PROPERTY_KINDS, type) ? PROPERTY_KINDS[type] : undefined;
    if (kind === undefined) {
      untyped.push({ property, type });
      continue;
    }
    let name = property;
    if (taken.has(folded(name))) {
      name = `property_${property}`;
      for (let n = 2; taken.has(folded(name)) || names.has(folded(name)); n++) name = `property_${property}_${n}`;
      renamed.push({ property, column: name });
    }
    taken.add(folded(name));
    properties.push({ name, kind, list: definition.type.list === true, required: false, from: { property, type } });
  }
  const extra: InstanceColumn = { name: EXTRA_COLUMN, kind: 'extra-json', list: false, required: false, from: { extra: true } };
  return { columns: [...fields, ...properties, extra], renamed, connections, untyped };
}

/** Column names compare without case, as DuckDB and Spark read them. */
function folded(name: string): string {
  return name.toLowerCase();
}

/** The key of the `properties` group that holds a view's values: `{[space]: {["externalId/version"]: {...}}}`. */
export function viewSourceKey(view: { readonly externalId: string; readonly version: string }): string {
  return `${view.externalId}/${view.version}`;
}
