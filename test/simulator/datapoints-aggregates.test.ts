import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { answerItems, drainQueries, expectedAggregates, postPoints } from '../support/datapoints.js';
import { createFakeClock } from '../support/fake-clock.js';
import type { Reply } from '../support/http.js';

/**
 * Aggregates of `POST /timeseries/data/list`: count, average, min, max and sum per bucket at every
 * unit of granularity, equal to the brute force of test/support/brute-aggregates.ts over the
 * generator's points, over buckets aligned as the simulator documents; string series and unknown
 * aggregates refused. The other aggregates, time zones and status flags: datapoints-aggregate-meanings.test.ts.
 */
const API_KEY = 'datapoints-agg-key-1';
const AUTH = { 'api-key': API_KEY };
const FIVE = ['count', 'average', 'min', 'max', 'sum'];

let sim: Simulator;
/** Numeric series, the longest first; one with uncertain and bad points; a string series. */
let numeric: number[];
let withStatus: number;
let stringSeries: number;

beforeAll(async () => {
  const clock = createFakeClock();
  sim = await startSimulator({ seed: 5, timeseries: 60, datapoints: 300_000, apiKeys: [API_KEY], clock });
  const indexes = Array.from({ length: 60 }, (_, index) => index).sort(
    (a, b) => sim.dataset.datapoints.countOf(b) - sim.dataset.datapoints.countOf(a),
  );
  const item = (index: number) => sim.dataset.timeseries.item(index);
  numeric = indexes.filter((index) => !item(index).isString && sim.dataset.datapoints.countOf(index) > 0);
  withStatus = numeric.find((index) => sim.dataset.datapoints.series(index).shape.badShare > 0.02) ?? -1;
  stringSeries = indexes.find((index) => item(index).isString) ?? -1;
  expect(withStatus).toBeGreaterThanOrEqual(0);
  expect(stringSeries).toBeGreaterThanOrEqual(0);
});

afterAll(async () => {
  await sim.close();
});

const idOf = (index: number) => sim.dataset.timeseries.idOf(index);
const seriesOf = (index: number) => sim.dataset.datapoints.series(index);

function message(reply: Reply): string {
  expect(reply.status, reply.text).toBe(400);
  return reply.json<{ error: { message: string } }>().error.message;
}

/** A window over the middle of a series, its start and end off any bucket boundary. */
function middleWindow(index: number, share: number): { start: number; end: number } {
  const series = seriesOf(index);
  const first = series.timestampOf(0);
  const last = series.timestampOf(series.count - 1);
  const span = last - first;
  return {
    start: first + Math.floor(span * (0.5 - share / 2)) + 12_345,
    end: first + Math.floor(span * (0.5 + share / 2)) + 6789,
  };
}

