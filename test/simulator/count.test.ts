import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Countable, COUNT_SAMPLE_SIZE, countMatching } from '../../src/simulator/count.js';

interface Filter {
  /** Matches the indexes divisible by this. */
  every?: number;
}

/**
 * A collection of `count` items where item i matches `{ every: k }` when k divides i; counts calls
 * and throws on an index outside the collection.
 */
function collection(count: number): Countable<Filter> & { calls: number } {
  return {
    count,
    calls: 0,
    matches(index, filter) {
      this.calls++;
      if (!Number.isInteger(index) || index < 0 || index >= count) throw new RangeError(`index ${index} of ${count}`);
      return filter.every === undefined || index % filter.every === 0;
    },
  };
}

describe('countMatching', () => {
  it('without a filter: the size of the collection, exact, examining nothing', () => {
    const set = collection(10_000_000);
    expect(countMatching(set, {})).toBe(10_000_000);
    expect(set.calls).toBe(0);
  });

  it(`a filtered count over at most ${COUNT_SAMPLE_SIZE} items is exact`, () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: COUNT_SAMPLE_SIZE }), fc.integer({ min: 1, max: 50 }), (count, every) => {
        const set = collection(count);
        expect(countMatching(set, { every })).toBe(Math.ceil(count / every));
        expect(set.calls).toBe(count);
      }),
      { numRuns: 30 },
    );
  });

  it(`over more items: an estimate from ${COUNT_SAMPLE_SIZE} evenly spaced items, whatever the size`, () => {
    const set = collection(10_000_000);
    const estimate = countMatching(set, { every: 3 });
    expect(set.calls).toBe(COUNT_SAMPLE_SIZE);
    expect(Math.abs(estimate - 10_000_000 / 3) / (10_000_000 / 3)).toBeLessThan(0.01);
  });

  it('an estimate is deterministic and stays within [0, size]', () => {
    const sizes = fc.integer({ min: COUNT_SAMPLE_SIZE + 1, max: 1e9 });
    fc.assert(
      fc.property(sizes, fc.integer({ min: 1, max: 1000 }), (count, every) => {
        const first = countMatching(collection(count), { every }, 100);
        expect(countMatching(collection(count), { every }, 100)).toBe(first);
        expect(first).toBeGreaterThanOrEqual(0);
        expect(first).toBeLessThanOrEqual(count);
      }),
    );
  });

  it('a filter nothing matches counts 0, one everything matches counts the size; rare matches may count 0', () => {
    // Only item 0 matches, and the sample does not hold it: the count is approximate, as documented.
    expect(countMatching(collection(1_000_000), { every: 2_000_000 })).toBe(0);
    expect(countMatching({ count: 1_000_000, matches: () => false }, { every: 1 })).toBe(0);
    expect(countMatching(collection(1_000_000), { every: 1 })).toBe(1_000_000);
  });
});
