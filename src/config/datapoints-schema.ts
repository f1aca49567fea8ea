/** The job file's `resource: datapoints` stream: which series, which time window, raw or aggregated. */
import { z } from 'zod';
import { timeseries } from '../resources/timeseries.js';
import { dmFilterSchema } from './dm-filter.js';
import { viewRefSchema } from './dm-identifiers.js';
import { filterSchema } from './filter-schema.js';
import { type Aggregate, AGGREGATES, MAX_POINT_TIME, MIN_POINT_TIME, type PointTime } from '../resources/index.js';
import { oddOffset, offsetText } from './zone-offsets.js';
import { type ApplyRules, applyAll, keepNeedsSnapshot, type KeyProblem, type KeyRule } from './key-rules.js';

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
const AGO = /^(\d{1,9})(w|d|h|m|s)-ago$/;
const AGO_MS: Readonly<Record<string, number>> = { w: 604_800_000, d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 };
const TIME_EXPECTED =
  "expected epoch milliseconds (an integer, negative before 1970), an ISO 8601 date-time with a zone (2024-01-01T00:00:00Z), 'now' or 'N[w|d|h|m|s]-ago' (30d-ago)";

const pointTime = z.union([z.number(), z.string()], { error: TIME_EXPECTED }).transform((value, ctx): PointTime => {
  let time: PointTime | undefined;
  if (typeof value === 'number') time = Number.isSafeInteger(value) ? { at: value } : undefined;
  else if (value === 'now') time = { agoMs: 0 };
  else if (AGO.test(value)) {
    const [, count, unit] = AGO.exec(value)!;
    time = { agoMs: Number(count) * AGO_MS[unit!]! };
  } else if (ISO_DATE_TIME.test(value) && !Number.isNaN(Date.parse(value))) time = { at: Date.parse(value) };
  if (time === undefined) {
    ctx.addIssue({ code: 'custom', message: TIME_EXPECTED });
    return z.NEVER;
  }
  if ('at' in time && (time.at < MIN_POINT_TIME || time.at > MAX_POINT_TIME)) {
    ctx.addIssue({ code: 'custom', message: "outside the platform's time range, 1900-01-01 to 2100-01-01" });
    return z.NEVER;
  }
  return time;
});

/** `N` + s|m|h|d|mo; s and m: 1..120, h, d and mo: 1..100000 (the platform's bounds). */
const GRANULARITY = /^([1-9]\d{0,5})(s|m|h|d|mo)$/;
const granularity = z.string().superRefine((value, ctx) => {
  const match = GRANULARITY.exec(value);
  const most = match?.[2] === 's' || match?.[2] === 'm' ? 120 : 100_000;
  if (match === null || Number(match[1]) > most) {
    ctx.addIssue({
      code: 'custom',
      message: 'expected a number and a unit: s or m (1 to 120), h, d or mo (1 to 100000), e.g. 1h or 15m',
    });
  }
});

const timeZone = z.string().superRefine((value, ctx) => {
  if (/^UTC[+-]\d{2}:\d{2}$/.test(value)) return;
  try {
    new Intl.DateTimeFormat('en', { timeZone: value });
  } catch {
    ctx.addIssue({ code: 'custom', message: 'not a time zone: an IANA name such as Europe/Oslo, or UTC+01:00' });
  }
});

/** The structs of a bucket's extreme point are not exported: named, so that the refusal says so. */
const NOT_EXPORTED = new Set(['minDatapoint', 'maxDatapoint']);

const aggregate = z.string().transform((name, ctx) => {
  const known = (AGGREGATES as readonly string[]).includes(name);
  if (!known) {
    ctx.addIssue({
      code: 'custom',
      message: NOT_EXPORTED.has(name)
        ? `${name} is not exported (a point per bucket, not a value); min or max give its value`
        : `not an aggregate; one of ${AGGREGATES.join(', ')}`,
    });
    return z.NEVER;
  }
  return name as Aggregate;
});

/** Explicit series: at most this many per stream (more are selected with the timeseries filters). */
export const MAX_LISTED_SERIES = 10_000;

