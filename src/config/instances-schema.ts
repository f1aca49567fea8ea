/**
 * The job file's `resource: instances` stream: the nodes or edges of one view of the data-modeling
 * service, optionally filtered, restricted to some instance spaces and split into disjoint queries
 * (each one cursor chain). job-schema.ts adds the keys every stream has (INSTANCES_COMMON_KEYS).
 */
import { z } from 'zod';
import { type DmFilter, dmFilterSchema } from './dm-filter.js';
import { instanceFieldReferences } from './dm-filter-fields.js';
import { propertyProblem, spaceId, viewRefSchema } from './dm-identifiers.js';
import {
  dmsDateDays,
  dmsTimestampMs,
  INSTANCE_TYPES,
  type InstanceType,
  type ViewDefinition,
  type ViewRef,
  viewSourceKey,
} from '../resources/index.js';

/**
 * The keys of job-schema.ts's `common` an instances stream takes: `name`, `limit` (1..1000,
 * default 1000, as the platform's), `formats`, `mode` and `keep`. Not `partitions` (the API has
 * none: `split` makes several queries), `metadataColumns` (instances have no metadata map) or
 * `safetyLag` (incremental runs follow the platform's sync cursor, not a window of times).
 */
export const INSTANCES_COMMON_KEYS = ['name', 'limit', 'formats', 'mode', 'keep'] as const;

/** `spaces:` lists at most this many (each is one query with `split: space`). */
export const MAX_SPACES = 100;
/** `split.at` holds 1 to this many boundaries: at most 20 ranges, and the query of no value. */
export const MAX_SPLIT_BOUNDARIES = 19;
/** The instance's own field a split may name besides the view's properties. */
export const SPLIT_EXTERNAL_ID = 'externalId';

const spaces = z
  .array(spaceId)
  .min(1, 'give at least one space, or leave spaces out')
  .max(MAX_SPACES, `at most ${MAX_SPACES} spaces`)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((space, i) => {
      if (seen.has(space)) ctx.addIssue({ code: 'custom', path: [i], message: `${space} is listed twice` });
      seen.add(space);
    });
  });

/** Fields of an instance that no view property can be named; a split by one of them is refused by name. */
const INSTANCE_FIELDS = new Set(['space', 'createdTime', 'lastUpdatedTime', 'deletedTime']);

const splitProperty = z.string().superRefine((name, ctx) => {
  const add = (message: string) => ctx.addIssue({ code: 'custom', message });
  const problem = propertyProblem(name);
  if (INSTANCE_FIELDS.has(name)) add(`${name} is a field of the instance; a split names a property of the view or externalId`);
  else if (name !== SPLIT_EXTERNAL_ID && problem !== undefined) add(`expected a property of the view or externalId; ${problem}`);
});

/**
 * Checked in one refinement, not by zod's types and bounds: inside the union of `split`, an issue
 * those raise would turn into the union's own message and hide which boundary is wrong.
 */
const splitAt = z
  .array(z.unknown())
  .superRefine((at, ctx) => {
    const add = (message: string, i?: number) => ctx.addIssue({ code: 'custom', path: i === undefined ? [] : [i], message });
    if (at.length === 0) add('give at least one boundary');
    if (at.length > MAX_SPLIT_BOUNDARIES) add(`at most ${MAX_SPLIT_BOUNDARIES} boundaries (${MAX_SPLIT_BOUNDARIES + 1} ranges)`);
    const kind = typeof at[0];
    at.forEach((b, i) => {
      if (typeof b !== 'number' && typeof b !== 'string') add('a boundary is a number or a string', i);
      else if (typeof b !== kind) add('the boundaries are all numbers or all strings', i);
      else if (typeof b === 'number' && !Number.isFinite(b)) add('not a finite number', i);
      else if (typeof b === 'number' && Number.isInteger(b) && !Number.isSafeInteger(b)) {
        add('beyond ±2^53 an integer is not exact in JSON', i);
      } else if (i > 0 && typeof at[i - 1] === kind && compareBoundaries(at[i - 1] as typeof b, b) >= 0) {
        add(`the boundaries increase strictly: ${JSON.stringify(b)} does not come after ${JSON.stringify(at[i - 1])}`, i);
      }
    });
  })
  .transform((at) => at as number[] | string[]);

/** `space`: a query per entry of `spaces`. `{property, at}`: a query per range of the property, one for no value. */
const splitSchema = z.union([z.literal('space'), z.strictObject({ property: splitProperty, at: splitAt })], {
  error: 'expected space or {property: NAME, at: [b1, b2, ...]}',
});
export type InstancesSplit = z.output<typeof splitSchema>;

