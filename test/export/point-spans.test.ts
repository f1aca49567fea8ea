import { describe, expect, it } from 'vitest';
import { PointSpans } from '../../src/export/kinds/datapoints/point-spans.js';

/** Keeps `count` points of one series, timestamps from `first`, each at bytes [k, k + 1) with its value at k. */
function keepSeries(spans: PointSpans, first: number, count: number) {
  for (let k = 0; k < count; k++) spans.keep(k, k + 1, first + k, k);
  return spans.take();
}

describe('PointSpans', () => {
  it('holds the points its queries allow, each series its own', () => {
    // A body that could hold 10,000 points, queries that allow 300.
    const spans = new PointSpans(Buffer.alloc(240_000), 300);
    const lists = [keepSeries(spans, 1000, 100), keepSeries(spans, 5000, 200)];
    expect(lists.map((list) => list.length)).toEqual([100, 200]);
    expect([lists[0]!.timestamp(0), lists[0]!.timestamp(99), lists[1]!.timestamp(0), lists[1]!.timestamp(199)])
      .toEqual([1000, 1099, 5000, 5199]);
    expect(lists[1]!.plainValue(150)).toBe(150);
  });

  it('moves to larger arrays for points shorter than any it expects, the series read before keeping theirs', () => {
    // 100 bytes hold 5 points of 24 bytes: the arrays have the least room (64); 250 points move them twice.
    const spans = new PointSpans(Buffer.alloc(100), 1000);
    const lists = [keepSeries(spans, 0, 50), keepSeries(spans, 10_000, 250), keepSeries(spans, 20_000, 3)];
    expect(lists.map((list) => list.length)).toEqual([50, 250, 3]);
    for (const [i, first] of [0, 10_000, 20_000].entries()) {
      const list = lists[i]!;
      for (let k = 0; k < list.length; k++) expect(list.timestamp(k)).toBe(first + k);
    }
  });
});
