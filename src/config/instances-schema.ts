/**
 * The job file's `resource: instances` stream: the nodes or edges of one view of the data-modeling
 * service, optionally filtered, restricted to some instance spaces and split into disjoint queries
 * (each one cursor chain). job-schema.ts adds the keys every stream has (INSTANCES_COMMON_KEYS).
 */
import { z } from 'zod';
import { type DmFilter, dmFilterSchema } from './dm-filter.js';
import { instanceFieldReferences } from './dm-filter-fields.js';
import { propertyProblem, spaceId, viewRefSchema } from './dm-identifiers.js';
import { INSTANCE_TYPES, type InstanceType } from '../resources/index.js';
import { compareCodePoints } from '../util/code-point-order.js';
import { type ApplyRules, applyAll, type KeyProblem, type KeyRule, keepNeedsSnapshot } from './key-rules.js';

/**
 * The keys of job-schema.ts's `common` an instances stream takes: `name`, `limit` (1..1000,
 * default 1000, as the platform's), `formats`, `table`, `mode` and `keep`. Not `partitions` (the API has
 * none: `split` makes several queries), `metadataColumns` (instances have no metadata map) or
 * `safetyLag` (incremental runs follow the platform's sync cursor, not a window of times).
 */
export const INSTANCES_COMMON_KEYS = ['name', 'limit', 'formats', 'table', 'mode', 'keep'] as const;

/** `spaces:` lists at most this many (each is one query with `split: space`). */
export const MAX_SPACES = 100;
/** `split.at` holds 1 to this many boundaries: at most 20 ranges. */
export const MAX_SPLIT_BOUNDARIES = 19;
/** What a split by a property ranges over: the instance's externalId, which never changes. */
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

/**
 * What a split by `property` would be, for each name it may not take: the reason, and what to write
 * instead. Only what never changes may split a stream: an instance whose value moved from one
 * query's range to another's while they read would be read twice or not at all.
 */
function splitPropertyRefusal(name: string): string {
  const instead = `split by what never changes: split: {property: ${SPLIT_EXTERNAL_ID}, at: [...]}, or split: space with spaces`;
  if (name === 'space') return 'a split by space is written split: space (one query per entry of spaces)';
  if (name === 'createdTime') return `createdTime is not a field a split ranges over; ${instead}`;
  if (INSTANCE_FIELDS.has(name)) return `${name} is a field of the instance that changes whenever the instance does; ${instead}`;
  const problem = propertyProblem(name);
  if (problem !== undefined) return `expected ${SPLIT_EXTERNAL_ID}; ${problem}`;
  return (
    `${name} is a property of the view, which may change while a run reads: an instance whose value moves ` +
    `from one query's range to another's would be read twice or not at all; ${instead}`
  );
}

/** Fields of an instance that change with it. */
const INSTANCE_FIELDS = new Set(['lastUpdatedTime', 'deletedTime', 'version']);

/**
 * `{property: externalId, at: [b1, ...]}`, checked in one refinement, not by zod's types and bounds:
 * inside the union of `split`, an issue those raise would turn into the union's own message and
 * hide which boundary is wrong (so the issues go on: `continue`). A property refused is the one
 * problem told: its boundaries could only be wrong for it.
 */
const splitByProperty = z
  .strictObject({
    property: z.string(),
    // Typed as the refinement below makes it: a transform after it would hide its issues in the union's.
    at: z.array(z.unknown()).transform((at) => at as string[]),
  })
  .superRefine(({ property, at }, ctx) => {
    const add = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message, continue: true });
    if (property !== SPLIT_EXTERNAL_ID) return add(['property'], splitPropertyRefusal(property));
    if (at.length === 0) add(['at'], 'give at least one boundary');
    if (at.length > MAX_SPLIT_BOUNDARIES) add(['at'], `at most ${MAX_SPLIT_BOUNDARIES} boundaries (${MAX_SPLIT_BOUNDARIES + 1} ranges)`);
    (at as readonly unknown[]).forEach((b, i) => {
      const before: unknown = at[i - 1];
      if (typeof b !== 'string') add(['at', i], `${SPLIT_EXTERNAL_ID} takes strings: write the boundary in quotes`);
      else if (typeof before === 'string' && compareCodePoints(before, b) >= 0) {
        add(['at', i], `the boundaries increase strictly (by code point): ${JSON.stringify(b)} does not come after ${JSON.stringify(before)}`);
      }
    });
  });

