/** The job file's `filter` of a stream: one zod schema per filter kind of resources/, with the platform's bounds. */
import { z } from 'zod';
import {
  type FilterSpec,
  LABEL_MATCHES,
  type LabelFilterValue,
  type MetadataLimits,
  metadataLimitProblems,
} from '../resources/index.js';

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
const TIME_EXPECTED = 'expected epoch milliseconds (an integer >= 0) or an ISO 8601 date-time with a zone, e.g. 2024-01-01T00:00:00Z';

/** Epoch milliseconds, given as a number or an ISO 8601 date-time with a zone. */
const time = z
  .union([z.number().int().min(0), z.string()], { error: TIME_EXPECTED })
  .transform((value, ctx) => {
    if (typeof value === 'number') return value;
    const ms = ISO_DATE_TIME.test(value) && isCalendarDate(value) ? Date.parse(value) : Number.NaN;
    if (Number.isNaN(ms) || ms < 0) {
      ctx.addIssue({ code: 'custom', message: `${TIME_EXPECTED}; '${value}' is not one` });
      return z.NEVER;
    }
    return ms;
  });

/** Date.parse rolls 2024-02-30 over into March; a date that does not exist is refused instead. */
function isCalendarDate(value: string): boolean {
  const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/**
 * A stream's `filter`: the collection's filters (resources/), times as epoch ms or ISO 8601, strings
 * non-empty and no longer than the platform accepts.
 */
export function filterSchema<F extends readonly FilterSpec[]>(filters: F) {
  const shape = Object.fromEntries(filters.map((filter) => [filter.key, filterValue(filter).optional()]));
  return z.strictObject(shape as FilterShape<F>).superRefine((given, ctx) => {
    for (const message of rangeWithIsNull(filters, given)) ctx.addIssue({ code: 'custom', message });
  });
}

/**
 * The platform's range fields take `{min, max}` or `{isNull}`, not both: `endTime: {isNull: true}`
 * with `minEndTime` or `maxEndTime` is refused, naming both.
 */
function rangeWithIsNull(filters: readonly FilterSpec[], given: Readonly<Record<string, unknown>>): string[] {
  const problems: string[] = [];
  for (const isNull of filters.filter((filter) => filter.kind === 'isNull')) {
    if (given[isNull.key] === undefined) continue;
    const ends = filters.filter((f) => f.kind === 'time' && f.field === isNull.field && given[f.key] !== undefined);
    if (ends.length === 0) continue;
    problems.push(
      `${isNull.key}: {isNull} cannot be combined with ${ends.map((f) => f.key).join(' and ')}: ` +
      `the platform filters ${isNull.field} by a range or by whether it is set, not both`,
    );
  }
  return problems;
}

function filterValue(filter: FilterSpec) {
  switch (filter.kind) {
    case 'time':
      return time;
    case 'number':
      return numberValue(filter.minimum, filter.maximum);
    case 'string':
      return stringValue(filter.maxLength);
    case 'boolean':
      return z.boolean();
    case 'ids':
      return idList(filter.maxItems);
    case 'strings':
      return stringList(filter.maxItems, filter.maxLength, filter.values);
    case 'refs':
      return refList(filter.maxItems);
    case 'map':
      return metadataMap(filter.limits);
    case 'isNull':
      return isNullValue(filter.field);
    case 'labels':
      return labelFilter(filter.maxItems);
  }
}

const numberValue = (minimum: number, maximum: number) =>
  z.number().min(minimum, `at least ${minimum}`).max(maximum, `at most ${maximum}`);

const stringValue = (maxLength: number) =>
  z.string().min(1).max(maxLength, `at most ${maxLength} characters, as the platform accepts`);

/** A list the platform bounds: 1 to `maxItems` entries. */
const listOf = <T extends z.ZodType>(entry: T, maxItems: number, expected?: string) =>
  z
    .array(entry, expected === undefined ? undefined : { error: expected })
    .min(1, 'give at least one, or leave the filter out')
    .max(maxItems, `at most ${maxItems} entries, as the platform accepts`);

/** Ids are positive integers the platform can hold (at most 2^53 - 1). */
const id = z.number().int('an id is an integer').min(1, 'an id is at least 1').max(Number.MAX_SAFE_INTEGER);

const idList = (maxItems: number) => listOf(id, maxItems);

const stringList = (maxItems: number, maxLength: number, values: readonly string[] | undefined) =>
  listOf(
    values === undefined
      ? stringValue(maxLength)
      : z.string().refine((value) => values.includes(value), { error: `one of ${values.join(', ')}` }),
    maxItems,
  );

/**
 * `{id}` or `{externalId}` objects, as the platform takes them; a bare number is an id and a bare
 * string an externalId (`dataSetIds: [123, 'my-data-set']`).
 */
const reference = z
  .union(
    [
      id.transform((value) => ({ id: value })),
      z.string().min(1).max(255, 'at most 255 characters, as the platform accepts').transform((value) => ({ externalId: value })),
      z.strictObject({ id }),
      z.strictObject({ externalId: z.string().min(1).max(255) }),
    ],
    { error: 'expected an id (a number), an externalId (a string), {id: N} or {externalId: "..."}' },
  )
  .transform((ref): { id: number } | { externalId: string } => ref);

const refList = (maxItems: number) => listOf(reference, maxItems);

/** Metadata values are text: YAML reads `area: 5` as a number, which the platform's metadata never holds. */
const metadataText = z.string({
  error: (issue) => `expected a string; quote it in YAML ('${String(issue.input)}') to match the text the platform holds`,
});

/**
 * Key-value pairs an item's metadata must hold: at least one, keys non-empty, within the platform's
 * bounds (pairs, key and value bytes, bytes in all: metadataLimitProblems).
 */
const metadataMap = (limits: MetadataLimits) =>
  z
    .record(z.string().min(1, 'a metadata key must not be empty'), metadataText)
    .refine((pairs) => Object.keys(pairs).length > 0, 'give at least one key: value pair, or leave metadata out')
    .superRefine((pairs, ctx) => {
      for (const message of metadataLimitProblems(pairs, limits)) ctx.addIssue({ code: 'custom', message });
    });

/**
 * `{isNull: true}` (items without the field) or `{isNull: false}` (items with it), held as that
 * boolean; a range is the `min`/`max` keys, which the message points to.
 */
const isNullValue = (field: string) => {
  const suffix = `${field[0]!.toUpperCase()}${field.slice(1)}`;
  const expected = `expected {isNull: true} (no ${field}) or {isNull: false}; a range is min${suffix} and max${suffix}`;
  return z.unknown().transform((value, ctx) => {
    const isNull = typeof value === 'object' && value !== null ? (value as Record<string, unknown>).isNull : undefined;
    if (typeof isNull === 'boolean' && Object.keys(value as object).length === 1) return isNull;
    ctx.addIssue({ code: 'custom', message: expected });
    return z.NEVER;
  });
};

/** A label: its externalId, or `{externalId: "..."}`. */
const label = z
  .union([
    z.string().min(1).max(255, 'at most 255 characters, as the platform accepts'),
    z.strictObject({ externalId: z.string().min(1).max(255) }).transform(({ externalId }) => externalId),
  ], { error: 'expected a label\'s externalId (a string) or {externalId: "..."}' })
  .transform((externalId) => ({ externalId }));

/**
 * `{containsAny: [...]}` or `{containsAll: [...]}` of labels, held in the platform's form
 * (`{containsAny: [{externalId}]}`); one of the two, not both.
 */
const labelFilter = (maxItems: number) => {
  const lists = LABEL_MATCHES.map((match) => {
    const list = listOf(label, maxItems, `expected a list of labels, e.g. ${match}: [pump, critical]`);
    return [match, list.optional()] as const;
  });
  return z
    .strictObject(Object.fromEntries(lists), { error: 'expected {containsAny: [label, ...]} or {containsAll: [label, ...]}' })
    .refine((value) => LABEL_MATCHES.filter((match) => value[match] !== undefined).length === 1, {
      message: 'give one of containsAny (any of the labels) or containsAll (every one)',
      // A misspelt containsAny is named once, by its did-you-mean.
      when: (payload) => payload.issues.length === 0,
    })
    .transform((value) => value as LabelFilterValue);
};

interface FilterValues {
  time: typeof time;
  number: ReturnType<typeof numberValue>;
  string: ReturnType<typeof stringValue>;
  boolean: z.ZodBoolean;
  ids: ReturnType<typeof idList>;
  strings: ReturnType<typeof stringList>;
  refs: ReturnType<typeof refList>;
  map: ReturnType<typeof metadataMap>;
  isNull: ReturnType<typeof isNullValue>;
  labels: ReturnType<typeof labelFilter>;
}

type FilterShape<F extends readonly FilterSpec[]> = {
  [E in F[number] as E['key']]: z.ZodOptional<FilterValues[E['kind']]>;
};

/** A filter's value as the job file's schema returns it. */
export type FilterValue = z.output<FilterValues[keyof FilterValues]>;
