import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Format } from '../../src/config/job-schema.js';
import { type Instance, KINDS, type Simulator, type ViewDefinition, VIEWS } from '../../src/simulator/index.js';
import { openDuck, parquetAt } from './export-duckdb.js';
import { keyOf, valueIn } from './instances.js';
import { hasShards, ndjsonRows } from './ndjson-rows.js';
import type { IdStats } from './resume-harness.js';
import { expectRowsByKey, expectRowsWithin, type RowsCheck } from './rows-by-key.js';

/**
 * The crash torture's instances streams (docs/instances.md), checked instance by instance by key
 * (space, externalId) against the simulator's data model, never with the exporter's code: every
 * live instance of the view once, nothing else; each NDJSON line equal to the instance as the
 * simulator generates it (identity, version, times, type, start and end nodes, every property of
 * the view); each Parquet row's fixed columns equal to the NDJSON line's values.
 */

type Row = Record<string, unknown>;
type ViewId = Pick<ViewDefinition, 'space' | 'externalId' | 'version'>;

/** A `resource: instances` stream of the torture's job: the keys of docs/instances.md it sets. */
export interface InstancesStreamSpec {
  resource: 'instances';
  name: string;
  view: ViewId;
  /** Default `node`. */
  instanceType?: 'node' | 'edge';
  /** Default every space. */
  spaces?: string[];
  /** `space`: one query (partition) per entry of `spaces`; default one query. */
  split?: 'space';
  /** Instances per page (default 1000). */
  limit?: number;
}

/** The stream's queries, each a partition with its own folder `part=m-of-n`. */
export function queriesOf(stream: InstancesStreamSpec): number {
  return stream.split === 'space' ? (stream.spaces?.length ?? 1) : 1;
}

/** The stream's keys for expectExactOutput: externalIds, sorted (the simulator's are unique: AST-, ACT-, CTS-…). */
export function expectedInstanceIds(sim: Simulator, stream: InstancesStreamSpec): IdStats {
  const keys = [...liveInstances(sim, stream)].map((instance) => instance.externalId).sort();
  return { count: keys.length, sum: 0n, min: 0n, max: 0n, keys };
}

/** Every instances stream of the output equals the view's live instances in the simulator, by key. */
export async function expectEveryInstance(
  sim: Simulator,
  out: string,
  stream: InstancesStreamSpec,
  formats: readonly Format[],
): Promise<void> {
  const expected = expectedInstances(sim, stream);
  expect(expected.size, `${stream.name}: the source has instances to check`).toBeGreaterThan(0);
  await expectInstanceRows(out, stream, formats, expected, expectRowsByKey);
}

/**
 * An instances stream not complete yet (a run stopped it) holds no wrong row: each committed
 * instance once and equal to the simulator's; instances still to come may be missing.
 */
export async function expectNoWrongInstance(
  sim: Simulator,
  out: string,
  stream: InstancesStreamSpec,
  formats: readonly Format[],
): Promise<void> {
  if (!existsSync(join(out, stream.name))) return;
  await expectInstanceRows(out, stream, formats, expectedInstances(sim, stream), expectRowsWithin);
}

/** The view's live instances as NDJSON lines, by key. */
function expectedInstances(sim: Simulator, stream: InstancesStreamSpec): Map<string, Row> {
  const expected = new Map<string, Row>();
  const properties = viewProperties(stream.view);
  for (const instance of liveInstances(sim, stream)) {
    expected.set(keyOf(instance), asNdjson(instance, stream.view, properties));
  }
  return expected;
}

