/**
 * Texts in code-point order: the order of their UTF-8 bytes, which the platform's text comparisons
 * use (collation ucs_basic, the one of `externalId`), and the simulator's, and the checks of a
 * split's ranges. JavaScript's `<` compares UTF-16 code units instead, which differs past U+FFFF:
 * '\uffff' < '😀' by code point, but not by code unit.
 */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/**
 * A UTF-16 code unit ranked so that units compare as the code points they start: surrogates (which
 * start code points past U+FFFF) after every other unit, U+E000..U+FFFF moved down to make room.
 */
function codePointRank(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit >= 0xe000 ? unit - 0x800 : unit + 0x2000;
}
