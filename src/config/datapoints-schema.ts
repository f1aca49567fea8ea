/** The job file's `resource: datapoints` stream: which series, which time window, raw or aggregated. */
import { z } from 'zod';
import { timeseries } from '../resources/timeseries.js';
import { dmFilterSchema } from './dm-filter.js';
import { viewRefSchema } from './dm-identifiers.js';
import { filterSchema } from './filter-schema.js';
import { type Aggregate, AGGREGATES, MAX_POINT_TIME, MIN_POINT_TIME, type PointTime } from '../resources/index.js';
import { oddOffset, offsetText } from './zone-offsets.js';

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

/** What the keys of a datapoints stream must agree on, as zod issues at their paths. */
export function datapointsProblems(stream: {
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
}): { path: string[]; message: string }[] {
  if (stream.subscription !== undefined) return subscriptionProblems(stream);
  const problems: { path: string[]; message: string }[] = [];
  const add = (path: string, message: string) => problems.push({ path: [path], message });
  if (stream.initializeCursors !== undefined) {
    add('initializeCursors', 'initializeCursors applies to a stream that follows a subscription; add subscription, or remove it');
  }
  const aggregated = stream.aggregates !== undefined;
  if (aggregated && stream.granularity === undefined) add('granularity', 'aggregates need a granularity (e.g. 1h)');
  if (!aggregated && stream.granularity !== undefined) add('granularity', 'a granularity applies to aggregates; add aggregates, or remove it');
  if (!aggregated && stream.timeZone !== undefined) add('timeZone', 'a timeZone applies to aggregates; add aggregates, or remove it');
  const zone = aggregated ? zoneProblem(stream.name ?? 'datapoints', stream.timeZone, stream.start, stream.end) : undefined;
  if (zone !== undefined) add('timeZone', zone);
  if (aggregated && stream.timeseries.isString === true) {
    add('aggregates', 'aggregates exist for numeric series only, and timeseries.isString: true selects string series');
  }
  if (stream.targetUnit !== undefined && stream.targetUnitSystem !== undefined) {
    add('targetUnitSystem', 'give targetUnit or targetUnitSystem, not both');
  }
  if (stream.keep !== undefined && stream.mode !== 'snapshot') {
    add('keep', `keep applies to mode: snapshot (completed snapshots to keep); this stream's mode is ${stream.mode}`);
  }
  if (stream.mode === 'incremental' && aggregated) {
    add(
      'mode',
      "aggregates are exported with mode: full or snapshot (an incremental run's window would end inside a bucket that the next run reads again); " +
      'use mode: snapshot with a relative start (30d-ago) for a new window each run, or export raw points incrementally and aggregate them downstream',
    );
  }
  if (stream.mode === 'incremental' && stream.end !== undefined) {
    add('end', "an incremental stream ends each run's window itself (its start minus safetyLag); remove end");
  }
  if (stream.end !== undefined && 'at' in stream.start && 'at' in stream.end && stream.end.at <= stream.start.at) {
    add('end', 'end must come after start (start is inclusive, end exclusive)');
  }
  return problems;
}

/**
 * What a stream that follows a subscription refuses: the subscription chooses the series and every
 * point written or deleted is read, so a selection, a window or aggregates beside it would be
 * ignored; its runs read the changes since the run before, which only mode incremental does.
 */
function subscriptionProblems(stream: Parameters<typeof datapointsProblems>[0]): { path: string[]; message: string }[] {
  const problems: { path: string[]; message: string }[] = [];
  const add = (path: string, message: string) => problems.push({ path: [path], message });
  const why = 'a stream that follows a subscription reads every point written or deleted in the subscription\'s series';
  if (stream.mode !== 'incremental') {
    add('mode', `${why}, each run the changes since the run before: mode is incremental (or left out), not ${stream.mode}`);
  }
  if (Object.keys(stream.timeseries).length > 0) {
    add('timeseries', `${why}: the subscription selects the series; remove timeseries (or subscription, to read a window)`);
  }
  if (!('at' in stream.start) || stream.start.at !== MIN_POINT_TIME) {
    add('start', `${why}, whatever their times: remove start (initializeCursors says where its first run begins)`);
  }
  for (const key of WINDOW_KEYS) {
    if (stream[key] !== undefined) add(key, `${why}, as raw points: remove ${key} (or subscription, to read a window)`);
  }
  return problems;
}
