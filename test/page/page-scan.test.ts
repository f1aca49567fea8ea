import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PageItems } from '../../src/page/page-items.js';
import { scanPage } from '../../src/page/page-scan.js';
import { findJsonProblem } from '../../src/util/json-limits.js';

const bytes = (s: string) => Buffer.from(s, 'utf8');
const slices = (body: Buffer, bounds: readonly number[]) =>
  Array.from({ length: bounds.length / 2 }, (_, i) => body.toString('utf8', bounds[2 * i], bounds[2 * i + 1]));

/** What JSON.parse makes of the body, in the terms scanPage answers in; undefined when it throws. */
function parsed(body: Buffer): { items: unknown; nextCursor: unknown; isObject: boolean } | undefined {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
    const { items, nextCursor } = (isObject ? value : {}) as { items?: unknown; nextCursor?: unknown };
    return { items, nextCursor, isObject };
  } catch {
    return undefined;
  }
}

/** When scanPage answers, JSON.parse accepts the body and finds the same items and cursor. */
function agreesWithJsonParse(body: Buffer): void {
  const scan = scanPage(body);
  if (scan === undefined) return;
  const expected = parsed(body);
  expect(expected?.isObject).toBe(true);
  expect(slices(body, scan.bounds).map((item) => JSON.parse(item) as unknown)).toEqual(expected!.items);
  expect(scan.nextCursor).toEqual(expected!.nextCursor);
}

const item = fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue());
const page = fc.record(
  {
    items: fc.array(fc.oneof(item, fc.jsonValue()), { maxLength: 12 }),
    nextCursor: fc.string({ unit: 'binary', minLength: 1 }),
    other: fc.jsonValue(),
  },
  { requiredKeys: ['items'] },
);

