import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findJsonProblem, MAX_JSON_DEPTH } from '../../src/util/json-limits.js';
import { jsonPathAt } from '../../src/util/json-path.js';

const bytes = (text: string) => Buffer.from(text);

/** Levels of objects and arrays in `value`: a scalar is 0, `[]` 1. */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

describe('findJsonProblem: nesting', () => {
  it('agrees with the depth of the parsed value, for any JSON text and any limit', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 9 }), fc.boolean(), (value, limit, wide) => {
        const text = JSON.stringify(value, null, wide ? 1 : undefined);
        const problem = findJsonProblem(bytes(text), limit);
        expect(problem?.kind === 'depth').toBe(depthOf(value) > limit);
        expect(problem?.kind === 'range').toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('brackets, quotes and backslashes inside strings count for nothing', () => {
    expect(findJsonProblem(bytes(`["${'['.repeat(500)}", "\\"[[[", "\\\\", {"k\\"[": "]]]"}]`), 2)).toBeUndefined();
    expect(findJsonProblem(bytes('["\\\\"]'), 1)).toBeUndefined();
    expect(findJsonProblem(bytes('["\\\\",[]]'), 1)).toEqual({ kind: 'depth', at: 6 });
  });

  it('names the bracket one level too deep', () => {
    const text = `{"a":${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}}`;
    expect(findJsonProblem(bytes(text))).toEqual({ kind: 'depth', at: 5 + MAX_JSON_DEPTH - 1 });
    expect(findJsonProblem(bytes(text), MAX_JSON_DEPTH + 1)).toBeUndefined();
  });

  it('an unterminated string or a body that is not JSON ends the pass without a problem', () => {
    expect(findJsonProblem(bytes('{"a":"[[[[['))).toBeUndefined();
    expect(findJsonProblem(bytes('<html><title>502</title>'))).toBeUndefined();
    expect(findJsonProblem(bytes(''))).toBeUndefined();
  });
});

describe('findJsonProblem: numbers past the range of a double', () => {
  const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^[0-9]{${min},${max}}$`));
  const token = fc
    .record({
      minus: fc.boolean(),
      whole: fc.oneof(fc.constant('0'), fc.tuple(fc.stringMatching(/^[1-9]$/), digits(0, 320)).map(([a, b]) => a + b)),
      fraction: fc.option(digits(1, 40), { nil: undefined }),
      exponent: fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.integer({ min: 0, max: 700 })), { nil: undefined }),
    })
    .map(({ minus, whole, fraction, exponent }) =>
      `${minus ? '-' : ''}${whole}${fraction === undefined ? '' : `.${fraction}`}${exponent === undefined ? '' : exponent.join('')}`,
    );

  it('flags a number exactly when JSON.parse would make it infinite', () => {
    fc.assert(
      fc.property(token, (number) => {
        const infinite = !Number.isFinite(JSON.parse(number) as number);
        const problem = findJsonProblem(bytes(`{"v":[1,${number},2]}`));
        expect(problem === undefined ? undefined : problem.kind).toBe(infinite ? 'range' : undefined);
        if (problem?.kind === 'range') expect([problem.at, problem.end]).toEqual([8, 8 + number.length]);
      }),
      { numRuns: 3000 },
    );
  });

  it.each(['1e400', '-1e309', '1.8e308', `1${'0'.repeat(309)}`, '0.001e312', '1e0000000000000400'])('%s is past the range', (number) => {
    expect(findJsonProblem(bytes(`[${number}]`))?.kind).toBe('range');
  });

  it.each(['1.7976931348623157e308', '1e-400', '-0', '0e999999', '0.0e400', `9${'9'.repeat(307)}`, '1e308'])('%s is not', (number) => {
    expect(findJsonProblem(bytes(`[${number}]`))).toBeUndefined();
  });
});

describe('jsonPathAt', () => {
  const at = (text: string, marker: string) => jsonPathAt(bytes(text), text.indexOf(marker));

  it.each([
    ['{"items":[{"id":1},{"id":42,"m":{"x":HERE}}]}', 'items[1] (id 42).m.x'],
    ['{"items":[{"m":{"a b":[0,HERE]},"externalId":"e\\"1","space":"s"}]}', 'items[0] (space "s", externalId "e\\"1").m["a b"][1]'],
    ['{"items":{"set":[{},{"space":"s","externalId":"x","p":HERE}]}}', 'items.set[1] (space "s", externalId "x").p'],
    ['[[1,HERE]]', '[0][1]'],
    ['HERE', 'the top level'],
    ['{"a":{"k\\u0065y":HERE}}', 'a.key'],
  ])('%s: %s', (text, path) => {
    expect(at(text, 'HERE')).toBe(path);
  });

  it('cuts a deep path after ten levels and says how deep it is', () => {
    const text = `{"items":[{"id":5,"x":${'['.repeat(1000)}`;
    expect(jsonPathAt(bytes(text), text.length - 1)).toBe('items[0] (id 5).x[0][0][0][0][0][0][0]… (1,003 levels)');
  });
});
