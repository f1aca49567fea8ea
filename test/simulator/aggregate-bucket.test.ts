import { describe, expect, it } from 'vitest';
import type { SourcePoint } from '../../src/simulator/datapoints/aggregate-bucket.js';
import { type PointSource, readBuckets } from '../../src/simulator/datapoints/aggregates.js';
import { bucketGrid, parseGranularity } from '../../src/simulator/datapoints/granularity.js';

/**
 * The simulator's aggregates on the worked examples of the platform's own documentation: the
 * numbers there, not a recomputation.
 */
function source(points: readonly SourcePoint[]): PointSource {
  return {
    from: (time) => points.filter((point) => point.timestamp >= time),
    before: (time) => points.filter((point) => point.timestamp < time).at(-1),
  };
}

function buckets(points: readonly SourcePoint[], granularity: string, flags: { treatUncertainAsBad?: boolean } = {}) {
  const parsed = parseGranularity(granularity, 'granularity');
  if (!parsed.ok) throw new Error(parsed.message);
  const grid = bucketGrid(parsed.value, undefined);
  const query = {
    isStep: false,
    ignoreBadDataPoints: true,
    treatUncertainAsBad: flags.treatUncertainAsBad ?? true,
    end: Number.MAX_SAFE_INTEGER,
    byStatus: true,
  };
  return readBuckets(source(points), query, grid, grid.align(points[0]?.timestamp ?? 0), 100).buckets;
}

describe('aggregates on the platform documentation\'s examples', () => {
  it('status codes page: count, counts by status, average, min, max of five points, uncertain as bad and not', () => {
    // docs.cognite.com/dev/concepts/reference/status_codes, "Retrieving aggregates" (1s granularity).
    const t = 1_620_000_000_000;
    const points: SourcePoint[] = [
      { timestamp: t, value: 1, quality: 'good' },
      { timestamp: t + 1, value: 2, quality: 'good' },
      { timestamp: t + 2, value: 3, quality: 'good', status: { code: 3_145_728, symbol: 'GoodClamped' } },
      { timestamp: t + 3, value: 4, quality: 'uncertain', status: { code: 1_073_741_824, symbol: 'Uncertain' } },
      { timestamp: t + 4, value: 5, quality: 'bad', status: { code: 2_153_809_152, symbol: 'BadBrowseNameInvalid, StructureChanged, Low' } },
    ];
    expect(buckets(points, '1s')).toMatchObject([
      { timestamp: t, count: 3, countGood: 3, countUncertain: 1, countBad: 1, average: 2, min: 1, max: 3 },
    ]);
    expect(buckets(points, '1s', { treatUncertainAsBad: false })).toMatchObject([
      { timestamp: t, count: 4, countGood: 3, countUncertain: 1, countBad: 1, average: 2.5, min: 1, max: 4 },
    ]);
  });

  it('the hourly average of a line into the next hour (the platform\'s forum answer: 0.125)', () => {
    // hub.cognite.com "Timeseries aggregates gives strange results for average": 0 until 04:30, 1 at 05:30.
    const hour = (h: number, m = 0) => Date.UTC(2021, 0, 1, h, m);
    const points: SourcePoint[] = [
      { timestamp: hour(3), value: 0, quality: 'good' },
      { timestamp: hour(3, 30), value: 0, quality: 'good' },
      { timestamp: hour(4), value: 0, quality: 'good' },
      { timestamp: hour(4, 30), value: 0, quality: 'good' },
      { timestamp: hour(5, 30), value: 1, quality: 'good' },
    ];
    const [three, four] = buckets(points, '1h');
    expect(three).toMatchObject({ timestamp: hour(3), average: 0 });
    expect(four).toMatchObject({ timestamp: hour(4), average: 0.125, interpolation: 0, totalVariation: 0.5 });
  });
});
