import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IdSet, MAX_ID_SLOTS } from '../../src/util/id-set.js';

/** IdSet holds what a Set of the same ids holds, in 12 bytes a slot, and never grows past its most slots. */
describe('IdSet', () => {
  it('holds what a Map of the same ids holds: each id once, with the tag it was first added with', () => {
    const large = fc.constantFrom(2 ** 32, 2 ** 32 + 1, 2 ** 53 - 1, 7e15 + 5);
    const id = fc.oneof(fc.integer({ min: 1, max: 3000 }), large);
    fc.assert(
      fc.property(fc.array(fc.tuple(id, fc.nat({ max: 2 ** 32 - 1 })), { maxLength: 4000 }), (adds) => {
        const set = new IdSet();
        const model = new Map<number, number>();
        for (const [value, tag] of adds) {
          const got = set.add(value, tag);
          const before = model.get(value);
          expect(got).toEqual(before === undefined ? 'added' : { tag: before });
          if (before === undefined) model.set(value, tag);
        }
        expect(set.size).toBe(model.size);
        for (const [value, tag] of model) expect(set.tagOf(value)).toBe(tag);
        expect(set.tagOf(4001)).toBeUndefined();
      }),
      { numRuns: 50 },
    );
  });

  it('removes the ids whose tag is dropped, and keeps finding the others', () => {
    const set = new IdSet();
    for (let id = 1; id <= 5000; id++) set.add(id * 7919, id % 3);
    set.removeWhere((tag) => tag === 0);
    expect(set.size).toBe(5000 - Math.floor(5000 / 3));
    for (let id = 1; id <= 5000; id++) expect(set.tagOf(id * 7919)).toBe(id % 3 === 0 ? undefined : id % 3);
    expect(set.add(3 * 7919, 9)).toBe('added');
  });

  it('doubles its slots when 3/4 full, 12 bytes a slot, and once at its most slots refuses new ids while finding the old', () => {
    const set = new IdSet(2048);
    expect(set.bytes).toBe(1024 * 12);
    for (let id = 1; id <= 768; id++) expect(set.add(id, 0)).toBe('added');
    expect(set.bytes).toBe(1024 * 12);
    expect(set.add(769, 0)).toBe('added');
    expect(set.bytes).toBe(2048 * 12);
    for (let id = 770; id <= 1536; id++) expect(set.add(id, 0)).toBe('added');
    expect(set.add(1537, 0)).toBe('full');
    expect(set.add(5, 1)).toEqual({ tag: 0 });
    expect(set.size).toBe(1536);
    expect(set.bytes).toBe(2048 * 12);
    expect(MAX_ID_SLOTS * 12).toBe(48 * 2 ** 20);
  });

  it('refuses what is not an id', () => {
    const set = new IdSet();
    for (const bad of [0, -1, 1.5, 2 ** 53, Number.NaN]) expect(() => set.add(bad, 0)).toThrow(RangeError);
  });
});