const seriesId = z.number().int('an id is an integer').min(1, 'an id is at least 1').max(Number.MAX_SAFE_INTEGER);
const seriesList = <T extends z.ZodType>(entry: T) =>
  z
    .array(entry)
    .min(1, 'give at least one, or leave the list out')
    .max(MAX_LISTED_SERIES, `at most ${MAX_LISTED_SERIES} series; select more with the timeseries filters`)
    .superRefine((list, ctx) => {
      // By value: an instanceId is an object, equal to another of the same space and externalId.
      const seen = new Set<string>();
      list.forEach((entry, i) => {
        const key = JSON.stringify(entry);
        if (seen.has(key)) ctx.addIssue({ code: 'custom', path: [i], message: `${key} is listed twice` });
        seen.add(key);
      });
    });

/** A data-model time series (a CogniteTimeSeries node): its space and externalId, as the platform bounds them. */
const instanceId = z.strictObject(
  {
    space: z.string().min(1).max(43, 'at most 43 characters, as the platform accepts'),
    externalId: z.string().min(1).max(255, 'at most 255 characters, as the platform accepts'),
  },
  { error: 'expected {space, externalId}, the key of a data-model time series' },
);

const LISTS = ['ids', 'externalIds', 'instanceIds'] as const;

/**
 * Which series: the timeseries collection's own filters (the keys of a `resource: timeseries`
 * stream's `filter`), an explicit list of `ids`, `externalIds` or `instanceIds` (time series
 * that live in the data model, each `{space, externalId}`), or the nodes of a data-model `view`
 * (CogniteTimeSeries or one that implements it) that match `filter`, the instances stream's language.
 */
const selection = filterSchema(timeseries.filters)
  .extend({
    ids: seriesList(seriesId).optional(),
    externalIds: seriesList(z.string().min(1).max(255, 'at most 255 characters, as the platform accepts')).optional(),
    instanceIds: seriesList(instanceId).optional(),
    view: viewRefSchema.optional(),
    filter: dmFilterSchema.optional(),
  })
  .superRefine((given, ctx) => {
    if (given.filter !== undefined && given.view === undefined) {
      ctx.addIssue({ code: 'custom', path: ['filter'], message: 'a filter of nodes needs their view: add view {space, externalId, version}' });
    }
    const lists = [...LISTS.filter((key) => given[key] !== undefined), ...(given.view === undefined ? [] : ['view' as const])];
    const isList = (key: string) => [...LISTS, 'view', 'filter'].includes(key);
    const filters = Object.keys(given).filter((key) => !isList(key) && given[key as keyof typeof given] !== undefined);
    if (lists.length > 1) {
      ctx.addIssue({
        code: 'custom',
        path: [lists[1]!],
        message: `give one of the lists ids, externalIds, instanceIds or a view; got ${lists.join(' and ')}`,
      });
    }
    if (lists.length > 0 && filters.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: [filters[0]!],
        message: `${lists[0] === 'view' ? 'a view' : `an explicit ${lists[0]} list`} selects the series itself; ` +
          `remove the timeseries filter ${filters.join(', ')} (or the ${lists[0] === 'view' ? 'view' : 'list'})`,
      });
    }
  });

export type SeriesSelection = z.output<typeof selection>;

