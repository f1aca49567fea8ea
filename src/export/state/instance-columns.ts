import { type InstanceColumn, instanceColumns, type ViewDefinition } from '../../resources/index.js';
import type { StreamState } from './checkpoint-schema.js';
import type { StreamPlan } from './stream-plan.js';

/**
 * How the Parquet columns of an instances stream's shards so far (the checkpoint's, made from the
 * view when the stream began) differ from the names this version gives the same properties: a
 * property named like a folder key (`part`, `run`), which an earlier version wrote under its own
 * name and a reader partitioning by folder replaces with the folder's value, is now
 * `property_<name>`. A resume keeps one schema per stream, so it is drift: the stream is written
 * again (--fresh), never finished with shards of two schemas, nor with a column the docs' own
 * queries read wrongly.
 */
export function instanceColumnsDrift(at: string, saved: StreamState, stream: StreamPlan): string[] {
  const columns = saved.instances?.columns;
  if (columns === undefined || stream.instances === undefined || !stream.formats.includes('parquet')) return [];
  const now = new Map(
    instanceColumns(viewOf(columns), stream.instances.instanceType).columns.flatMap((column) =>
      'property' in column.from ? [[column.from.property, column.name] as const] : [],
    ),
  );
  const renamed = columns.flatMap((column) => {
    if (!('property' in column.from)) return [];
    const name = now.get(column.from.property);
    return name === undefined || name === column.name ? [] : [`${column.name} -> ${name}`];
  });
  if (renamed.length === 0) return [];
  return [
    `${at}: its Parquet shards so far have columns this version names otherwise, [${renamed.join(', ')}] (a column named like the output's folders part=... and run=... reads as the folder's value in DuckDB, Spark and Athena); run with --fresh --stream ${stream.name} to write the stream again with the new names, or finish it with the version that began it`,
  ];
}

/** The view as far as the columns recorded say: their properties, in order, each with its type. */
function viewOf(columns: readonly InstanceColumn[]): ViewDefinition {
  const properties = columns.flatMap((column) => {
    if (!('property' in column.from)) return [];
    const { property, type } = column.from;
    const definition = { container: { space: '', externalId: '' }, containerPropertyIdentifier: property, type: { type, list: column.list } };
    return [[property, definition] as const];
  });
  return { space: '', externalId: '', version: '', properties: Object.fromEntries(properties) };
}
