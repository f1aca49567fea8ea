import { describe, expect, it } from 'vitest';
import { formatProgress, progressMeter, seriesEta } from '../../src/cli/progress.js';
import { RateWindow } from '../../src/util/rate-window.js';
import type { RunHandle, StreamProgress } from '../../src/export/index.js';
import { createFakeClock } from '../support/fake-clock.js';

/**
 * The rates and ETAs of the progress, with a fake clock: rows per second smoothed over a window of
 * ticks (one page landing on one tick does not swing it), and a datapoints stream's ETA from the
 * points per series read so far and the points per second now.
 */
describe('RateWindow', () => {
  it('is the rate over the last 30 s of ticks, not the last tick alone', () => {
    const clock = createFakeClock();
    const rate = new RateWindow(30_000);
    expect(rate.add(clock.now(), 0), 'one sample: no rate yet').toBeUndefined();
    // A page of 1000 rows every 4 ticks of 250 ms: per tick the rate would jump between 0 and 4000/s.
    const seen: number[] = [];
    for (let tick = 1; tick <= 400; tick++) {
      clock.advance(250);
      const got = rate.add(clock.now(), Math.floor(tick / 4) * 1000);
      if (tick > 120) seen.push(got!);
    }
    for (const value of seen) expect(value).toBeGreaterThan(950);
    for (const value of seen) expect(value).toBeLessThan(1050);
  });

  it('follows a change of pace within its window', () => {
    const clock = createFakeClock();
    const rate = new RateWindow(10_000);
    let rows = 0;
    rate.add(clock.now(), rows);
    for (let s = 0; s < 20; s++) {
      clock.advance(1000);
      rows += 500;
      rate.add(clock.now(), rows);
    }
    for (let s = 0; s < 10; s++) {
      clock.advance(1000);
      rows += 2000;
      rate.add(clock.now(), rows);
    }
    clock.advance(1000);
    rows += 2000;
    expect(rate.add(clock.now(), rows), 'the last 10 s were all at 2000/s').toBe(2000);
  });
});

describe('seriesEta', () => {
  it.each([
    ['10 series of 1000 points done, 30 left, 2000 points/s', [10_000, 10, 40, 2000], 15],
    ['no series done yet', [5000, 0, 40, 2000], undefined],
    ['no point coming', [10_000, 10, 40, 0], undefined],
    ['all done', [10_000, 40, 40, 2000], 0],
  ] as const)('%s', (_, [points, series, total, rate], expected) => {
    expect(seriesEta(points, series, total, rate)).toBe(expected);
  });
});

describe('progressMeter and formatProgress', () => {
  /** A run of one datapoints stream and one collection, whose counts the test sets. */
  function fakeRun() {
    const state = { points: 0, events: 0, series: 0, done: 0 };
    const streams = (): StreamProgress[] => [
      { name: 'points', rows: state.points, total: undefined, partitions: 2, done: state.done, series: state.series, seriesTotal: 33 },
      { name: 'events', rows: state.events, total: 100_000, partitions: 1, done: 0 },
    ];
    const run = {
      rows: () => state.points + state.events,
      partitionsDone: () => state.done,
      plans: [],
      client: { stats: { retries: 2 } },
      streams,
    } as unknown as Pick<RunHandle, 'rows' | 'partitionsDone' | 'plans' | 'client' | 'streams'>;
    return { state, run };
  }

  it('a datapoints stream shows points, series done of those selected, a percentage and an ETA; rates are per stream', () => {
    const clock = createFakeClock();
    const { state, run } = fakeRun();
    const snapshot = progressMeter(run, () => clock.now());
    for (let s = 1; s <= 60; s++) {
      clock.advance(1000);
      state.points += 3000;
      state.events += 500;
      if (s % 5 === 0) state.series++;
    }
    const now = snapshot();
    expect(now.streams.map((s) => Math.round(s.rowsPerSecond))).toEqual([3000, 500]);
    expect(now.rowsPerSecond).toBe(3500);
    // 12 series done of 33 with 180,000 points: 15,000 a series, 21 left, at 3000 points/s: 105 s.
    expect(formatProgress(now)).toBe(
      'points 180,000 points, series 12/33 36% ETA 1m45s · events 30,000/100,000 30% ETA 2m20s | 3,500 rows/s, 0/0 partitions done, 2 retries, 1m00s',
    );
    state.series = 33;
    state.done = 2;
    expect(formatProgress(snapshot())).toMatch(/^points 180,000 points, 33 series, all done · /);
  });

  it('a datapoints stream without a count of its series shows the series done', () => {
    const text = formatProgress({
      rows: 10,
      rowsPerSecond: 5,
      partitionsDone: 0,
      partitions: 1,
      retries: 0,
      elapsedSeconds: 2,
      streams: [{ name: 'points', rows: 10, total: undefined, partitions: 1, done: 0, series: 3, rowsPerSecond: 5 }],
    });
    expect(text).toBe('points 10 points, 3 series done | 5 rows/s, 0/1 partitions done, 0 retries, 2s');
  });
});