/** The keys of an instances stream other than the common ones (job-schema.ts adds those). */
export const instancesKeys = {
  resource: z.literal('instances'),
  /** The view whose properties are exported; its version is part of the plan. */
  view: viewRefSchema,
  instanceType: z.enum(INSTANCE_TYPES).default('node'),
  /** Instance spaces to read; default: every space. */
  spaces: spaces.optional(),
  /** In the platform's filter language (dm-filter.ts). */
  filter: dmFilterSchema.optional(),
  split: splitSchema.optional(),
  /**
   * incremental: go on from a sync cursor the platform has expired (older than 3 days), accepting
   * that deletes since then may be missed. Default false: such a run is refused.
   */
  allowExpiredCursorsAndAcceptMissedDeletes: z.boolean().default(false),
};

/** What splitFilters and instancesProblems read of a stream. */
export interface InstancesQuery {
  instanceType: InstanceType;
  spaces?: readonly string[] | undefined;
  filter?: DmFilter | undefined;
  split?: InstancesSplit | undefined;
}

/** What the keys of an instances stream must agree on, as problems at their paths in the stream. */
export function instancesProblems(
  stream: InstancesQuery & {
    mode: string;
    keep?: number | undefined;
    allowExpiredCursorsAndAcceptMissedDeletes?: boolean;
  },
): { path: (string | number)[]; message: string }[] {
  const problems: { path: (string | number)[]; message: string }[] = [];
  if (stream.keep !== undefined && stream.mode !== 'snapshot') {
    problems.push({
      path: ['keep'],
      message: `keep applies to mode: snapshot (completed snapshots to keep); this stream's mode is ${stream.mode}`,
    });
  }
  if (stream.mode === 'incremental' && stream.split !== undefined && stream.split !== 'space') {
    problems.push({
      path: ['split'],
      message:
        'an incremental stream follows the platform\'s change feed, where an instance whose property changes would ' +
        'move between the queries of a split by that property; split incremental streams by space, or not at all',
    });
  }
  if (stream.mode !== 'incremental' && stream.allowExpiredCursorsAndAcceptMissedDeletes === true) {
    problems.push({
      path: ['allowExpiredCursorsAndAcceptMissedDeletes'],
      message: `applies to mode: incremental (the sync feed's cursors); this stream's mode is ${stream.mode}`,
    });
  }
  if (stream.split === 'space' && (stream.spaces?.length ?? 0) < 2) {
    problems.push({ path: ['split'], message: 'a split by space makes one query per entry of spaces; list at least 2 spaces' });
  }
  for (const { path, scope, field } of instanceFieldReferences(stream.filter)) {
    if (scope !== stream.instanceType) {
      problems.push({
        path: [...path, 0],
        message: `this stream lists ${stream.instanceType}s: ["${stream.instanceType}", "${field}"]`,
      });
    }
  }
  return problems;
}

/**
 * The filter of each query of a stream, in order; undefined where a query has none. Each is the
 * stream's `filter`, its `spaces` and its split's own condition, joined with `and`:
 *
 * - no split: one query;
 * - `split: space`: one query per space, `equals [node|edge, space]`;
 * - `split: {property: NAME, at: [b1, ..., bk]}`: `NAME < b1`, `b1 <= NAME < b2`, ..., `NAME >= bk`,
 *   then `not exists NAME` (not for `externalId`, which every instance has). The ranges are
 *   disjoint and leave no value out, given the platform orders NAME's values as the boundaries
 *   increase (numbers; texts in code-point order, as collation ucs_basic does).
 *
 * NAME is a property of `view` (`[space, "externalId/version", NAME]`) or the instance's own externalId.
 */
export function splitFilters(
  stream: InstancesQuery,
  view: ViewRef,
): (DmFilter | undefined)[] {
  const scope = stream.instanceType;
  const { split, spaces } = stream;
  const restriction =
    spaces === undefined || split === 'space'
      ? undefined
      : spaces.length === 1
        ? { equals: { property: [scope, 'space'], value: spaces[0] } }
        : { in: { property: [scope, 'space'], values: [...spaces] } };
  let conditions: (DmFilter | undefined)[] = [undefined];
  if (split === 'space') {
    // instancesProblems refuses this; without spaces there would be no query at all.
    if (spaces === undefined) throw new Error('split: space without spaces');
    conditions = spaces.map((space) => ({ equals: { property: [scope, 'space'], value: space } }));
  } else if (split !== undefined) {
    const own = split.property === SPLIT_EXTERNAL_ID;
    const property = own ? [scope, SPLIT_EXTERNAL_ID] : [view.space, viewSourceKey(view), split.property];
    const { at } = split;
    conditions = [
      { range: { property, lt: at[0] } },
      ...at.slice(1).map((upper, i) => ({ range: { property, gte: at[i], lt: upper } })),
      { range: { property, gte: at[at.length - 1] } },
      ...(own ? [] : [{ not: { exists: { property } } }]),
    ];
  }
  return conditions.map((condition) => all([stream.filter, restriction, condition]));
}

