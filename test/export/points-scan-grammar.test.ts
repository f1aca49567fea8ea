import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AskedQuery } from '../../src/export/kinds/datapoints/points-answer.js';
import { readScannedAnswer } from '../../src/export/kinds/datapoints/points-scan.js';
import type { PointsShape } from '../../src/resources/index.js';
import { expectSameReads } from '../support/points-paths.js';

/**
 * The datapoints answer's scan checks JSON's grammar itself, in the same pass that reads the
 * points: bytes JSON.parse refuses are never read as an answer (the scan leaves them to JSON.parse,
 * which names what is wrong), and bytes it takes read as JSON.parse reads them.
 */
const CTX = { method: 'POST', path: '/api/v1/projects/p/timeseries/data/list' } as const;
const RAW: PointsShape = { includeStatus: true };
const QUERIES: AskedQuery[] = [
  { ref: { id: 1 }, start: 0, end: 100, limit: 4, last: null },
  { ref: { externalId: 'b' }, start: 10, end: 100, limit: 3, last: null },
];

const NUMERIC = '{"id":1,"externalId":"a","isString":false,"unit":"°C","datapoints":[{"timestamp":10,"value":1.5},' +
  '{"timestamp":20,"value":-2e-3,"status":{"code":1,"symbol":"Uncertain"}}]}';
const STRING = '{"id":2,"externalId":"b","isString":true,"nextCursor":"c2","datapoints":[{"timestamp":15,"value":"on ✓"}]}';
const GOOD = `{"items":[${NUMERIC},${STRING}]}`;

const scan = (body: Buffer) => readScannedAnswer(body, QUERIES, undefined, CTX);
const parses = (body: Buffer) => {
  try {
    JSON.parse(body.toString('utf8'));
    return true;
  } catch {
    return false;
  }
};

describe('the datapoints answer\'s scan, on bytes that are not JSON', () => {
  it('reads the well-formed answer itself', () => {
    expect(scan(Buffer.from(GOOD))?.series).toHaveLength(2);
  });

  it.each([
    ['a timestamp with a leading zero', '"timestamp":10,"value":1.5', '"timestamp":010,"value":1.5'],
    ['a value with a leading zero', '"value":1.5}', '"value":01.5}'],
    ['a value ending in a point', '"value":1.5}', '"value":1.}'],
    ['a value starting with a point', '"value":1.5}', '"value":.5}'],
    ['an exponent without digits', '"value":1.5}', '"value":1e}'],
    ['a lone minus', '"value":1.5}', '"value":-}'],
    ['a plus sign', '"value":1.5}', '"value":+1}'],
    ['a minus inside a number', '"value":1.5}', '"value":1-5}'],
    ['a hexadecimal number', '"value":1.5}', '"value":0x15}'],
    ['a bare NaN', '"value":1.5}', '"value":NaN}'],
    ['a trailing comma among points', '"symbol":"Uncertain"}}]', '"symbol":"Uncertain"}},]'],
    ['two points without a comma', '"value":1.5},', '"value":1.5}'],
    ['a trailing comma in a status', '"symbol":"Uncertain"}', '"symbol":"Uncertain",}'],
    ['an unterminated string', '"externalId":"a"', '"externalId":"a'],
    ['a control character in a string', '"externalId":"a"', '"externalId":"a\u0001"'],
    ['an unknown escape', '"externalId":"a"', '"externalId":"\\x"'],
    ['a broken literal in a field the scan skips', '"unit":"°C"', '"unit":tru'],
    ['a trailing comma in an item', '"isString":false,', '"isString":false,,'],
    ['a key without a colon', '"isString":false', '"isString" false'],
    ['an id written 1.', '"id":1,', '"id":1.,'],
  ])('refuses %s, as JSON.parse does', (_, from, to) => {
    expect(GOOD).toContain(from);
    const body = Buffer.from(GOOD.replace(from, to));
    expect(parses(body)).toBe(false);
    expect(scan(body)).toBeUndefined();
  });

  it.each([
    ['a trailing comma after the items', `{"items":[${NUMERIC},${STRING}],}`],
    ['bytes after the body', `${GOOD}x`],
    ['a second body', `${GOOD}${GOOD}`],
    ['a body cut short', GOOD.slice(0, -1)],
    ['an empty body', ''],
  ])('refuses %s, as JSON.parse does', (_, text) => {
    const body = Buffer.from(text);
    expect(parses(body)).toBe(false);
    expect(scan(body)).toBeUndefined();
  });

  it('leaves bytes that are not UTF-8 to the parse', () => {
    const at = GOOD.indexOf('"a"') + 2;
    const body = Buffer.concat([Buffer.from(GOOD.slice(0, at)), Buffer.from([0xff]), Buffer.from(GOOD.slice(at))]);
    expect(scan(body)).toBeUndefined();
  });

  it('never reads bytes JSON.parse refuses, and reads what it takes as JSON.parse does (fast-check, bytes changed)', async () => {
    const good = Buffer.from(GOOD);
    // Bytes that change JSON's structure, and a few that do not.
    const swaps = [...'{}[],:"\\0123456789.eE+- tnfla'].map((c) => c.charCodeAt(0));
    const edit = fc.tuple(
      fc.nat(good.length - 1),
      fc.oneof(
        fc.constantFrom(...swaps).map((byte) => ({ byte })),
        fc.constant({ cut: true }),
        fc.constant({ drop: true }),
      ),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(edit, { minLength: 1, maxLength: 3 }), async (edits) => {
        let body = good;
        for (const [at, change] of edits) {
          const i = Math.min(at, body.length - 1);
          if ('cut' in change) body = body.subarray(0, i);
          else if ('drop' in change) body = Buffer.concat([body.subarray(0, i), body.subarray(i + 1)]);
          else body = Buffer.concat([body.subarray(0, i), Buffer.from([change.byte]), body.subarray(i + 1)]);
          if (body.length === 0) return;
        }
        if (!parses(body)) {
          expect(scan(body), body.toString()).toBeUndefined();
          return;
        }
        await expectSameReads(body, QUERIES, RAW);
      }),
      { numRuns: 3000, seed: 28 },
    );
  });
});