/** The keys of a datapoints stream other than those every stream has (job-schema.ts adds those). */
export const datapointsKeys = {
  resource: z.literal('datapoints'),
  /** Which series; default: every time series of the project. */
  timeseries: selection.default({}),
  /** Inclusive; default 1900-01-01, the platform's first timestamp, so that a backfill misses nothing. */
  start: pointTime.default({ at: MIN_POINT_TIME }),
  /** Exclusive; default the run's start. */
  end: pointTime.optional(),
  aggregates: z
    .array(aggregate)
    .min(1, 'give at least one aggregate, or leave aggregates out for raw points')
    .refine((list) => new Set(list).size === list.length, 'an aggregate is listed twice')
    .optional(),
  granularity: granularity.optional(),
  timeZone: timeZone.optional(),
  includeStatus: z.boolean().optional(),
  ignoreBadDataPoints: z.boolean().optional(),
  treatUncertainAsBad: z.boolean().optional(),
  targetUnit: z.string().min(1).max(64).optional(),
  targetUnitSystem: z.string().min(1).max(64).optional(),
  /**
   * Follow this datapoint subscription (its externalId) instead of reading a window: each run
   * writes the points written and the ranges deleted since the run before as change rows.
   */
  subscription: z.string().min(1).max(255, 'at most 255 characters, as the platform accepts').optional(),
  /** A subscription's first run: where its partitions start (`now`, `N[w|d|h|m]-ago`); default: its start. */
  initializeCursors: z
    .string()
    .regex(/^(now|[1-9]\d{0,8}[wdhm]-ago)$/, "expected 'now' or 'N[w|d|h|m]-ago' (e.g. 2d-ago), as the platform accepts")
    .optional(),
};

/** Keys of a datapoints stream that select or shape a window of points: a subscription stream has none. */
const WINDOW_KEYS = ['end', 'aggregates', 'granularity', 'timeZone', 'targetUnit', 'targetUnitSystem', 'keep'] as const;

/**
 * Why the platform would refuse the stream's aggregate queries for their `timeZone` (zone-offsets.ts):
 * the zone's offset at the window's start (or end) is not whole quarter hours. Only a fixed start
 * (and end) is checked: a relative one is resolved when a run starts, in recent years, where every
 * zone's offset is whole quarter hours.
 */
function zoneProblem(
  name: string,
  zone: string | undefined,
  start: PointTime,
  end: PointTime | undefined,
): string | undefined {
  if (zone === undefined || !('at' in start)) return undefined;
  const fixedEnd = end !== undefined && 'at' in end ? end.at : undefined;
  const odd = oddOffset(zone, start.at, fixedEnd, fixedEnd ?? MAX_POINT_TIME);
  if (odd === undefined) return undefined;
  const iso = (ms: number) => new Date(ms).toISOString();
  const defaulted = start.at === MIN_POINT_TIME ? ' (start defaults to 1900-01-01)' : '';
  const which = `the start of the window of stream '${name}'${defaulted}`;
  const where = odd.at === start.at ? which : `the end of the window of stream '${name}'`;
  const refused = `${zone} is ${offsetText(odd.offsetMs)} off UTC at ${iso(odd.at)}, ${where}: the platform computes aggregates ` +
    'only where the zone\'s offset is a whole number of quarter hours, and refuses the query (HTTP 400)';
  if (odd.laterStart === undefined) {
    return `${refused}; use a zone or offset of whole quarter hours (UTC+05:30, UTC+05:45)`;
  }
  return `${refused}; set start to ${iso(odd.laterStart)} or later (from then on ${zone}'s offset is whole quarter hours)`;
}

/** What datapointsProblems reads of a stream. */
export interface DatapointsKeys {
  name?: string | undefined;
  mode: string;
  keep?: number | undefined;
  timeseries: SeriesSelection;
  start: PointTime;
  end?: PointTime | undefined;
  aggregates?: readonly string[] | undefined;
  granularity?: string | undefined;
  timeZone?: string | undefined;
  targetUnit?: string | undefined;
  targetUnitSystem?: string | undefined;
  subscription?: string | undefined;
  initializeCursors?: string | undefined;
}

type Problem = { path: string[]; message: string };
const at = (path: string, message: string): Problem => ({ path: [path], message });

