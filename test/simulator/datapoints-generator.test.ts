import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createDataset, type Dataset } from '../../src/simulator/index.js';
import { allPoints, categoryOf } from '../support/datapoints.js';
import { indexes } from '../support/items.js';

/**
 * The datapoints generator on its own: points generated on demand from the seed, spread unevenly
 * over the series, with irregular, strictly increasing timestamps found in O(1), values that
 * follow the series' kind, and a share of bad and uncertain points shaped as the platform sends them.
 */
/** The start time every dataset here is made at: the series' points are laid out around it. */
const START = Date.UTC(2026, 0, 1);

function dataset(seed: number, timeseries: number, datapoints: number): Dataset {
  return createDataset({ seed, assets: 10, events: 0, timeseries, datapoints, clock: { now: () => START } });
}

const data = dataset(5, 400, 400_000);
const everySeries = indexes(400).map((index) => ({ index, series: data.datapoints.series(index) }));

describe('datapoints generator', () => {
  it('is deterministic: the same seed gives the same points, another seed others', () => {
    const again = dataset(5, 400, 400_000);
    const other = dataset(6, 400, 400_000);
    for (const index of [0, 7, 199, 399]) {
      expect(allPoints(again.datapoints.series(index))).toEqual(allPoints(data.datapoints.series(index)));
    }
    const longest = everySeries.reduce((a, b) => (b.series.count > a.series.count ? b : a));
    const theirs = allPoints(other.datapoints.series(longest.index));
    expect(theirs).not.toEqual(allPoints(longest.series));
  });

  it.each([
    [400, 400_000],
    [1, 5_000_000],
    [20, 1000],
    [20_000, 100_000],
    [1000, 0],
    [7, 3],
  ])('spreads the points exactly over %i series (%i points): a few long, many short, some empty', (count, total) => {
    const set = dataset(9, count, total).datapoints;
    const counts = indexes(count).map((index) => set.countOf(index));
    expect(counts.every((points) => Number.isInteger(points) && points >= 0)).toBe(true);
    expect(counts.reduce((sum, points) => sum + points, 0)).toBe(total);
    if (count >= 20 && total >= 1000) {
      const sorted = [...counts].sort((a, b) => a - b);
      expect(sorted.filter((points) => points === 0).length).toBeGreaterThanOrEqual(Math.floor(count * 0.05));
      expect(sorted.at(-1)).toBeGreaterThan(total / 20);
      expect(sorted[Math.floor(count / 2)]).toBeLessThan(total / count);
    }
  });

  it('scatters the long series over the collection instead of putting them first', () => {
    const longest = [...everySeries].sort((a, b) => b.series.count - a.series.count).slice(0, 8);
    const spread = Math.max(...longest.map(({ index }) => index)) - Math.min(...longest.map(({ index }) => index));
    expect(spread).toBeGreaterThan(200);
  });

  it('gives every series unique, strictly increasing timestamps within the platform\'s range, some before 1970', () => {
    let negative = 0;
    const faults: string[] = [];
    for (const { index, series } of everySeries) {
      let previous = -Infinity;
      for (let k = 0; k < series.count; k++) {
        const timestamp = series.timestampOf(k);
        if (!Number.isSafeInteger(timestamp) || timestamp <= previous) faults.push(`series ${index} point ${k}`);
        previous = timestamp;
        if (timestamp < 0) negative++;
      }
      if (series.count > 0 && (series.timestampOf(0) < Date.UTC(1900, 0, 1) || previous >= Date.UTC(2100, 0, 1))) {
        faults.push(`series ${index} out of range`);
      }
    }
    expect(faults).toEqual([]);
    expect(negative).toBeGreaterThan(0);
  });

  it('has irregular timestamps: the gaps of a long series vary', () => {
    const longest = everySeries.reduce((a, b) => (b.series.count > a.series.count ? b : a)).series;
    const gaps = new Set(indexes(1000).map((k) => longest.timestampOf(k + 1) - longest.timestampOf(k)));
    expect(gaps.size).toBeGreaterThan(100);
  });

  it('finds the first point at or after any time, as a search over all points would', () => {
    const nonEmpty = everySeries.filter(({ series }) => series.count > 0).map(({ series }) => series);
    // Where in the series to look, as a share of it; a little outside it too, before and after.
    const share = fc.double({ min: -0.01, max: 1.01, noNaN: true });
    fc.assert(
      fc.property(fc.nat(nonEmpty.length - 1), share, fc.integer({ min: -1, max: 1 }), (which, at, nudge) => {
        const series = nonEmpty[which]!;
        const last = series.timestampOf(series.count - 1);
        const around = series.timestampOf(Math.min(series.count - 1, Math.floor(at * series.count)));
        const time = at < 0 || at > 1 ? Math.round(series.first + at * (last - series.first)) : around + nudge;
        let expected = 0;
        while (expected < series.count && series.timestampOf(expected) < time) expected++;
        expect(series.indexAtOrAfter(time)).toBe(expected);
      }),
      { numRuns: 300, seed: 42 },
    );
  });

  it('reads any window of a series of 5 million points without generating the points before it', () => {
    const series = dataset(3, 1, 5_000_000).datapoints.series(0);
    expect(series.count).toBe(5_000_000);
    const k = 4_321_987;
    const time = series.timestampOf(k);
    expect(series.window(time, time + 1)).toEqual({ from: k, to: k + 1 });
    expect(series.window(time + 1, series.timestampOf(k + 10))).toEqual({ from: k + 1, to: k + 10 });
    const afterLast = series.timestampOf(series.count - 1) + 1;
    expect(series.window(afterLast, Date.UTC(2100, 0, 1))).toEqual({ from: 5_000_000, to: 5_000_000 });
  });

  it('follows each series\' kind: string series have strings, numeric series numbers, step series hold levels', () => {
    const kinds = { string: 0, step: 0, numeric: 0 };
    for (const { index, series } of everySeries.filter(({ series }) => series.count >= 200)) {
      const { isString, isStep } = data.timeseries.item(index);
      expect(series.isString).toBe(isString);
      const good = allPoints(series).filter((point) => categoryOf(point) === 'good');
      if (isString) {
        kinds.string++;
        expect(good.every((point) => typeof point.value === 'string')).toBe(true);
        continue;
      }
      expect(good.every((point) => typeof point.value === 'number' && Number.isFinite(point.value))).toBe(true);
      const distinct = new Set(good.map((point) => point.value)).size;
      if (isStep) {
        kinds.step++;
        expect(distinct).toBeLessThanOrEqual(5);
      } else {
        kinds.numeric++;
        expect(distinct).toBeGreaterThan(5);
      }
    }
    expect(kinds.string).toBeGreaterThan(0);
    expect(kinds.step).toBeGreaterThan(0);
    expect(kinds.numeric).toBeGreaterThan(0);
  });

  it('has bad and uncertain points shaped as the platform sends them', () => {
    const seen = { nonFinite: new Set<unknown>(), badString: 0, badWithoutValue: 0, uncertain: 0, badFinite: 0 };
    const faults: string[] = [];
    for (const { index, series } of everySeries) {
      allPoints(series).forEach((point, k) => {
        const category = categoryOf(point);
        const where = `series ${index} point ${k}: ${JSON.stringify(point)}`;
        if (category === 'good') {
          if (point.status !== undefined || point.value === undefined) faults.push(where);
          return;
        }
        if (!(point.status?.symbol ?? '').startsWith(category === 'bad' ? 'Bad' : 'Uncertain')) faults.push(where);
        const finite = typeof point.value === 'number' && Number.isFinite(point.value);
        if (category === 'uncertain') {
          seen.uncertain++;
          if (series.isString ? typeof point.value !== 'string' : !finite) faults.push(where);
        } else if (series.isString) {
          seen.badString++;
          if (point.value === undefined) seen.badWithoutValue++;
        } else if (typeof point.value === 'string') {
          seen.nonFinite.add(point.value);
        } else if (finite) {
          seen.badFinite++;
        } else {
          faults.push(where);
        }
      });
    }
    expect(faults).toEqual([]);
    expect([...seen.nonFinite].sort()).toEqual(['-Infinity', 'Infinity', 'NaN']);
    expect(seen.badFinite).toBeGreaterThan(0);
    expect(seen.badWithoutValue).toBeGreaterThan(0);
    expect(seen.badWithoutValue).toBeLessThan(seen.badString);
    expect(seen.uncertain).toBeGreaterThan(0);
  });
});
