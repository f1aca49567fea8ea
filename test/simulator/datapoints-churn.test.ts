import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIN_POINT_TIME } from '../../src/resources/index.js';
import {
  createDataset,
  type Datapoint,
  type DatapointChange,
  type Dataset,
  type Simulator,
  startSimulator,
} from '../../src/simulator/index.js';
import { allPoints, answerItems, drainQueries, expectedAggregates, expectedRawPoints } from '../support/datapoints.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';
import { indexes } from '../support/items.js';

/**
 * `--churn` on the datapoints: late points, corrected values and deleted ranges, drawn from the
 * seed and applied as the clock passes their times. The truth is recomputed here the long way:
 * the series as generated (a simulator without churn, same seed and start) with the log of the
 * changes replayed over it; every reader of the simulator (raw points, aggregates, outside points,
 * cursor chains, `series(i)`) must see that.
 */
const API_KEY = 'datapoints-churn-key-1';
const AUTH = { 'api-key': API_KEY };
const SERIES = 8;
const RATE = 20;
const EVERY_POINT = { includeStatus: true, ignoreBadDataPoints: false };

let clock: FakeClock;
let sim: Simulator;
/** The same series without churn: what was generated. */
let generated: Dataset;

beforeAll(async () => {
  clock = createFakeClock();
  const options = { seed: 21, timeseries: SERIES, datapoints: 40_000, apiKeys: [API_KEY], clock };
  sim = await startSimulator({ ...options, churn: RATE });
  generated = createDataset({ ...sim.config, churn: 0, clock });
  clock.advance(30_000);
});

afterAll(async () => {
  await sim.close();
});

/** The series' points with the changes replayed in order over the generated ones. */
function replayed(base: readonly Datapoint[], changes: readonly DatapointChange[]): Datapoint[] {
  let points = [...base];
  for (const change of changes) {
    if ('delete' in change) {
      const { inclusiveBegin, exclusiveEnd } = change.delete;
      points = points.filter((point) => point.timestamp < inclusiveBegin || point.timestamp >= exclusiveEnd);
      continue;
    }
    for (const upsert of change.upserts) {
      points = [...points.filter((point) => point.timestamp !== upsert.timestamp), upsert];
    }
    points.sort((a, b) => a.timestamp - b.timestamp);
  }
  return points;
}

/** Each change of the log by kind: a late point where there was none, a corrected one, or a deleted range. */
function kindsOf(log: readonly DatapointChange[]): { late: number; corrected: number; deleted: number } {
  const kinds = { late: 0, corrected: 0, deleted: 0 };
  const state = new Map<number, Set<number>>();
  const timesOf = (series: number) => {
    let times = state.get(series);
    if (times === undefined) {
      times = new Set(allPoints(generated.datapoints.series(series)).map((point) => point.timestamp));
      state.set(series, times);
    }
    return times;
  };
  for (const change of log) {
    const times = timesOf(change.series);
    if ('delete' in change) {
      kinds.deleted++;
      for (const time of [...times]) {
        if (time >= change.delete.inclusiveBegin && time < change.delete.exclusiveEnd) times.delete(time);
      }
      continue;
    }
    const [first] = change.upserts;
    if (first !== undefined && times.has(first.timestamp)) kinds.corrected++;
    else kinds.late++;
    for (const upsert of change.upserts) times.add(upsert.timestamp);
  }
  return kinds;
}

const changesOf = (index: number) => sim.dataset.datapoints.changes().filter((change) => change.series === index);

