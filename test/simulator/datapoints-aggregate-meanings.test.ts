import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { bruteAggregates, type BruteQuery, expectSameBuckets, type RawPoint } from '../support/brute-aggregates.js';
import { answerItems, drainQueries, postPoints } from '../support/datapoints.js';
import { createFakeClock } from '../support/fake-clock.js';

/**
 * Every aggregate of `POST /timeseries/data/list`, with the platform's meanings, served over HTTP
 * by the simulator and compared bucket by bucket with the brute force of
 * test/support/brute-aggregates.ts over the series' raw points fetched over HTTP too (every point,
 * with its status): a gappy series (points up to two hours apart, so the integral average and the
 * one-hour rule at the edges matter), a step series, series with bad and uncertain points under
 * each flag, time zones (Europe/Oslo across its daylight-saving changes, UTC+05:30), months in a
 * zone, and pages of buckets followed by their cursors.
 *
 * Data: seed 7, 120 series, 300,000 points (series picked below by what they are, not by index).
 */
const KEY = 'datapoints-meanings-key';
const AUTH = { 'api-key': KEY };
const HOUR = 3_600_000;
const ALL = [
  'average',
  'max',
  'min',
  'count',
  'sum',
  'interpolation',
  'stepInterpolation',
  'totalVariation',
  'continuousVariance',
  'discreteVariance',
  'countGood',
  'countUncertain',
  'countBad',
  'durationGood',
  'durationUncertain',
  'durationBad',
  'maxDatapoint',
  'minDatapoint',
];

let sim: Simulator;
const raw = new Map<number, RawPoint[]>();

beforeAll(async () => {
  const clock = createFakeClock();
  sim = await startSimulator({ seed: 7, timeseries: 120, datapoints: 300_000, apiKeys: [KEY], clock });
});

afterAll(async () => {
  await sim.close();
});

interface Picked {
  index: number;
  id: number;
  isStep: boolean;
  first: number;
  last: number;
}

interface Facts {
  isStep: boolean;
  step: number;
  badShare: number;
  first: number;
  last: number;
}

/** The first numeric series of at least 500 points that `fits`. */
function pick(fits: (series: Facts) => boolean): Picked {
  for (let index = 0; index < 120; index++) {
    const item = sim.dataset.timeseries.item(index);
    const series = sim.dataset.datapoints.series(index);
    if (item.isString || series.count < 500) continue;
    const facts = {
      isStep: item.isStep,
      step: series.step,
      badShare: series.shape.badShare,
      first: series.timestampOf(0),
      last: series.timestampOf(series.count - 1),
    };
    if (fits(facts)) return { index, id: item.id, ...facts };
  }
  throw new Error('no such series in the data set');
}

/** Every point of the series with its status, over HTTP (statuses shown, bad and uncertain points kept). */
async function rawPoints(series: Picked): Promise<RawPoint[]> {
  const cached = raw.get(series.index);
  if (cached !== undefined) return cached;
  const query = {
    id: series.id,
    start: Date.UTC(1900, 0, 1),
    end: Date.UTC(2099, 0, 1),
    limit: 100_000,
    includeStatus: true,
    ignoreBadDataPoints: false,
    treatUncertainAsBad: false,
  };
  const { points } = await drainQueries(sim, { items: [query] }, AUTH);
  const all = (points[0] ?? []) as unknown as RawPoint[];
  expect(all.length).toBe(sim.dataset.datapoints.countOf(series.index));
  raw.set(series.index, all);
  return all;
}

type Flags = Pick<BruteQuery, 'ignoreBadDataPoints' | 'treatUncertainAsBad' | 'includeStatus'>;

/** The buckets the simulator serves for the query, every page followed (`limit` a page), and how many requests. */
async function served(
  series: Picked,
  query: { start: number; end: number; granularity: string; aggregates: readonly string[]; limit?: number } & Flags,
  timeZone?: string,
): Promise<{ buckets: Record<string, unknown>[]; requests: number }> {
  const body = { items: [{ id: series.id, limit: 97, ...query }], ...(timeZone === undefined ? {} : { timeZone }) };
  const { points, requests } = await drainQueries(sim, body, AUTH);
  return { buckets: points[0] ?? [], requests };
}

/** Served and brute force side by side for the query; returns the buckets. */
async function expectBrute(
  series: Picked,
  query: { start: number; end: number; granularity: string; aggregates?: readonly string[] } & Flags,
  timeZone?: string,
): Promise<Record<string, unknown>[]> {
  const aggregates = query.aggregates ?? ALL;
  const { buckets } = await served(series, { ...query, aggregates }, timeZone);
  const expected = bruteAggregates(await rawPoints(series), {
    ...query,
    aggregates,
    isStep: series.isStep,
    ...(timeZone === undefined ? {} : { timeZone }),
  });
  expect(expected.length).toBeGreaterThan(2);
  expectSameBuckets(buckets, expected, `series ${series.index} ${query.granularity} ${timeZone ?? 'UTC'} ${JSON.stringify(query)}`);
  return buckets;
}