async function expectInstanceRows(
  out: string,
  stream: InstancesStreamSpec,
  formats: readonly Format[],
  expected: Map<string, Row>,
  check: RowsCheck,
): Promise<void> {
  const dir = join(out, stream.name);
  const lines = ndjsonRows(dir, true);
  if (formats.includes('ndjson')) {
    // Nested values (the properties) compared as JSON with sorted keys: the order of keys is no part of the data.
    const stable = (row: Row) => Object.fromEntries(Object.entries(row).map(([name, v]) => [name, stableJson(v)]));
    const want = new Map([...expected].map(([key, row]) => [key, stable(row)]));
    check(`${stream.name} as NDJSON`, lines.map(stable), want, rowKey);
  }
  if (formats.includes('parquet') && hasShards(dir, '.parquet')) {
    // What the Parquet rows must hold: the source's values, which the NDJSON lines were just held to.
    const fixed = new Map([...expected].map(([key, row]) => [key, fixedColumns(row, stream)]));
    const duck = await openDuck();
    try {
      const rows = await duck.rows(`SELECT ${fixedSelect(stream).join(', ')} FROM ${parquetAt(`${dir}/*/*.parquet`)}`);
      check(`${stream.name} as Parquet`, rows, fixed, rowKey);
    } finally {
      duck.close();
    }
  }
}

/**
 * The simulator's live instances a list of the view returns: of the stream's instance type, of the
 * kinds that have data in every container the view maps (the platform's rule), in its spaces.
 */
function* liveInstances(sim: Simulator, stream: InstancesStreamSpec): Generator<Instance> {
  const containers = new Set(viewProperties(stream.view).map((p) => keyOf(p.container)));
  const edges = stream.instanceType === 'edge';
  const kinds = KINDS.filter(
    (kind) => (kind === 'edge') === edges && [...containers].every((key) => sim.instances.containersOf(kind).includes(key)),
  );
  expect(kinds, `kinds of instance with data in ${viewName(stream.view)}`).not.toEqual([]);
  for (const kind of kinds) {
    for (let index = 0; index < sim.instances.count(kind); index++) {
      if (sim.instances.isDeleted(kind, index)) continue;
      const instance = sim.instances.instance(kind, index);
      if (stream.spaces === undefined || stream.spaces.includes(instance.space)) yield instance;
    }
  }
}

type MappedProperty = ViewDefinition['properties'][number];

/**
 * The view's properties with those it inherits (the views it implements first; its own replace
 * theirs), as the platform lists them.
 */
function viewProperties(id: ViewId): MappedProperty[] {
  const view = VIEWS.find((v) => v.space === id.space && v.externalId === id.externalId && v.version === id.version);
  if (view === undefined) throw new Error(`the simulator has no view ${viewName(id)}`);
  const byName = new Map<string, MappedProperty>();
  for (const parent of view.implements) for (const p of viewProperties(parent)) byName.set(p.identifier, p);
  for (const p of view.properties) byName.set(p.identifier, p);
  return [...byName.values()];
}

/** An instance as `/models/instances/list` with the view as its one source returns it. */
function asNdjson(instance: Instance, view: ViewId, properties: readonly MappedProperty[]): Row {
  const values = Object.fromEntries(
    properties.map((p) => [p.identifier, valueIn(instance, keyOf(p.container), p.containerPropertyIdentifier)]),
  );
  return {
    instanceType: instance.instanceType,
    space: instance.space,
    externalId: instance.externalId,
    version: instance.version,
    ...(instance.type === undefined ? {} : { type: instance.type }),
    ...(instance.startNode === undefined ? {} : { startNode: instance.startNode, endNode: instance.endNode }),
    createdTime: instance.createdTime,
    lastUpdatedTime: instance.lastUpdatedTime,
    properties: { [view.space]: { [`${view.externalId}/${view.version}`]: values } },
  };
}

/** The Parquet columns every instance has, read back comparable: times as epoch ms, references `space:externalId`. */
function fixedSelect(stream: InstancesStreamSpec): string[] {
  const ref = (column: string) => `${column}.space || ':' || ${column}.externalId AS ${column}`;
  return [
    'space',
    'externalId',
    'instanceType',
    'version',
    ref('type'),
    ...(stream.instanceType === 'edge' ? [ref('startNode'), ref('endNode')] : []),
    ...['createdTime', 'lastUpdatedTime', 'deletedTime'].map((column) => `epoch_ms(${column}) AS ${column}`),
    // Nothing is left over: every field has its column and the view's properties theirs.
    'extra',
  ];
}

/** An NDJSON line's values of the columns fixedSelect reads. */
function fixedColumns(row: Row, stream: InstancesStreamSpec): Row {
  const ref = (value: unknown) => (value === undefined ? null : keyOf(value as { space: string; externalId: string }));
  return {
    space: row.space,
    externalId: row.externalId,
    instanceType: row.instanceType,
    version: row.version,
    type: ref(row.type),
    ...(stream.instanceType === 'edge' ? { startNode: ref(row.startNode), endNode: ref(row.endNode) } : {}),
    createdTime: row.createdTime,
    lastUpdatedTime: row.lastUpdatedTime,
    deletedTime: row.deletedTime ?? null,
    extra: null,
  };
}

function rowKey(row: Row): string {
  return keyOf(row as { space: string; externalId: string });
}

function viewName(id: ViewId): string {
  return `${id.space}:${id.externalId}/${id.version}`;
}

/** A value as JSON text with every object's keys sorted; a string or a number as it is. */
function stableJson(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  return JSON.stringify(value, (_, inner: unknown) =>
    inner !== null && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}