describe('--churn on datapoints', () => {
  it('applies RATE changes a second as the clock passes them, late points half, corrections 30%, deletes 20%', () => {
    const log = sim.dataset.datapoints.changes();
    expect(log.length).toBeGreaterThan(RATE * 30 * 0.9);
    expect(log.length).toBeLessThanOrEqual(RATE * 30);
    const times = log.map((change) => change.appliedAt);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(times.every((time) => time > clock.now() - 30_000 && time <= clock.now())).toBe(true);
    const kinds = kindsOf(log);
    expect(kinds.late / log.length).toBeGreaterThan(0.42);
    expect(kinds.late / log.length).toBeLessThan(0.58);
    expect(kinds.corrected / log.length).toBeGreaterThan(0.22);
    expect(kinds.corrected / log.length).toBeLessThan(0.38);
    expect(kinds.deleted / log.length).toBeGreaterThan(0.13);
    expect(kinds.deleted / log.length).toBeLessThan(0.27);
    // Every upsert and every range lies in the past of its change.
    for (const change of log) {
      const written = 'delete' in change ? [] : change.upserts.map((point) => point.timestamp);
      const latest = 'delete' in change ? change.delete.exclusiveEnd : Math.max(...written);
      expect(latest).toBeLessThanOrEqual(change.appliedAt);
    }
  });

  it('is deterministic: the same seed, rate and times give the same changes, another seed others', () => {
    const again = createFakeClock(clock.now() - 30_000);
    const twin = createDataset({ ...sim.config, clock: again });
    const otherClock = createFakeClock(clock.now() - 30_000);
    const other = createDataset({ ...sim.config, seed: 22, clock: otherClock });
    again.advance(30_000);
    otherClock.advance(30_000);
    expect(twin.datapoints.changes()).toEqual(sim.dataset.datapoints.changes());
    expect(other.datapoints.changes()).not.toEqual(sim.dataset.datapoints.changes());
    for (const index of indexes(SERIES)) {
      expect(allPoints(twin.datapoints.series(index))).toEqual(allPoints(sim.dataset.datapoints.series(index)));
    }
  });

  it('series(i) is the generated series with the log replayed over it, and the API serves exactly that', async () => {
    let changed = 0;
    for (const index of indexes(SERIES)) {
      const truth = replayed(allPoints(generated.datapoints.series(index)), changesOf(index));
      const series = sim.dataset.datapoints.series(index);
      expect(allPoints(series), `series ${index}`).toEqual(truth);
      if (changesOf(index).length > 0) changed++;
      const id = sim.dataset.timeseries.idOf(index);
      const end = clock.now();
      const everyQuery = { id, start: MIN_POINT_TIME, end, limit: 3000, ...EVERY_POINT };
      const every = await drainQueries(sim, { items: [everyQuery] }, AUTH);
      expect(every.points[0], `series ${index}, every point`).toEqual(truth);
      const good = await drainQueries(sim, { items: [{ id, start: 0, end, limit: 3000 }] }, AUTH);
      expect(good.points[0], `series ${index}, Good points`).toEqual(expectedRawPoints(series, 0, end));
      if (sim.dataset.timeseries.item(index).isString) continue;
      const query = { start: 0, end, granularity: '1h' };
      const aggregates = ['count', 'sum', 'min', 'max', 'average'];
      const buckets = await drainQueries(sim, { ...query, items: [{ id, aggregates, limit: 10_000 }] }, AUTH);
      expect(buckets.points[0], `series ${index}, aggregates`).toEqual(expectedAggregates(series, query));
    }
    expect(changed).toBeGreaterThan(SERIES / 2);
  });

  it('shows a late point in a read of its past window and a corrected value where the old one was', async () => {
    const final = new Map(indexes(SERIES).map((index) => [index, allPoints(sim.dataset.datapoints.series(index))]));
    const kept = (index: number, point: Datapoint) =>
      final.get(index)?.some((one) => JSON.stringify(one) === JSON.stringify(point));
    let read = 0;
    let unlike = 0;
    for (const change of sim.dataset.datapoints.changes().slice(0, 60)) {
      if ('delete' in change) continue;
      const id = sim.dataset.timeseries.idOf(change.series);
      const base = generated.datapoints.series(change.series);
      for (const upsert of change.upserts.filter((point) => kept(change.series, point))) {
        const window = { start: upsert.timestamp, end: upsert.timestamp + 1 };
        const [item] = await answerItems(sim, { items: [{ id, ...window, ...EVERY_POINT }] }, AUTH);
        expect(item?.datapoints).toEqual([upsert]);
        read++;
        const before = base.window(window.start, window.end);
        const old = before.to > before.from ? base.point(before.from) : undefined;
        if (old !== undefined && JSON.stringify(old) !== JSON.stringify(upsert)) unlike++;
      }
    }
    expect(read).toBeGreaterThan(20);
    expect(unlike, 'corrections that changed a value or a status').toBeGreaterThan(0);
  });

  it('leaves a deleted range empty, and includeOutsidePoints reaches over it', async () => {
    let checked = 0;
    for (const change of sim.dataset.datapoints.changes()) {
      if (!('delete' in change)) continue;
      const { inclusiveBegin: start, exclusiveEnd: end } = change.delete;
      const series = sim.dataset.datapoints.series(change.series);
      const inside = series.window(start, end);
      // Points written into the range later are there again: check the ranges left empty.
      if (inside.to > inside.from) continue;
      const id = sim.dataset.timeseries.idOf(change.series);
      const query = { id, start, end, ...EVERY_POINT };
      const [plain] = await answerItems(sim, { items: [query] }, AUTH);
      expect(plain?.datapoints).toEqual([]);
      const [outside] = await answerItems(sim, { items: [{ ...query, includeOutsidePoints: true }] }, AUTH);
      const around = [inside.from - 1, inside.from]
        .filter((k) => k >= 0 && k < series.count)
        .map((k) => series.point(k));
      expect(outside?.datapoints).toEqual(around);
      expect(around.length).toBeGreaterThan(0);
      checked++;
    }
    expect(checked).toBeGreaterThan(20);
  });
});