/** The rules of a stream that reads a window of points (no subscription). */
const WINDOW_RULES: readonly KeyRule<DatapointsKeys>[] = [
  (s) =>
    s.initializeCursors === undefined
      ? undefined
      : at('initializeCursors', 'initializeCursors applies to a stream that follows a subscription; add subscription, or remove it'),
  (s) => (s.aggregates !== undefined && s.granularity === undefined ? at('granularity', 'aggregates need a granularity (e.g. 1h)') : undefined),
  (s) =>
    s.aggregates === undefined && s.granularity !== undefined
      ? at('granularity', 'a granularity applies to aggregates; add aggregates, or remove it')
      : undefined,
  (s) =>
    s.aggregates === undefined && s.timeZone !== undefined
      ? at('timeZone', 'a timeZone applies to aggregates; add aggregates, or remove it')
      : undefined,
  (s) => {
    const zone = s.aggregates === undefined ? undefined : zoneProblem(s.name ?? 'datapoints', s.timeZone, s.start, s.end);
    return zone === undefined ? undefined : at('timeZone', zone);
  },
  (s) =>
    s.aggregates !== undefined && s.timeseries.isString === true
      ? at('aggregates', 'aggregates exist for numeric series only, and timeseries.isString: true selects string series')
      : undefined,
  (s) =>
    s.targetUnit !== undefined && s.targetUnitSystem !== undefined
      ? at('targetUnitSystem', 'give targetUnit or targetUnitSystem, not both')
      : undefined,
  keepNeedsSnapshot,
  (s) =>
    s.mode === 'incremental' && s.aggregates !== undefined
      ? at(
          'mode',
          "aggregates are exported with mode: full or snapshot (an incremental run's window would end inside a bucket that the next run reads again); " +
          'use mode: snapshot with a relative start (30d-ago) for a new window each run, or export raw points incrementally and aggregate them downstream',
        )
      : undefined,
  (s) =>
    s.mode === 'incremental' && s.end !== undefined
      ? at('end', "an incremental stream ends each run's window itself (its start minus safetyLag); remove end")
      : undefined,
  (s) =>
    s.end !== undefined && 'at' in s.start && 'at' in s.end && s.end.at <= s.start.at
      ? at('end', 'end must come after start (start is inclusive, end exclusive)')
      : undefined,
];

const WHY = 'a stream that follows a subscription reads every point written or deleted in the subscription\'s series';

/**
 * What a stream that follows a subscription refuses: the subscription chooses the series and every
 * point written or deleted is read, so a selection, a window or aggregates beside it would be
 * ignored; its runs read the changes since the run before, which only mode incremental does.
 */
const SUBSCRIPTION_RULES: readonly KeyRule<DatapointsKeys>[] = [
  (s) =>
    s.mode === 'incremental'
      ? undefined
      : at('mode', `${WHY}, each run the changes since the run before: mode is incremental (or left out), not ${s.mode}`),
  (s) =>
    Object.keys(s.timeseries).length > 0
      ? at('timeseries', `${WHY}: the subscription selects the series; remove timeseries (or subscription, to read a window)`)
      : undefined,
  (s) =>
    !('at' in s.start) || s.start.at !== MIN_POINT_TIME
      ? at('start', `${WHY}, whatever their times: remove start (initializeCursors says where its first run begins)`)
      : undefined,
  ...WINDOW_KEYS.map(
    (key): KeyRule<DatapointsKeys> =>
      (s) => (s[key] === undefined ? undefined : at(key, `${WHY}, as raw points: remove ${key} (or subscription, to read a window)`)),
  ),
];

/**
 * What the keys of a datapoints stream must agree on, as problems at their paths in the stream. Each
 * rule asks first whether the stream follows a subscription: a subscription that did not parse
 * leaves every rule out (whatParsedProblems), rather than judging the stream as the other kind.
 */
const DATAPOINTS_RULES: readonly KeyRule<DatapointsKeys>[] = [
  ...WINDOW_RULES.map((rule): KeyRule<DatapointsKeys> => (s) => (s.subscription === undefined ? rule(s) : undefined)),
  ...SUBSCRIPTION_RULES.map(
    (rule): KeyRule<DatapointsKeys> => (s) => (s.subscription === undefined ? undefined : rule(s)),
  ),
];

/** What the keys of a datapoints stream must agree on, as problems at their paths in the stream. */
export function datapointsProblems(stream: DatapointsKeys, apply: ApplyRules = applyAll): KeyProblem[] {
  return apply(stream, DATAPOINTS_RULES);
}