describe('scanPage', () => {
  it('reads any page JSON.stringify writes, compact or indented, exactly as JSON.parse does', () => {
    fc.assert(
      fc.property(page, fc.constantFrom(undefined, 1, 2, '\t'), (value, indent) => {
        const body = bytes(JSON.stringify(value, null, indent));
        const scan = scanPage(body);
        expect(scan).toBeDefined();
        // Compared with the round trip: JSON.stringify writes -0 as 0.
        const expected = JSON.parse(body.toString()) as typeof value;
        expect(slices(body, scan!.bounds).map((s) => JSON.parse(s) as unknown)).toEqual(expected.items);
        expect(scan!.nextCursor).toEqual(expected.nextCursor);
      }),
      { numRuns: 500 },
    );
  });

  it('never answers for bytes JSON.parse refuses or reads otherwise (random edits of valid pages)', () => {
    const edit = fc.record({
      at: fc.nat(),
      kind: fc.constantFrom('delete', 'insert', 'replace'),
      char: fc.constantFrom(...'{}[]",:\\ \n\t0123456789-+.eEtrufalsn/bux\u0000\u001f\u00e9'.split('')),
    });
    fc.assert(
      fc.property(page, fc.array(edit, { minLength: 1, maxLength: 4 }), (value, edits) => {
        let text = JSON.stringify(value);
        for (const { at, kind, char } of edits) {
          const i = at % (text.length + 1);
          if (kind === 'delete') text = text.slice(0, i) + text.slice(i + 1);
          else if (kind === 'insert') text = text.slice(0, i) + char + text.slice(i);
          else text = text.slice(0, i) + char + text.slice(i + 1);
        }
        agreesWithJsonParse(bytes(text));
      }),
      { numRuns: 3000 },
    );
  });

  it('keeps the bytes as sent: escapes, key order and number forms are not normalized', () => {
    const body = bytes('{"nextCursor":"c]}","items":[ {"b":1.50,"a":"\\u00e9\\"]}[{"} ,{"items":[1]}\t,2, "x" ]}');
    const scan = scanPage(body)!;
    expect(slices(body, scan.bounds)).toEqual(['{"b":1.50,"a":"\\u00e9\\"]}[{"}', '{"items":[1]}', '2', '"x"']);
    expect(scan.nextCursor).toBe('c]}');
  });

  it('decodes a cursor with escapes as JSON.parse does', () => {
    expect(scanPage(bytes('{"items":[],"nextCursor":"a\\"b\\u00e9\\n"}'))?.nextCursor).toBe('a"b\u00e9\n');
  });

  it('finds items after other keys whose values hold brackets, strings and nested objects', () => {
    const body = bytes('{"meta":{"items":[9,9]},"list":[[1],[2]],"s":"],\\"items\\":[","items":[{"x":[{"y":{}}]}]}');
    expect(slices(body, scanPage(body)!.bounds)).toEqual(['{"x":[{"y":{}}]}']);
  });

  it('tells when an element holds a line break between its tokens (not when only the array does)', () => {
    expect(scanPage(bytes('{"items":[\n{"a":1},\r\n{"b":2}\n]}'))?.lineBreaks).toBe(false);
    expect(scanPage(bytes('{"items":[{"a":1},{\n"b":2}]}'))?.lineBreaks).toBe(true);
  });

  it('tells when a number has a run of more than 15 digits (which JSON.parse may round), not when a string does', () => {
    const flag = (text: string) => scanPage(bytes(text))?.longNumbers;
    expect(flag('{"items":[{"a":123456789012345,"b":-0.123456789012345,"c":1e-123456789012345}]}')).toBe(false);
    expect(flag('{"items":[{"a":"12345678901234567890"}],"nextCursor":"99999999999999999"}')).toBe(false);
    expect(flag('{"items":[{"a":1234567890123456}]}')).toBe(true);
    expect(flag('{"items":[{"a":-9007199254740993}]}')).toBe(true);
    expect(flag('{"items":[{"a":0.1234567890123456}]}')).toBe(true);
    expect(flag('{"items":[{"a":1E-1234567890123456}]}')).toBe(true);
    expect(flag('{"items":[],"other":[12345678901234567]}')).toBe(true);
  });

  it.each([
    ['not JSON', '{"items":[{"a":1}]'],
    ['trailing bytes', '{"items":[]} x'],
    ['a byte order mark', '\ufeff{"items":[]}'],
    ['a body that is not an object', '[{"a":1}]'],
    ['no items', '{"nextCursor":"c"}'],
    ['items not an array', '{"items":{"a":1}}'],
    ['items twice (JSON.parse keeps the last)', '{"items":[{"a":1}],"items":[{"b":2}]}'],
    ['nextCursor twice', '{"items":[],"nextCursor":"a","nextCursor":"b"}'],
    ['an empty nextCursor', '{"items":[],"nextCursor":""}'],
    ['a nextCursor that is not a string', '{"items":[],"nextCursor":7}'],
    ['a null nextCursor', '{"items":[],"nextCursor":null}'],
    ['a top-level key written with an escape', '{"item\\u0073":[]}'],
    ['a control character in a string', '{"items":["a\u0001"]}'],
    ['a bad escape', '{"items":["\\x"]}'],
    ['a number with a leading zero', '{"items":[01]}'],
    ['a trailing comma', '{"items":[1,]}'],
  ])('leaves %s to JSON.parse', (_name, text) => {
    expect(scanPage(bytes(text))).toBeUndefined();
  });

  it('leaves bytes that are not valid UTF-8 to JSON.parse, which replaces them', () => {
    const body = Buffer.concat([bytes('{"items":[{"a":"'), Buffer.from([0xff, 0xfe]), bytes('"}]}')]);
    expect(scanPage(body)).toBeUndefined();
  });

  it('leaves an answer nested deeper than 256 levels (its own two included) to the parse, which the client refuses before it', () => {
    const deep = (n: number) => bytes(`{"items":[${'['.repeat(n)}${']'.repeat(n)}]}`);
    expect(scanPage(deep(254))).toBeDefined();
    expect(scanPage(deep(255))).toBeUndefined();
    expect(scanPage(bytes(`{"items":[],"other":${'['.repeat(255)}${']'.repeat(255)}}`))).toBeDefined();
    expect(scanPage(bytes(`{"items":[],"other":${'['.repeat(256)}${']'.repeat(256)}}`))).toBeUndefined();
  });

  it.each(['1e400', '-1.8e308', `1${'0'.repeat(309)}`])('leaves %s, past the range of a double, to the parse, which the client refuses before it', (number) => {
    expect(scanPage(bytes(`{"items":[{"a":${number}}]}`))).toBeUndefined();
    expect(scanPage(bytes(`{"items":[],"nextCursor":"c","other":[${number}]}`))).toBeUndefined();
    expect(scanPage(bytes('{"items":[{"a":1e-400,"b":1.7976931348623157e308}]}'))).toBeDefined();
  });

  it('answers only for bytes that the client\'s check passes (findJsonProblem), whatever the nesting and numbers', () => {
    const value = fc.letrec<{ value: string }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.constantFrom('1', '1e400', '-2e308', '1e-400', '"[["', '0'),
        fc.array(tie('value'), { maxLength: 3 }).map((xs) => `[${xs.join(',')}]`),
        fc.array(tie('value'), { maxLength: 3 }).map((xs) => `{${xs.map((x, i) => `"k${i}":${x}`).join(',')}}`),
      ),
    })).value;
    fc.assert(
      fc.property(fc.array(value, { maxLength: 4 }), fc.integer({ min: 1, max: 260 }), (items, extra) => {
        const body = bytes(`{"items":[${items.join(',')}],"deep":${'['.repeat(extra)}${']'.repeat(extra)}}`);
        if (scanPage(body) !== undefined) expect(findJsonProblem(body)).toBeUndefined();
        else if (findJsonProblem(body) === undefined) expect(() => JSON.parse(body.toString())).not.toThrow();
      }),
      { numRuns: 500 },
    );
  });
});