/** A window of the series' whole span, its ends off every bucket boundary. */
const spanOf = (series: Picked) => ({ start: series.first - 7 * HOUR - 12_345, end: series.last + 5 * HOUR + 678 });

describe('aggregates with the platform\'s meanings, equal to the brute force', () => {
  it.each(['10m', '1h', '6h', '1d'])('a gappy series (points up to two hours apart) at %s: integral average, edges', async (granularity) => {
    const gappy = pick((s) => !s.isStep && s.step === HOUR && s.badShare === 0);
    const buckets = await expectBrute(gappy, { ...spanOf(gappy), granularity });
    // Time-weighting matters: some averages are not the mean of the points.
    const mean = (bucket: Record<string, unknown>) => (bucket.sum as number) / (bucket.count as number);
    const off = (bucket: Record<string, unknown>) => Math.abs((bucket.average as number) - mean(bucket));
    const weighted = buckets.filter((bucket) => off(bucket) > 1e-6 * Math.abs(mean(bucket)));
    expect(weighted.length).toBeGreaterThan(0);
    if (granularity !== '1d') {
      // A point before the bucket more than an hour away is not used: no interpolation there.
      const cut = buckets.filter((bucket) => bucket.interpolation === undefined && bucket.stepInterpolation != null);
      expect(cut.length).toBeGreaterThan(0);
    }
  });

  it.each(['15m', '1h', '1d', '1mo'])('a step series at %s: steps, and interpolation is stepInterpolation', async (granularity) => {
    // At 1mo, a series of more than four months, so that it has buckets enough.
    const long = granularity === '1mo' ? 120 * 24 * HOUR : 0;
    const step = pick((s) => s.isStep && s.step >= 900_000 && s.badShare === 0 && s.last - s.first > long);
    const month = { start: step.first - 7 * HOUR, end: step.first + 30 * 24 * HOUR };
    const window = granularity === '1mo' ? spanOf(step) : month;
    const buckets = await expectBrute(step, { ...window, granularity });
    for (const bucket of buckets) expect(bucket.interpolation).toBe(bucket.stepInterpolation);
    expect(buckets.some((bucket) => bucket.interpolation !== undefined)).toBe(true);
  });

  const FLAGS: Flags[] = [
    {},
    { treatUncertainAsBad: false },
    { ignoreBadDataPoints: false },
    { ignoreBadDataPoints: false, treatUncertainAsBad: false, includeStatus: true },
  ];

  it.each(FLAGS)('bad and uncertain points, a series that is not a step series, with %j', async (flags) => {
    const noisy = pick((s) => !s.isStep && s.badShare > 0.03 && s.step >= 60_000);
    const buckets = await expectBrute(noisy, { ...spanOf(noisy), granularity: '1h', ...flags });
    const mixed = buckets.filter((bucket) => (bucket.countBad as number) > 0 && (bucket.countUncertain as number) > 0);
    expect(mixed.length).toBeGreaterThan(0);
    if (flags.treatUncertainAsBad === false && flags.includeStatus === true) {
      // An uncertain point counted as an extreme shows its status.
      expect(buckets.some((bucket) => JSON.stringify([bucket.minDatapoint, bucket.maxDatapoint]).includes('"status"'))).toBe(true);
    }
  });

  it.each(FLAGS)('bad and uncertain points, a step series, with %j', async (flags) => {
    const noisy = pick((s) => s.isStep && s.badShare > 0.02 && s.step >= 30_000);
    await expectBrute(noisy, { ...spanOf(noisy), granularity: '1h', ...flags });
  });

  it('answers a bucket that holds only points left out when a status aggregate is asked, and only then', async () => {
    const noisy = pick((s) => !s.isStep && s.badShare > 0.03 && s.step >= 60_000);
    const window = { ...spanOf(noisy), granularity: '1m' };
    const byStatus = await expectBrute(noisy, { ...window, aggregates: ['countBad', 'count', 'average'] });
    const plain = await expectBrute(noisy, { ...window, aggregates: ['count', 'average'] });
    // Such a bucket has no count, but an average where the function bridges its points.
    const onlyBad = byStatus.filter((bucket) => bucket.count === undefined);
    expect(onlyBad.length).toBeGreaterThan(0);
    expect(plain.length).toBe(byStatus.length - onlyBad.length);
  });
});