/**
 * `space`: a query per entry of `spaces`. `{property: externalId, at}`: a query per range of
 * externalIds. Both never change, so an instance stays in its query however it changes.
 */
const splitSchema = z.union([z.literal('space'), splitByProperty], {
  error: `expected space or {property: ${SPLIT_EXTERNAL_ID}, at: [b1, b2, ...]}`,
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

/** What instancesProblems reads of a stream. */
export type InstancesKeys = InstancesQuery & {
  mode: string;
  keep?: number | undefined;
  allowExpiredCursorsAndAcceptMissedDeletes?: boolean;
};

const INSTANCES_RULES: readonly KeyRule<InstancesKeys>[] = [
  keepNeedsSnapshot,
  (stream) =>
    stream.mode !== 'incremental' && stream.allowExpiredCursorsAndAcceptMissedDeletes === true
      ? {
          path: ['allowExpiredCursorsAndAcceptMissedDeletes'],
          message: `applies to mode: incremental (the sync feed's cursors); this stream's mode is ${stream.mode}`,
        }
      : undefined,
  (stream) =>
    stream.split === 'space' && (stream.spaces?.length ?? 0) < 2
      ? { path: ['split'], message: 'a split by space makes one query per entry of spaces; list at least 2 spaces' }
      : undefined,
  (stream) =>
    instanceFieldReferences(stream.filter)
      .filter(({ scope }) => scope !== stream.instanceType)
      .map(({ path, field }) => ({
        path: [...path, 0],
        message: `this stream lists ${stream.instanceType}s: ["${stream.instanceType}", "${field}"]`,
      })),
];

/** What the keys of an instances stream must agree on, as problems at their paths in the stream. */
export function instancesProblems(stream: InstancesKeys, apply: ApplyRules = applyAll): KeyProblem[] {
  return apply(stream, INSTANCES_RULES);
}

/**
 * The filter of each query of a stream, in order; undefined where a query has none. Each is the
 * stream's `filter`, its `spaces` and its split's own condition, joined with `and`:
 *
 * - no split: one query;
 * - `split: space`: one query per space, `equals [node|edge, space]`;
 * - `split: {property: externalId, at: [b1, ..., bk]}`: `externalId < b1`, `b1 <= externalId < b2`,
 *   ..., `externalId >= bk`. Every instance has an externalId, and the ranges are disjoint and leave
 *   none out, as the platform orders externalIds in code-point order (compareCodePoints).
 */
export function splitFilters(stream: InstancesQuery): (DmFilter | undefined)[] {
  const scope = stream.instanceType;
  return splitScopes(stream).map((query) => {
    const { externalId } = query;
    const property = [scope, SPLIT_EXTERNAL_ID];
    const range = externalId === undefined ? undefined : { range: { property, ...externalId } };
    const spaces = query.spaces === undefined
      ? undefined
      : query.spaces.length === 1
        ? { equals: { property: [scope, 'space'], value: query.spaces[0] } }
        : { in: { property: [scope, 'space'], values: [...query.spaces] } };
    return all([stream.filter, spaces, range]);
  });
}

/**
 * What each query of a stream holds, in order, in terms an instance read can be checked against
 * (QueryScope): its spaces (the stream's `spaces`, or its own with `split: space`) and its range
 * of externalIds.
 */
export function splitScopes(stream: Pick<InstancesQuery, 'spaces' | 'split'>): QueryScope[] {
  const { split, spaces } = stream;
  const given = spaces === undefined ? {} : { spaces: [...spaces] };
  if (split === undefined) return [given];
  if (split === 'space') {
    // instancesProblems refuses this; without spaces there would be no query at all.
    if (spaces === undefined) throw new Error('split: space without spaces');
    return spaces.map((space) => ({ spaces: [space] }));
  }
  const { at } = split;
  return [
    { ...given, externalId: { lt: at[0]! } },
    ...at.slice(1).map((upper, i) => ({ ...given, externalId: { gte: at[i]!, lt: upper } })),
    { ...given, externalId: { gte: at[at.length - 1]! } },
  ];
}

/**
 * The instances one query of a stream reads, besides the stream's filter: of these spaces (all when
 * absent), in this range of externalIds (from `gte`, below `lt`; no range when absent).
 */
export interface QueryScope {
  spaces?: string[];
  externalId?: { gte?: string; lt?: string };
}

function all(filters: readonly (DmFilter | undefined)[]): DmFilter | undefined {
  const given = filters.filter((filter) => filter !== undefined);
  return given.length <= 1 ? given[0] : { and: given };
}