describe('PageItems.lines', () => {
  const linesOf = (text: string) => {
    const body = bytes(text);
    return Buffer.from(PageItems.scanned(body, scanPage(body)!).lines()).toString('utf8');
  };

  it('gives the items of a compact page as lines, byte for byte', () => {
    expect(linesOf('{"items":[{"a":"x,y"},{"b":[1,2]},3],"nextCursor":"c"}')).toBe('{"a":"x,y"}\n{"b":[1,2]}\n3\n');
  });

  it('keeps items on their own lines when the array is spaced out', () => {
    expect(linesOf('{"items":[ {"a":1} ,\n {"b":2} ]}')).toBe('{"a":1}\n{"b":2}\n');
  });

  it('writes an item that spans lines as one line', () => {
    expect(linesOf('{"items":[{"a":1},{\n  "b": 2\n}]}')).toBe('{"a":1}\n{"b":2}\n');
  });

  it('gives nothing for an empty page, and values as JSON.stringify writes them', () => {
    expect(linesOf('{"items":[]}')).toBe('');
    expect(Buffer.from(PageItems.of([{ a: 1 }, 'x']).lines()).toString()).toBe('{"a":1}\n"x"\n');
  });

  it('parses one item at a time, the same values as JSON.parse of the page', () => {
    fc.assert(
      fc.property(page, (value) => {
        const body = bytes(JSON.stringify(value));
        const expected = (JSON.parse(body.toString()) as typeof value).items;
        const items = PageItems.scanned(body, scanPage(body)!);
        expect(Array.from({ length: items.length }, (_, i) => items.value(i))).toEqual(expected);
        const lines = Buffer.from(items.lines()).toString('utf8');
        expect(lines).toBe(expected.map((v) => `${JSON.stringify(v)}\n`).join(''));
      }),
      { numRuns: 300 },
    );
  });
});

describe("PageItems.key: an item's space and externalId, as JSON.parse reads them, without parsing the item", () => {
  /** What JSON.parse makes of each item's `space` and `externalId` (undefined where not a string). */
  const keysOf = (body: Buffer) =>
    (JSON.parse(body.toString()) as { items: unknown[] }).items.map((item) => {
      const object = item !== null && typeof item === 'object' && !Array.isArray(item) ? item : {};
      const { space, externalId } = object as Record<string, unknown>;
      return { space: typeof space === 'string' ? space : undefined, externalId: typeof externalId === 'string' ? externalId : undefined };
    });
  const scannedKeys = (body: Buffer) => {
    const items = PageItems.scanned(body, scanPage(body)!);
    return Array.from({ length: items.length }, (_, i) => items.key(i));
  };
  const keyed = fc.dictionary(
    fc.oneof(fc.constantFrom('space', 'externalId', 'spaces', 'external', 'e', 's', ''), fc.string({ unit: 'binary' })),
    fc.oneof(fc.string({ unit: 'binary' }), fc.jsonValue()),
  );

  it('for any page JSON.stringify writes, items with and without them, of any value (property-based)', () => {
    const pages = fc.array(fc.oneof(keyed, fc.jsonValue()), { maxLength: 12 });
    fc.assert(
      fc.property(pages, fc.constantFrom(undefined, 2), (items, indent) => {
        const body = bytes(JSON.stringify({ items }, null, indent));
        expect(scannedKeys(body)).toEqual(keysOf(body));
      }),
      { numRuns: 500 },
    );
  });

  it('keys and values written with escapes, a key given twice (the last counts), nested ones not taken', () => {
    const body = bytes(
      '{"items":[' +
      '{"sp\\u0061ce":"a\\"b","\\u0065xternalId":"\\ud83d\\ude00"},' +
      '{"space":"x","space":"y","externalId":1},' +
      '{"properties":{"space":"no","externalId":"no"},"externalId":"id"},' +
      '"text",[1],{}' +
      ']}',
    );
    expect(scannedKeys(body)).toEqual([
      { space: 'a"b', externalId: '😀' },
      { space: 'y', externalId: undefined },
      { space: undefined, externalId: 'id' },
      { space: undefined, externalId: undefined },
      { space: undefined, externalId: undefined },
      { space: undefined, externalId: undefined },
    ]);
    expect(scannedKeys(body)).toEqual(keysOf(body));
    expect(PageItems.of([{ space: 'a', externalId: 'b' }, null]).key(0)).toEqual({ space: 'a', externalId: 'b' });
    expect(PageItems.of([{ space: 'a', externalId: 'b' }, null]).key(1)).toEqual({ space: undefined, externalId: undefined });
  });
});
