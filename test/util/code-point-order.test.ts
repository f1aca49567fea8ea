import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareCodePoints } from '../../src/util/code-point-order.js';

describe('compareCodePoints: texts in the order of their code points (of their UTF-8 bytes)', () => {
  it('agrees with the order of the UTF-8 bytes on any two well-formed texts (property-based)', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 6 });
    fc.assert(
      fc.property(text, text, (a, b) => {
        expect(Math.sign(compareCodePoints(a, b))).toBe(Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))));
      }),
      { numRuns: 2000 },
    );
  });

  it('puts U+FFFF before U+1F600, where UTF-16 code units put it after', () => {
    expect(compareCodePoints('\uffff', '😀')).toBeLessThan(0);
    expect('\uffff' < '😀').toBe(false);
    expect(compareCodePoints('a', 'ab')).toBeLessThan(0);
    expect(compareCodePoints('😀a', '😀a')).toBe(0);
    expect(compareCodePoints('😁', '😀')).toBeGreaterThan(0);
  });
});