describe('POST /timeseries/data/list: aggregates', () => {
  it.each(['1s', '30s', '1m', '15m', '1h', '3h', '1d', '7d', '1mo', '2mo'])(
    'at %s, equal a recomputation from the raw points, over several series, following the cursors',
    async (granularity) => {
      const series = numeric.slice(0, 4).concat(withStatus);
      const items = series.map((index, position) => ({
        id: idOf(index),
        ...middleWindow(index, position === 0 ? 1.2 : 0.5),
        aggregates: FIVE,
        granularity,
        limit: 1999,
      }));
      const { points } = await drainQueries(sim, { items }, AUTH);
      series.forEach((index, position) => {
        const { start, end } = items[position] ?? { start: 0, end: 0 };
        const expected = expectedAggregates(seriesOf(index), { start, end, granularity });
        expect(expected.length).toBeGreaterThan(0);
        expect(points[position], `series ${index}`).toEqual(expected);
      });
    },
  );

  it('rounds start down to a whole unit and lets the last bucket run past end', async () => {
    const index = numeric[0] ?? -1;
    const series = seriesOf(index);
    const time = series.timestampOf(Math.floor(series.count / 2));
    const hour = Math.floor(time / 3_600_000) * 3_600_000;
    const [item] = await answerItems(sim, {
      items: [{ id: idOf(index), start: hour + 1_800_000, end: hour + 3 * 3_600_000 + 1, aggregates: ['count'], granularity: '3h' }],
    }, AUTH);
    expect(item?.datapoints.map((point) => point.timestamp)).toEqual([hour, hour + 3 * 3_600_000]);
    const inHours = (from: number, to: number) => {
      let count = 0;
      for (let k = 0; k < series.count; k++) {
        const at = series.timestampOf(k);
        if (at >= from && at < to && series.qualityOf(k) === 'good') count++;
      }
      return count;
    };
    expect(item?.datapoints[1]?.count).toBe(inHours(hour + 3 * 3_600_000, hour + 6 * 3_600_000));
  });

  it('answers only the aggregates asked, in the platform\'s order', async () => {
    const [item] = await answerItems(sim, {
      items: [{ id: idOf(numeric[0] ?? -1), aggregates: ['sum', 'min'], granularity: '1d', limit: 3 }],
    }, AUTH);
    expect(item?.datapoints).toHaveLength(3);
    for (const point of item?.datapoints ?? []) expect(Object.keys(point)).toEqual(['timestamp', 'min', 'sum']);
  });

  it('counts bad points never and uncertain ones only with treatUncertainAsBad false; ignoreBadDataPoints changes only the average', async () => {
    const window = middleWindow(withStatus, 1.2);
    const query = { id: idOf(withStatus), ...window, aggregates: FIVE, granularity: '1h', limit: 2000 };
    const items = [query, { ...query, treatUncertainAsBad: false }, { ...query, ignoreBadDataPoints: false }];
    const { points } = await drainQueries(sim, { items }, AUTH);
    const [strict = [], lenient = [], keepingBad = []] = points;
    const base = { ...window, granularity: '1h' };
    expect(strict).toEqual(expectedAggregates(seriesOf(withStatus), base));
    expect(lenient).toEqual(expectedAggregates(seriesOf(withStatus), { ...base, treatUncertainAsBad: false }));
    expect(keepingBad).toEqual(expectedAggregates(seriesOf(withStatus), { ...base, ignoreBadDataPoints: false }));
    // The interpolated function stops at bad points: the averages of some buckets change, nothing else.
    const without = (list: Record<string, unknown>[]) => list.map(({ average: _average, ...rest }) => rest);
    expect(without(keepingBad)).toEqual(without(strict));
    expect(keepingBad.filter((point, i) => point.average !== strict[i]?.average).length).toBeGreaterThan(0);
    const total = (list: Record<string, unknown>[]) => list.reduce((sum, point) => sum + (point.count as number), 0);
    expect(total(lenient)).toBeGreaterThan(total(strict));
  });

  it('refuses aggregates of a string series, naming it', async () => {
    const externalId = sim.dataset.timeseries.item(stringSeries).externalId;
    const ref = externalId === undefined ? { id: idOf(stringSeries) } : { externalId };
    const text = message(await postPoints(sim, {
      items: [{ id: idOf(numeric[0] ?? -1) }, { ...ref, aggregates: ['count'], granularity: '1h' }],
    }, AUTH));
    expect(text).toBe(
      `Invalid property 'items[1].aggregates': time series ${JSON.stringify(ref)} is a string series; aggregates exist for numeric series only.`,
    );
  });

  it.each([
    ['0s', false],
    ['120s', true],
    ['121s', false],
    ['120m', true],
    ['121m', false],
    ['100000h', true],
    ['100001d', false],
    ['100000mo', true],
    ['1y', false],
  ])('takes granularity %s only within the platform\'s bounds (%s)', async (granularity, ok) => {
    const reply = await postPoints(sim, { items: [{ id: idOf(numeric[0] ?? -1), aggregates: ['max'], granularity, limit: 2 }] }, AUTH);
    if (ok) expect(reply.status, reply.text).toBe(200);
    else expect(message(reply)).toContain("Invalid property 'items[0].granularity'");
  });

  it('refuses an aggregate the platform does not have, listing the platform\'s', async () => {
    const text = message(await postPoints(sim, { aggregates: ['median'], granularity: '1h', items: [{ id: idOf(numeric[0] ?? -1) }] }, AUTH));
    expect(text).toBe(
      "Invalid property 'aggregates': unknown aggregate \"median\". The platform's aggregates: average, max, min, count, sum, interpolation, stepInterpolation, totalVariation, continuousVariance, discreteVariance, countGood, countUncertain, countBad, durationGood, durationUncertain, durationBad, maxDatapoint, minDatapoint.",
    );
  });

  it('refuses more than 10,000 aggregates in total, naming the limit', async () => {
    const query = { id: idOf(numeric[0] ?? -1), aggregates: ['count'], granularity: '1h' };
    const over = [{ ...query, limit: 6000 }, { ...query, limit: 4001 }];
    const text = message(await postPoints(sim, { items: over }, AUTH));
    expect(text).toContain("Invalid property 'limit': the aggregate queries' limits add up to 10001");
    const full = [{ ...query, limit: 10_000 }, { id: idOf(numeric[1] ?? -1), limit: 100_000 }];
    const both = await postPoints(sim, { items: full }, AUTH);
    expect(both.status, both.text).toBe(200);
  });
});
