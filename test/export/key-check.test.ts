import { describe, expect, it } from 'vitest';
import { KeyCheck } from '../../src/export/check/key-check.js';
import type { KeyValue } from '../../src/export/check/verify-shard.js';

/** Keys 0..n-1, then `repeats` of them again, shuffled by a fixed stride so buckets see them out of order. */
function keys(n: number, repeats: readonly KeyValue[]): KeyValue[] {
  const all = Array.from({ length: n }, (_, i) => (i * 7919) % n);
  return [...all, ...repeats];
}

function check(expectedRows: number, values: readonly (KeyValue | undefined)[], bucketKeys = 100) {
  const keyCheck = new KeyCheck(expectedRows, bucketKeys);
  for (const value of values) keyCheck.add(value);
  return keyCheck;
}

describe('KeyCheck', () => {
  it.each([
    ['in one set (a small stream)', 50],
    ['in buckets on disk (a stream larger than a bucket)', 1000],
    ['in buckets after all (a stream that said it was small, then grew past twice a bucket)', 10],
  ])('%s: finds every repeated row and nothing else', async (_, expectedRows) => {
    const keyCheck = check(expectedRows, keys(1000, [3, 3, 999, 'x']));
    try {
      const report = keyCheck.finish();
      expect(report).toMatchObject({ keys: 1004, missing: 0, repeated: 3 });
      expect(report.examples).toEqual(expect.arrayContaining([{ key: '3', count: 3 }, { key: '999', count: 2 }]));
    } finally {
      await keyCheck.close();
    }
  });

  it('counts rows without a key apart, and an all-unique stream has nothing repeated', async () => {
    const keyCheck = check(1000, [...keys(1000, []), undefined, '']);
    try {
      expect(keyCheck.finish()).toEqual({ keys: 1000, missing: 2, repeated: 0, examples: [] });
    } finally {
      await keyCheck.close();
    }
  });

  it('a number and its text are one key (Parquet ids as bigint, NDJSON ids as number)', async () => {
    const keyCheck = check(10, [5n, 5, '6', 6]);
    try {
      expect(keyCheck.finish()).toMatchObject({ keys: 4, repeated: 2 });
    } finally {
      await keyCheck.close();
    }
  });
});
