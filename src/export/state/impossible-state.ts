import { EXTRA_COLUMN, fieldColumns, INSTANCE_TYPES, type InstanceType } from '../../resources/index.js';
import type { PartState, SeriesProgress, StreamState, UpdatedWindow } from './checkpoint-schema.js';
import { streamRecord } from './stream-records.js';

/**
 * What in a stream's recorded state bulk-extract never writes, which the checkpoint's reader
 * refuses: the digest catches an edit, but not an edited checkpoint of an earlier version (which
 * has none) nor one whose digest was made again, and each of these would lose or repeat rows, or
 * stop the run with a message that blames bulk-extract:
 *
 * - an instances stream's columns: two of one name (names compare without case, as DuckDB and
 *   Spark read them), a fixed column under another name, or a property under a fixed column's;
 * - a datapoints partition: its listing not begun (`listed: false`, no cursor) although it has
 *   committed rows or has series in flight (a resume would list and read every series again); its
 *   listing ended with a cursor still saved; `done` with series left to read; rows committed, not
 *   done, without its listing's state; one series twice over the same times (read twice).
 *
 * Returns where in the stream's entry (a path) and what is wrong, or undefined.
 */
export function impossibleState(stream: StreamState): Found {
  if (stream.instances !== undefined) {
    const found = columnsProblem(stream.instances.columns, instanceTypeOf(stream));
    if (found !== undefined) return { path: `instances.columns.${found.path}`, problem: found.problem };
  }
  if (streamRecord(stream.resource).rows !== 'points' || stream.window === null) return undefined;
  for (const [m, part] of Object.entries(stream.parts)) {
    const found = pointsPartProblem(part, stream.window);
    if (found !== undefined) return { path: `parts.${m}${found.path}`, problem: found.problem };
  }
  return undefined;
}

function instanceTypeOf(stream: StreamState): InstanceType {
  const given = stream.params.find(([key]) => key === 'instanceType')?.[1];
  return INSTANCE_TYPES.find((type) => type === given) ?? 'node';
}

/** Column names as DuckDB and Spark compare them. */
function folded(name: string): string {
  return name.toLowerCase();
}

interface Column {
  name: string;
  from: { field: string } | { property: string } | { extra: true };
}

type Found = { path: string; problem: string } | undefined;

function columnsProblem(columns: readonly Column[], instanceType: InstanceType): Found {
  const fixed = new Set([...fieldColumns(instanceType).map((column) => column.name), EXTRA_COLUMN].map(folded));
  const seen = new Map<string, number>();
  for (const [i, column] of columns.entries()) {
    const { name, from } = column;
    const earlier = seen.get(folded(name));
    if (earlier !== undefined) {
      return { path: `${i}.name`, problem: `'${name}' is the name of column ${earlier} too; two columns of one name are never written` };
    }
    seen.set(folded(name), i);
    if ('field' in from && name !== from.field) {
      return { path: `${i}.name`, problem: `the column of the field '${from.field}' is always named '${from.field}', not '${name}'` };
    }
    if ('extra' in from && name !== EXTRA_COLUMN) {
      return { path: `${i}.name`, problem: `the column of the values without a column is always named '${EXTRA_COLUMN}', not '${name}'` };
    }
    if ('property' in from && fixed.has(folded(name))) {
      return { path: `${i}.name`, problem: `the property '${from.property}' has the name of the fixed column '${name}'; such a property's column is named property_${from.property}` };
    }
  }
  return undefined;
}

function pointsPartProblem(part: PartState, window: UpdatedWindow): Found {
  const { points } = part;
  if (points === undefined) {
    // A partition not begun (or read again from its start) has none; one that committed rows always has it.
    const progress = !part.done && (part.nextSeq > 0 || part.rows > 0);
    return progress ? { path: '', problem: `${part.rows} rows committed in ${part.nextSeq} shard(s) without the state of its series (points)` } : undefined;
  }
  const { listing, listed, series, unknown } = points;
  if (listed && listing !== null) {
    return { path: '.points.listing', problem: 'a cursor of the series listing is saved although the listing ended (listed: true)' };
  }
  if (!listed && listing === null && (series.length > 0 || unknown.length > 0 || part.nextSeq > 0 || part.rows > 0)) {
    const progress = `${part.rows} rows committed in ${part.nextSeq} shard(s), ${series.length} series in flight`;
    return { path: '.points.listed', problem: `false with no listing cursor, which is a listing not begun, yet the partition has ${progress}` };
  }
  if (part.done && (!listed || series.length > 0)) {
    const left = listed ? `${series.length} series in flight` : 'its series listing not ended';
    return { path: '.done', problem: `true with ${left}` };
  }
  const twice = seriesReadTwice(series, window);
  return twice === undefined ? undefined : { path: '.points.series', problem: twice };
}

/** A series in flight twice over the same times (pieces of one series have windows apart), or undefined. */
function seriesReadTwice(series: readonly SeriesProgress[], window: UpdatedWindow): string | undefined {
  const spans = new Map<string, { start: number; end: number }[]>();
  for (const entry of series) {
    const key = entry.id !== undefined
      ? `id ${entry.id}`
      : entry.instanceId === undefined ? `externalId ${JSON.stringify(entry.externalId)}` : `instanceId ${JSON.stringify(entry.instanceId)}`;
    const span = { start: entry.start ?? window.from ?? Number.MIN_SAFE_INTEGER, end: entry.end ?? window.until };
    const known = spans.get(key);
    if (known === undefined) spans.set(key, [span]);
    else known.push(span);
  }
  for (const [key, list] of spans) {
    if (list.length < 2) continue;
    list.sort((a, b) => a.start - b.start);
    for (let i = 1; i < list.length; i++) {
      if (list[i]!.start < list[i - 1]!.end) return `the series of ${key} is in flight twice over the same times; its points would be read twice`;
    }
  }
  return undefined;
}