function all(filters: readonly (DmFilter | undefined)[]): DmFilter | undefined {
  const given = filters.filter((filter) => filter !== undefined);
  return given.length <= 1 ? given[0] : { and: given };
}

/** The property types a split ranges over, and the boundaries each takes. */
const SPLIT_TYPES: Readonly<Record<string, 'integer' | 'number' | 'text' | 'timestamp' | 'date'>> = {
  int32: 'integer', int64: 'integer', float32: 'number', float64: 'number', text: 'text', timestamp: 'timestamp', date: 'date',
};
const BOUNDARIES_EXPECTED = {
  integer: 'integers',
  number: 'numbers',
  text: 'strings',
  timestamp: 'timestamps as text with a zone, e.g. 2024-01-01T00:00:00Z',
  date: 'dates as text, e.g. 2024-01-01',
} as const;

/**
 * What is wrong with a stream's split by a property, given its view as the platform defines it
 * (read when a run starts; the job file alone cannot tell): the property must be one of the view's
 * stored properties, hold one value of an ordered type (numbers, text of collation ucs_basic,
 * timestamps, dates), and the boundaries be of that type and increase as the platform orders it.
 * Undefined when nothing is wrong, or when the stream has no split by a property.
 */
export function splitPropertyProblem(split: InstancesSplit | undefined, view: ViewDefinition): string | undefined {
  if (split === undefined || split === 'space') return undefined;
  const { property, at } = split;
  const where = `split.property: ${property}`;
  let kind: (typeof SPLIT_TYPES)[string] | undefined = 'text';
  if (property !== SPLIT_EXTERNAL_ID) {
    const definition = Object.hasOwn(view.properties, property) ? view.properties[property] : undefined;
    const name = `${view.space}/${view.externalId}/${view.version}`;
    if (definition === undefined) return `${where} is not a property of the view ${name}`;
    if (definition.container === undefined) return `${where} is a connection of the view ${name}, not a stored value`;
    const { type, list, collation = 'ucs_basic' } = definition.type;
    if (list === true) return `${where} is a list; a split ranges over properties of one value`;
    kind = Object.hasOwn(SPLIT_TYPES, type) ? SPLIT_TYPES[type] : undefined;
    if (kind === undefined) return `${where} is of type ${type}; a split ranges over numbers, text, timestamps or dates`;
    if (kind === 'text' && collation !== 'ucs_basic') {
      return `${where} has collation ${collation}; a split by text needs collation ucs_basic, the code-point order of its boundaries`;
    }
  }
  const wrong = at.findIndex((b) => !fitsSplit(kind, b));
  if (wrong >= 0) return `split.at.${wrong}: ${property} takes ${BOUNDARIES_EXPECTED[kind]}; got ${JSON.stringify(at[wrong])}`;
  if (kind === 'timestamp') {
    const times = at.map((b) => dmsTimestampMs(String(b))!);
    const late = times.findIndex((time, i) => i > 0 && time <= times[i - 1]!);
    if (late > 0) return `split.at.${late}: ${String(at[late])} is not later than ${String(at[late - 1])}`;
  }
  return undefined;
}

function fitsSplit(kind: (typeof SPLIT_TYPES)[string], boundary: number | string): boolean {
  switch (kind) {
    case 'integer':
      return Number.isSafeInteger(boundary);
    case 'number':
      return typeof boundary === 'number';
    case 'text':
      return typeof boundary === 'string';
    case 'timestamp':
      return typeof boundary === 'string' && dmsTimestampMs(boundary) !== undefined;
    case 'date':
      return typeof boundary === 'string' && dmsDateDays(boundary) !== undefined;
  }
}

/** Numbers by value, texts by code point (UTF-16 order differs past U+FFFF). */
export function compareBoundaries(a: number | string, b: number | string): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = [...String(a)];
  const y = [...String(b)];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const difference = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (difference !== 0) return difference;
  }
  return x.length - y.length;
}
