import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDataset, type Dataset, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { allPoints, drainQueries, expectedRawPoints } from '../support/datapoints.js';
import { createFakeClock, type FakeClock } from '../support/fake-clock.js';
import { indexes } from '../support/items.js';

/**
 * Where the simulator's datapoints lie in time: around its start (the clock's now when it starts),
 * live series up to now and on as the clock moves, stopped ones ending before, empty ones empty;
 * exactly `--datapoints N` points at the start; the same seed and start giving the same points.
 */
const API_KEY = 'datapoints-time-key-1';
const AUTH = { 'api-key': API_KEY };
const DAY = 86_400_000;
const HOUR = 3_600_000;
const SERIES = 2000;
const POINTS = 400_000;

let clock: FakeClock;
let start: number;
let data: Dataset;

/** A dataset made at the clock's now, its clock the one given (which tests may move). */
function dataset(seed: number, at: FakeClock, series = SERIES, points = POINTS): Dataset {
  return createDataset({ seed, assets: 10, events: 0, timeseries: series, datapoints: points, clock: at });
}

beforeAll(() => {
  clock = createFakeClock();
  start = clock.now();
  data = dataset(11, clock);
});

describe('datapoints in time', () => {
  it('holds exactly N points at the start, every one before it', () => {
    let total = 0;
    let late = 0;
    for (const index of indexes(SERIES)) {
      const series = data.datapoints.series(index);
      expect(series.count, `series ${index}`).toBe(data.datapoints.countOf(index));
      total += series.count;
      if (series.count > 0 && series.timestampOf(series.count - 1) >= start) late++;
    }
    expect(total).toBe(POINTS);
    expect(late).toBe(0);
  });

  it('has live series up to now, stopped ones 1 day to 2 years before, empty ones, a few across 1970', () => {
    const kinds = { live: 0, stopped: 0, historical: 0, empty: 0 };
    const faults: string[] = [];
    for (const index of indexes(SERIES)) {
      const series = data.datapoints.series(index);
      if (series.count === 0) {
        kinds.empty++;
        continue;
      }
      const last = series.timestampOf(series.count - 1);
      if (series.live) {
        kinds.live++;
        // Its last slot before the start ends at the start.
        if (last < start - series.step) faults.push(`live series ${index} ends at ${new Date(last).toISOString()}`);
      } else if (series.timestampOf(0) < 0) {
        kinds.historical++;
      } else {
        kinds.stopped++;
        if (last >= start - DAY || last < start - 2 * 365 * DAY - series.step) faults.push(`stopped series ${index}`);
      }
    }
    expect(faults).toEqual([]);
    const withPoints = SERIES - kinds.empty;
    expect(kinds.empty).toBe(SERIES * 0.05);
    expect(kinds.live / withPoints).toBeGreaterThan(0.64);
    expect(kinds.live / withPoints).toBeLessThan(0.74);
    expect(kinds.stopped / withPoints).toBeGreaterThan(0.25);
    expect(kinds.stopped / withPoints).toBeLessThan(0.34);
    expect(kinds.historical).toBeGreaterThan(10);
    expect(kinds.historical).toBeLessThan(70);
  });

  it('gives every live series points in the last hour and the last 30 days a share of all the points', () => {
    let recent = 0;
    for (const index of indexes(SERIES)) {
      const series = data.datapoints.series(index);
      const lastHour = series.window(start - HOUR, start);
      if (series.live) expect(lastHour.to - lastHour.from, `series ${index}`).toBeGreaterThan(0);
      const { from, to } = series.window(start - 30 * DAY, start);
      recent += to - from;
    }
    expect(recent).toBeGreaterThan(POINTS * 0.02);
  });

  it('adds the points of the live series as the clock moves on, and none to the others', () => {
    const at = createFakeClock(start);
    const moving = dataset(11, at, 400, 100_000);
    const before = indexes(400).map((index) => allPoints(moving.datapoints.series(index)));
    at.advance(HOUR);
    let added = 0;
    for (const index of indexes(400)) {
      const series = moving.datapoints.series(index);
      const now = allPoints(series);
      const old = before[index] ?? [];
      // The points of the start stay as they were; new ones lie in [start, now), one per slot.
      expect(now.slice(0, old.length)).toEqual(old);
      const arrived = now.slice(old.length);
      if (!series.live) expect(arrived).toEqual([]);
      else expect(Math.abs(arrived.length - HOUR / series.step), `series ${index}`).toBeLessThanOrEqual(1);
      expect(arrived.every((point) => point.timestamp >= start && point.timestamp < at.now())).toBe(true);
      expect([...moving.datapoints.arrivedBetween(index, start - DAY, at.now() + DAY)]).toEqual(arrived);
      expect([...moving.datapoints.arrivedBetween(index, start + HOUR / 2, at.now())]).toEqual(
        arrived.filter((point) => point.timestamp >= start + HOUR / 2),
      );
      added += arrived.length;
    }
    expect(added).toBeGreaterThan(1000);
  });

  it('is deterministic for a seed and a start: the same ones give the same points, another start moves them', () => {
    const again = dataset(11, createFakeClock(start));
    const later = dataset(11, createFakeClock(start + 10 * DAY));
    const other = dataset(12, createFakeClock(start));
    for (const index of [0, 7, 199, 1999]) {
      expect(allPoints(again.datapoints.series(index))).toEqual(allPoints(data.datapoints.series(index)));
    }
    const longest = indexes(SERIES).reduce((a, b) => (data.datapoints.countOf(b) > data.datapoints.countOf(a) ? b : a));
    expect(allPoints(other.datapoints.series(longest))).not.toEqual(allPoints(data.datapoints.series(longest)));
    const shifted = later.datapoints.series(longest);
    const series = data.datapoints.series(longest);
    expect(shifted.count).toBe(series.count);
    // Only the few series across 1970 lie where they lie whatever the start.
    expect(shifted.timestampOf(0) - series.timestampOf(0)).toBe(series.timestampOf(0) < 0 ? 0 : 10 * DAY);
  });
});

describe('datapoints in time over HTTP', () => {
  let sim: Simulator;
  let at: FakeClock;

  beforeAll(async () => {
    at = createFakeClock(start);
    sim = await startSimulator({ seed: 11, timeseries: 40, datapoints: 100_000, apiKeys: [API_KEY], clock: at });
  });

  afterAll(async () => {
    await sim.close();
  });

  it('serves no point at or after the start until the clock moves, then the live series\' new points', async () => {
    const live = indexes(40).filter((index) => sim.dataset.datapoints.series(index).live).slice(0, 5);
    expect(live.length).toBe(5);
    const idOf = (index: number) => sim.dataset.timeseries.idOf(index);
    const items = live.map((index) => ({ id: idOf(index), start, end: start + DAY, limit: 1000 }));
    const first = await drainQueries(sim, { items }, AUTH);
    expect(first.points.flat()).toEqual([]);
    at.advance(10 * 60_000);
    const { points } = await drainQueries(sim, { items }, AUTH);
    live.forEach((index, position) => {
      const expected = expectedRawPoints(sim.dataset.datapoints.series(index), start, at.now());
      expect(points[position], `series ${index}`).toEqual(expected);
    });
    expect(points.flat().length).toBeGreaterThan(0);
    const body = { start: '30d-ago', items: items.map(({ id }) => ({ id, limit: 5000 })) };
    const recent = await drainQueries(sim, body, AUTH);
    expect(recent.points.every((some) => some.length > 0)).toBe(true);
  });
});
