import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AS_IS, JsonText, REFUSED, REWRITE } from '../../src/sink/instances/json-text.js';
import { type Raw, style, write } from '../support/instance-arbitraries.js';

/** JsonText.read of a whole text: what it says, and whether it left `pos` at its end (unless it refused it). */
function read(text: string): { kind: number; end: boolean } {
  const reader = new JsonText();
  reader.b = Buffer.from(text);
  reader.pos = 0;
  reader.end = reader.b.length;
  const kind = reader.read();
  return { kind, end: kind === REFUSED || reader.pos === reader.b.length };
}

const CASES: [string, number][] = [
  ['{"a":[1,{"b":null}],"c":"d","e":-1.25,"f":true,"g":false}', AS_IS],
  ['"key with \\"quotes\\" and \\\\ \\b\\f\\n\\r\\t \\u0000\\u001f \\ud800 \\udfff"', AS_IS],
  ['{"key with \\"quotes\\"":"x","__proto__":{},"":[],"a1":0}', AS_IS],
  ['[0,-1,9007199254740991,-9007199254740991,0.5,1e+21,1.5e-7,5e-324]', AS_IS],
  ['"ünï ✓ 温度 🙂"', AS_IS],
  ['{ "a":1}', REWRITE],
  ['[1 ,2]', REWRITE],
  ['"\\/"', REWRITE],
  ['"\\u0041"', REWRITE],
  ['"\\u000a"', REWRITE],
  ['"\\u001F"', REWRITE],
  ['"\\uD800"', REWRITE],
  ['"\\ud83d\\ude00"', REWRITE],
  ['-0', REWRITE],
  ['1.50', REWRITE],
  ['1E+21', REWRITE],
  ['1e21', REWRITE],
  ['1e400', REWRITE],
  ['{"2":"b","1":"a"}', REWRITE],
  ['{"\\u0031":"a"}', REWRITE],
  ['{"":1,"0":2}', REWRITE],
  ['{"":1,"a":2}', AS_IS],
  ['9007199254740992', REFUSED],
  ['[12345678901234567890]', REFUSED],
  ['{"a":1,"a":1}', REFUSED],
  ['{"a":1,"\\u0061":2}', REFUSED],
  ['{"\\u0061":1,"a":2}', REFUSED],
  ['{"a":{"b":1,"b":2}}', REFUSED],
];

describe('JsonText', () => {
  it.each(CASES)('%s: %i', (text, kind) => {
    expect(read(text)).toEqual({ kind, end: true });
  });

  it('keys repeat across objects, not within one', () => {
    expect(read('[{"a":1,"b":{"a":2}},{"a":3}]')).toEqual({ kind: AS_IS, end: true });
  });

  it('AS_IS only for bytes that are JSON.stringify\'s text of them; REFUSED exactly for unsafe integers and repeated keys (fast-check)', () => {
    const raw: fc.Arbitrary<Raw> = fc.letrec<{ value: Raw }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.string({ unit: 'binary', maxLength: 6 }).map((s): Raw => ({ s })),
        fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)), fc.constantFrom('-0', '1.0', '1E3'))
          .map((n): Raw => ({ n })),
        fc.constantFrom<Raw>({ l: 'true' }, { l: 'null' }),
        fc.array(tie('value'), { maxLength: 3 }).map((a): Raw => ({ a })),
        fc.array(fc.tuple(fc.constantFrom('a', 'b', '1', '__proto__', 'é'), tie('value')), { maxLength: 3 }).map((o): Raw => ({ o })),
      ),
    })).value;
    const counts = [0, 0, 0];
    fc.assert(
      fc.property(raw, style, (value, how) => {
        const text = write(value, how);
        const { kind, end } = read(text);
        expect(end).toBe(true);
        counts[kind + 1]!++;
        if (kind === AS_IS) expect(text).toBe(JSON.stringify(JSON.parse(text)));
        expect(kind === REFUSED).toBe(refused(value));
      }),
      { seed: 2031, numRuns: 2000 },
    );
    expect(counts.every((count) => count > 100)).toBe(true);
  });
});

/** What JsonText must refuse: an integer that is not safe, a key twice in one object. */
function refused(raw: Raw): boolean {
  if ('n' in raw) return /^-?\d+$/.test(raw.n) && !Number.isSafeInteger(Number(raw.n));
  if ('a' in raw) return raw.a.some(refused);
  if ('o' in raw) return new Set(raw.o.map(([key]) => key)).size < raw.o.length || raw.o.some(([, item]) => refused(item));
  return false;
}