describe('time zones', () => {
  const at = (iso: string) => Date.parse(iso);
  const lengths = (buckets: Record<string, unknown>[]) =>
    buckets.slice(1).map((bucket, i) => ((bucket.timestamp as number) - (buckets[i]?.timestamp as number)) / HOUR);

  it('Europe/Oslo, days across the change to summer time (23 hours) and back (25 hours)', async () => {
    // The simulator's clock starts at 2026-01-01: 2025-03-30 02:00 -> 03:00 and 2025-10-26 03:00 -> 02:00, local.
    // Of this data set only a step series holds the spring change; steps change nothing of the buckets.
    const spring = pick((s) => s.first < at('2025-03-21T00:00:00Z') && s.last > at('2025-04-06T00:00:00Z'));
    const autumn = pick((s) => !s.isStep && s.first < at('2025-10-19T00:00:00Z') && s.last > at('2025-11-02T00:00:00Z'));
    const march = await expectBrute(spring, { start: at('2025-03-25T10:00:00Z'), end: at('2025-04-03T00:00:00Z'), granularity: '1d' }, 'Europe/Oslo');
    expect(march[0]?.timestamp).toBe(at('2025-03-24T23:00:00Z'));
    expect(lengths(march)).toContain(23);
    expect(march.map((bucket) => bucket.timestamp)).toContain(at('2025-03-30T22:00:00Z'));
    const october = await expectBrute(autumn, { start: at('2025-10-21T00:00:00Z'), end: at('2025-10-31T00:00:00Z'), granularity: '1d' }, 'Europe/Oslo');
    expect(lengths(october)).toContain(25);
    expect(october.map((bucket) => bucket.timestamp)).toContain(at('2025-10-26T23:00:00Z'));
    // Hours stay 3,600,000 ms across the change; 2 days follow the local calendar.
    await expectBrute(autumn, { start: at('2025-10-25T00:00:00Z'), end: at('2025-10-28T00:00:00Z'), granularity: '1h' }, 'Europe/Oslo');
    await expectBrute(autumn, { start: at('2025-10-11T00:00:00Z'), end: at('2025-11-11T00:00:00Z'), granularity: '2d' }, 'Europe/Oslo');
  });

  it('UTC+05:30: hours and days start at half past a UTC hour', async () => {
    const gappy = pick((s) => !s.isStep && s.step === HOUR && s.badShare === 0);
    for (const granularity of ['1h', '3h', '1d']) {
      const buckets = await expectBrute(gappy, { ...spanOf(gappy), granularity }, 'UTC+05:30');
      for (const bucket of buckets) expect((bucket.timestamp as number) % HOUR).toBe(HOUR / 2);
    }
  });

  it('months in Europe/Oslo start on the local first of the month, for a step series over two years', async () => {
    const long = pick((s) => s.isStep && s.first < at('2024-03-01T00:00:00Z') && s.last > at('2025-11-01T00:00:00Z'));
    const months = await expectBrute(long, { ...spanOf(long), granularity: '1mo' }, 'Europe/Oslo');
    const starts = months.map((bucket) => bucket.timestamp);
    expect(starts).toContain(at('2024-03-31T22:00:00Z'));
    expect(starts).toContain(at('2024-11-30T23:00:00Z'));
    await expectBrute(long, { ...spanOf(long), granularity: '3mo' }, 'Europe/Oslo');
    await expectBrute(long, { ...spanOf(long), granularity: '1mo', aggregates: ['count', 'durationGood'] }, 'America/New_York');
  });

  it('seconds and minutes in a zone are as in UTC', async () => {
    const gappy = pick((s) => !s.isStep && s.step === HOUR && s.badShare === 0);
    const query = { ...spanOf(gappy), granularity: '30m', aggregates: ['average', 'count'], limit: 10_000 };
    const [utc, kathmandu] = await Promise.all([served(gappy, query), served(gappy, query, 'Asia/Kathmandu')]);
    expect(kathmandu.buckets).toEqual(utc.buckets);
  });
});

describe('pages of aggregates', () => {
  it('a chain of small pages gives the buckets of one big page, each page going on at the next bucket', async () => {
    const noisy = pick((s) => !s.isStep && s.badShare > 0.03 && s.step >= 60_000);
    const query = { ...spanOf(noisy), granularity: '1h', aggregates: ALL, treatUncertainAsBad: false };
    const whole = await served(noisy, { ...query, limit: 10_000 }, 'Europe/Oslo');
    const paged = await served(noisy, { ...query, limit: 7 }, 'Europe/Oslo');
    expect(whole.requests).toBe(1);
    expect(paged.requests).toBe(Math.ceil(whole.buckets.length / 7));
    expect(paged.buckets).toEqual(whole.buckets);
    // The first page's cursor goes on at the eighth bucket.
    const [first] = await answerItems(sim, { items: [{ id: noisy.id, ...query, limit: 7 }], timeZone: 'Europe/Oslo' }, AUTH);
    const [second] = await answerItems(sim, {
      items: [{ id: noisy.id, ...query, limit: 7, cursor: first?.nextCursor }],
      timeZone: 'Europe/Oslo',
    }, AUTH);
    expect(second?.datapoints[0]?.timestamp).toBe(whole.buckets[7]?.timestamp);
  });

  it('refuses a cursor with another time zone', async () => {
    const noisy = pick((s) => !s.isStep && s.badShare > 0.03 && s.step >= 60_000);
    const query = { id: noisy.id, ...spanOf(noisy), granularity: '1h', aggregates: ['count'], limit: 3 };
    const [first] = await answerItems(sim, { items: [query], timeZone: 'Europe/Oslo' }, AUTH);
    const reply = await postPoints(sim, { items: [{ ...query, cursor: first?.nextCursor }], timeZone: 'UTC+05:30' }, AUTH);
    expect(reply.status, reply.text).toBe(400);
    expect(reply.text).toContain("'items[0].cursor'");
  });
});