describe('a cursor chain while --churn changes the series', () => {
  let at: FakeClock;
  let busy: Simulator;

  beforeAll(async () => {
    at = createFakeClock();
    const options = { seed: 23, timeseries: 3, datapoints: 30_000, churn: 50, apiKeys: [API_KEY], clock: at };
    busy = await startSimulator(options);
  });

  afterAll(async () => {
    await busy.close();
  });

  it('serves each point once, as it was when its page was read: changes ahead of the cursor come', async () => {
    const start = at.now();
    const { datapoints } = busy.dataset;
    const index = indexes(3).sort((a, b) => datapoints.countOf(b) - datapoints.countOf(a))[0] ?? 0;
    const id = busy.dataset.timeseries.idOf(index);
    const query = { id, start: MIN_POINT_TIME, end: start, limit: 300, ...EVERY_POINT };
    const served: Datapoint[] = [];
    /** Where the chain stood after each page: the time of the next point then (Infinity at the end). */
    const positions: { time: number; position: number }[] = [];
    let cursor: string | undefined;
    do {
      const items = [{ ...query, ...(cursor === undefined ? {} : { cursor }) }];
      const [item] = await answerItems(busy, { items }, AUTH);
      const page = (item?.datapoints ?? []) as unknown as Datapoint[];
      const state = allPoints(busy.dataset.datapoints.series(index)).filter((point) => point.timestamp < start);
      const byTime = new Map(state.map((point) => [point.timestamp, JSON.stringify(point)]));
      expect(page.filter((point) => byTime.get(point.timestamp) !== JSON.stringify(point))).toEqual([]);
      served.push(...page);
      const last = served.at(-1)?.timestamp ?? -Infinity;
      const next = state.find((point) => point.timestamp > last);
      positions.push({ time: at.now(), position: next?.timestamp ?? Infinity });
      cursor = item?.nextCursor;
      at.advance(1000);
    } while (cursor !== undefined);
    expect(positions.length).toBeGreaterThan(20);
    const times = served.map((point) => point.timestamp);
    const ascending = times.every((time, k) => k === 0 || time > (times[k - 1] ?? Infinity));
    expect(ascending, 'each point once, in order').toBe(true);

    const log = busy.dataset.datapoints.changes().filter((change) => change.series === index);
    const final = allPoints(busy.dataset.datapoints.series(index)).filter((point) => point.timestamp < start);
    const finalTimes = new Set(final.map((point) => point.timestamp));
    const servedTimes = new Set(times);
    const positionAt = (time: number) => positions.findLast((one) => one.time < time)?.position ?? -Infinity;
    let ahead = 0;
    let behind = 0;
    for (const change of log) {
      if ('delete' in change) continue;
      for (const { timestamp } of change.upserts) {
        if (timestamp >= start || !finalTimes.has(timestamp)) continue;
        if (timestamp >= positionAt(change.appliedAt)) {
          expect(servedTimes.has(timestamp), `upsert at ${timestamp} ahead of the cursor`).toBe(true);
          ahead++;
        } else if (!served.some((point) => point.timestamp === timestamp)) {
          behind++;
        }
      }
    }
    expect(ahead).toBeGreaterThan(0);
    expect(behind, 'late points written behind the cursor, not served').toBeGreaterThan(0);
    // Every point no change touched is served.
    const touched = (time: number) =>
      log.some((change) =>
        'delete' in change
          ? time >= change.delete.inclusiveBegin && time < change.delete.exclusiveEnd
          : change.upserts.some((point) => point.timestamp === time));
    const untouched = final.filter((point) => !touched(point.timestamp));
    expect(untouched.filter((point) => !servedTimes.has(point.timestamp))).toEqual([]);
    expect(untouched.length).toBeGreaterThan(1000);
  });
});
