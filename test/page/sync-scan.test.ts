import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PageItems } from '../../src/page/page-items.js';
import { scanSyncPage } from '../../src/page/sync-scan.js';

const SET = 'instances';

const bytes = (s: string) => Buffer.from(s, 'utf8');
const slices = (body: Buffer, bounds: readonly number[]) =>
  Array.from({ length: bounds.length / 2 }, (_, i) => body.toString('utf8', bounds[2 * i], bounds[2 * i + 1]));

/** A member of a parsed object, own properties only (a set named `toString` is not Object's). */
function member(value: unknown, key: string): unknown {
  if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
  return (value as Record<string, unknown>)[key];
}

/**
 * scanSyncPage answers for `body` and agrees with JSON.parse: each range parses to the instance
 * JSON.parse finds at its place in `items[set]`, and the cursor is JSON.parse's.
 */
function expectAgreement(body: Buffer, set = SET): void {
  const scan = scanSyncPage(body, set);
  expect(scan, 'scanSyncPage answers').toBeDefined();
  const parsed: unknown = JSON.parse(body.toString('utf8'));
  const ranges = slices(body, scan!.bounds);
  expect(ranges.map((range) => JSON.parse(range) as unknown)).toEqual(member(member(parsed, 'items'), set));
  // A range is the instance's bytes, no whitespace around them (a writer copies them as a line).
  ranges.forEach((range) => expect(range).toBe(range.trim()));
  expect(scan!.nextCursor).toBe(member(member(parsed, 'nextCursor'), set));
  // Nothing but the set's instances and cursor is read: an older platform's moreData is passed over.
  expect(Object.keys(scan!).sort()).toEqual(['bounds', 'keys', 'lineBreaks', 'longNumbers', 'nextCursor']);
  // Each instance's key, noted by the scan, is JSON.parse's.
  const items = PageItems.scanned(body, scan!);
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const instances = member(member(parsed, 'items'), set) as unknown[];
  expect(Array.from({ length: items.length }, (_, i) => items.key(i))).toEqual(
    instances.map((instance) => ({ space: text(member(instance, 'space')), externalId: text(member(instance, 'externalId')) })),
  );
}

describe('scanSyncPage agrees with JSON.parse', () => {
  it.each([
    ['the plain answer', '{"items":{"instances":[{"a":1},{"b":[2,3]}]},"nextCursor":{"instances":"c1"}}'],
    [
      'instances with their keys',
      '{"items":{"other":[{"space":"z"}],"instances":[{"space":"s1","externalId":"e\\u0031"},{"externalId":"e2","space":3}]},' +
      '"nextCursor":{"instances":"c1"}}',
    ],
    ['keys in another order', '{"nextCursor":{"instances":"c1"},"items":{"instances":[1]}}'],
    [
      'other result sets before and after the set, in items and nextCursor',
      '{"items":{"before":[{"x":1}],"instances":[{"a":1}],"after":[{"y":[{"instances":[9]}]}]},' +
      '"nextCursor":{"before":"cb","instances":"c1","after":"ca"}}',
    ],
    [
      'typing and unknown top-level keys, before and after',
      '{"typing":{"instances":{"space":{"view":{"p":{"type":{"list":false}}}}}},"items":{"instances":[{"a":1}]},' +
      '"nextCursor":{"instances":"c1"},"extra":[{"items":{"instances":[7]}},"nextCursor"],"moreData":false,"z":null}',
    ],
    [
      'sets named like the set, longer and shorter',
      '{"items":{"instancesX":[1],"instance":[2],"instances":[3]},"nextCursor":{"instancesX":"a","instances":"c","instance":"b"}}',
    ],
    ['an unknown key whose string looks like a key', '{"note":"\\"items\\":{\\"instances\\":[1]}","items":{"instances":[2]},"nextCursor":{"instances":"c"}}'],
    ['an empty set', '{"items":{"instances":[]},"nextCursor":{"instances":"c1"}}'],
    ['an empty set, spaced out', '{"items":{"instances":[ \n ]},"nextCursor":{"instances":"c1"}}'],
    ['whitespace everywhere', ' \t{ "items" : { "instances" : [ {"a" : 1} , 2 , "s" ] } ,\r\n "nextCursor" : { "instances" : "c1" } } \n'],
    [
      'strings with escapes in instances',
      '{"items":{"instances":[{"s":"a\\"b\\\\c\\/d\\u00e9\\n\\t]}","k\\u0020y":"\\ud83d\\ude00"},"],[{\\""]},' +
      '"nextCursor":{"instances":"c1"}}',
    ],
    ['a cursor with escapes', '{"items":{"instances":[]},"nextCursor":{"instances":"a\\"b\\u00e9\\n"}}'],
    ['non-ASCII text, raw', '{"items":{"instances":[{"name":"Pumpe ø 3 – 東京"}]},"nextCursor":{"instances":"çürsör"}}'],
    ['long numbers kept as bytes', '{"items":{"instances":[{"id":12345678901234567890,"v":1.50e+3,"n":-0}]},"nextCursor":{"instances":"c"}}'],
    ['the set absent from nextCursor (cursor undefined)', '{"items":{"instances":[1]},"nextCursor":{"other":"c"}}'],
    ['nextCursor empty (cursor undefined)', '{"items":{"instances":[1]},"nextCursor":{}}'],
    ['no nextCursor at all', '{"items":{"instances":[1]}}'],
    ['no moreData (the platform\'s answer)', '{"items":{"instances":[1]},"nextCursor":{"instances":"c"}}'],
    ['moreData of an older platform, passed over', '{"items":{"instances":[1]},"nextCursor":{"instances":"c"},"moreData":true}'],
    ['moreData given twice, passed over', '{"items":{"instances":[]},"moreData":true,"moreData":false,"nextCursor":{"instances":"c"}}'],
    ['moreData "true" (a string), passed over', '{"items":{"instances":[]},"nextCursor":{"instances":"c"},"moreData":"true"}'],
    ['moreData null, passed over', '{"items":{"instances":[]},"nextCursor":{"instances":"c"},"moreData":null}'],
    ['items holding only the set, nothing else', '{"items":{"instances":[{"deep":[[[{"a":[]}]]]}]}}'],
  ])('%s', (_name, text) => {
    expectAgreement(bytes(text));
  });

  it('reads the set named by the caller, not another one', () => {
    const body = bytes('{"items":{"a":[1],"b":[2,3]},"nextCursor":{"a":"ca","b":"cb"}}');
    expectAgreement(body, 'a');
    expectAgreement(body, 'b');
    expect(slices(body, scanSyncPage(body, 'b')!.bounds)).toEqual(['2', '3']);
    expect(scanSyncPage(body, 'b')?.nextCursor).toBe('cb');
    expect(scanSyncPage(body, 'c'), 'a set the answer has not').toBeUndefined();
  });

  it('a set named like a prototype member is found only when the answer has it', () => {
    expectAgreement(bytes('{"items":{"toString":[1]},"nextCursor":{"toString":"c"}}'), 'toString');
    expect(scanSyncPage(bytes('{"items":{"instances":[1]},"nextCursor":{"instances":"c"}}'), 'toString')).toBeUndefined();
  });

  it('keeps the bytes as sent: escapes, key order and number forms are not normalized', () => {
    const body = bytes('{"items":{"instances":[ {"b":1.50,"a":"\\u00e9\\"]}[{"} ,{"items":{"instances":[1]}}\t,2 ]},"nextCursor":{"instances":"c"}}');
    expect(slices(body, scanSyncPage(body, SET)!.bounds)).toEqual(['{"b":1.50,"a":"\\u00e9\\"]}[{"}', '{"items":{"instances":[1]}}', '2']);
  });

  it('tells when an instance holds a line break between its tokens, not when only the array or the answer does', () => {
    const at = (text: string) => scanSyncPage(bytes(text), SET)?.lineBreaks;
    expect(at('{"items":{"instances":[{"a":1},{"b":2}]}}')).toBe(false);
    expect(at('{\n"items":{\n"instances":[\n{"a":1},\r\n{"b":2}\n]\n},\n"nextCursor":{\n"instances":"c"\n}\n}')).toBe(false);
    expect(at('{"items":{"instances":[{"a":1},{\n"b":2}]}}')).toBe(true);
    expect(at('{"items":{"instances":[{"a":1},{"b":\r2}]}}')).toBe(true);
    expect(at('{"items":{"other":[{\n"x":1}],"instances":[{"a":1}]}}'), 'a break in another set').toBe(false);
    expect(at('{"items":{"instances":[{"s":"a\\nb"}]}}'), 'an escaped \\n inside a string').toBe(false);
  });

  it('an answer exactly as deep as the scan goes (256 levels, its own three included) is read; deeper is left to the parse', () => {
    const deep = (n: number) => bytes(`{"items":{"instances":[${'['.repeat(n)}${']'.repeat(n)}]},"nextCursor":{"instances":"c"}}`);
    expectAgreement(deep(253));
    expect(scanSyncPage(deep(254), SET)).toBeUndefined();
    expect(scanSyncPage(deep(300), SET)).toBeUndefined();
  });

  it('a number past the range of a double is left to the parse, which the client refuses before it', () => {
    expect(scanSyncPage(bytes('{"items":{"instances":[{"p":1e400}]},"nextCursor":{"instances":"c"}}'), SET)).toBeUndefined();
  });
});

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

describe('scanSyncPage leaves the answer to JSON.parse', () => {
  // `valid`: JSON.parse accepts it, so the scan refuses it for the rule named, not for a typo.
  it.each([
    ['invalid JSON', '{"items":{"instances":[1,]},"nextCursor":{"instances":"c"}}', false],
    ['a truncated body', '{"items":{"instances":[{"a":1}]},"nextCursor":{"instances":"c"', false],
    ['a body cut inside an instance', '{"items":{"instances":[{"a":"x', false],
    ['an empty body', '', false],
    ['trailing garbage', '{"items":{"instances":[]},"nextCursor":{"instances":"c"}} x', false],
    ['a second value after the answer', '{"items":{"instances":[]}}{}', false],
    ['a byte order mark', '\ufeff{"items":{"instances":[]}}', false],
    ['a body that is not an object', '[{"items":{"instances":[]}}]', true],
    ['an empty object', '{}', true],
    ['the set missing from items', '{"items":{"other":[1]},"nextCursor":{"instances":"c"}}', true],
    ['items empty', '{"items":{},"nextCursor":{"instances":"c"}}', true],
    ['no items at all', '{"nextCursor":{"instances":"c"}}', true],
    ['items an array (the list shape)', '{"items":[1,2],"nextCursor":{"instances":"c"}}', true],
    ['items null', '{"items":null}', true],
    ['items of the set an object', '{"items":{"instances":{"a":1}},"nextCursor":{"instances":"c"}}', true],
    ['items of the set null', '{"items":{"instances":null}}', true],
    ['items of the set a string', '{"items":{"instances":"[1]"}}', true],
    ['items given twice', '{"items":{"instances":[1]},"items":{"instances":[2]},"nextCursor":{"instances":"c"}}', true],
    ['the set given twice in items', '{"items":{"instances":[1],"instances":[2]},"nextCursor":{"instances":"c"}}', true],
    ['nextCursor given twice', '{"items":{"instances":[]},"nextCursor":{"instances":"a"},"nextCursor":{"instances":"b"}}', true],
    ['the set given twice in nextCursor', '{"items":{"instances":[]},"nextCursor":{"instances":"a","instances":"b"}}', true],
    ['an empty cursor for the set', '{"items":{"instances":[]},"nextCursor":{"instances":""}}', true],
    ['a cursor that is a number', '{"items":{"instances":[]},"nextCursor":{"instances":7}}', true],
    ['a cursor that is null', '{"items":{"instances":[]},"nextCursor":{"instances":null}}', true],
    ['a cursor that is an object', '{"items":{"instances":[]},"nextCursor":{"instances":{"c":"x"}}}', true],
    ['nextCursor a string (the list shape)', '{"items":{"instances":[]},"nextCursor":"c"}', true],
    ['nextCursor null', '{"items":{"instances":[]},"nextCursor":null}', true],
    ['a top-level key with an escape', '{"item\\u0073":{"instances":[]},"nextCursor":{"instances":"c"}}', true],
    ['an unknown top-level key with an escape', '{"items":{"instances":[]},"typ\\u0069ng":{},"nextCursor":{"instances":"c"}}', true],
    ['a set name with an escape in items', '{"items":{"instance\\u0073":[1]},"nextCursor":{"instances":"c"}}', true],
    ['a set name with an escape in nextCursor', '{"items":{"instances":[1]},"nextCursor":{"instance\\u0073":"c"}}', true],
    ['a control character in an instance string', '{"items":{"instances":["a\u0001"]}}', false],
    ['a bad escape in an instance', '{"items":{"instances":["\\x"]}}', false],
    ['a number with a leading zero', '{"items":{"instances":[01]}}', false],
    ['a bad value in another set', '{"items":{"other":[tru],"instances":[1]}}', false],
    ['a bad value under an unknown key', '{"items":{"instances":[1]},"typing":{"a":}}', false],
  ])('%s', (_name, text, valid) => {
    expect(parses(text), valid ? 'JSON.parse accepts it' : 'JSON.parse refuses it').toBe(valid);
    expect(scanSyncPage(bytes(text), SET)).toBeUndefined();
  });

  it('leaves bytes that are not UTF-8 to JSON.parse, which would replace them', () => {
    const body = Buffer.concat([bytes('{"items":{"instances":[{"a":"'), Buffer.from([0xff, 0xfe]), bytes('"}]},"nextCursor":{"instances":"c"}}')]);
    expect(scanSyncPage(body, SET)).toBeUndefined();
    // The same answer with a valid character in their place is read.
    expectAgreement(bytes('{"items":{"instances":[{"a":"\u00ff"}]},"nextCursor":{"instances":"c"}}'));
  });

  it('every prefix of an answer is refused (a body cut anywhere)', () => {
    const text = ' {"items":{"before":[0],"instances":[{"a":"x\\"y","b":[1,{"c":null}]},-1.5e3,true]},"nextCursor":{"instances":"c1"}} ';
    expectAgreement(bytes(text));
    // The whole answer less its trailing space is complete; every shorter prefix is not.
    for (let end = 0; end < text.length - 1; end++) {
      expect(scanSyncPage(bytes(text.slice(0, end)), SET), text.slice(0, end)).toBeUndefined();
    }
  });
});

/** A key no escape is needed for, and which is none of the answer's own. */
const name = fc.stringMatching(/^[A-Za-z_][\w-]{0,8}$/)
  .filter((key) => !['items', 'nextCursor', 'moreData', SET].includes(key));
const instance = fc.oneof(
  { weight: 3, arbitrary: fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);
/** Up to three `[name, value]` members with distinct names. */
const members = <T>(value: fc.Arbitrary<T>) =>
  fc.uniqueArray(fc.tuple(name, value), { selector: ([key]) => key, maxLength: 3 });
const otherSets = members(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }));
const answer = fc.record({
  instances: fc.array(instance, { maxLength: 8 }),
  setsBefore: otherSets,
  setsAfter: otherSets,
  cursor: fc.option(fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }), { nil: undefined }),
  otherCursors: members(fc.string({ minLength: 1, maxLength: 5 })),
  cursorAt: fc.nat(3),
  hasNextCursor: fc.boolean(),
  moreData: fc.option(fc.boolean(), { nil: undefined }),
  unknown: members(fc.jsonValue({ maxDepth: 3 })),
  // Sort keys of the top-level members: any order of items, nextCursor, an older platform's moreData and the rest.
  order: fc.array(fc.double({ noNaN: true }), { minLength: 8, maxLength: 8 }),
  indent: fc.constantFrom(undefined, 1, 2, '\t'),
  crlf: fc.boolean(),
});
type Answer = typeof answer extends fc.Arbitrary<infer T> ? T : never;

/** The answer's text, its members in the generated order; other sets' names differ from the set's. */
function write(a: Answer): string {
  const before = a.setsBefore.filter(([k]) => !a.setsAfter.some(([j]) => j === k));
  const items = Object.fromEntries([...before, [SET, a.instances], ...a.setsAfter]);
  const cursors = Object.fromEntries(
    a.cursor === undefined ? a.otherCursors : a.otherCursors.toSpliced(a.cursorAt, 0, [SET, a.cursor]),
  );
  const top: [string, unknown][] = [
    ['items', items],
    ...(a.hasNextCursor ? [['nextCursor', cursors] as [string, unknown]] : []),
    ...(a.moreData === undefined ? [] : [['moreData', a.moreData] as [string, unknown]]),
    ...a.unknown,
  ];
  const ordered = top.map((m, i) => ({ m, k: a.order[i] ?? i })).sort((x, y) => x.k - y.k).map(({ m }) => m);
  const text = JSON.stringify(Object.fromEntries(ordered), null, a.indent);
  // JSON.stringify escapes line breaks inside strings: every raw one lies between tokens.
  return a.crlf ? text.replaceAll('\n', '\r\n') : text;
}

describe('scanSyncPage on generated answers (fast-check, seeded)', () => {
  it('reads every answer JSON.stringify writes, compact or indented, as JSON.parse does', () => {
    const seen = { lineBreaks: 0, noCursor: 0, moreData: 0, empty: 0, setNotFirst: 0 };
    fc.assert(
      fc.property(answer, (a) => {
        const body = bytes(write(a));
        expectAgreement(body);
        const scan = scanSyncPage(body, SET)!;
        if (scan.lineBreaks) seen.lineBreaks++;
        if (scan.nextCursor === undefined) seen.noCursor++;
        if (a.moreData !== undefined) seen.moreData++;
        if (a.instances.length === 0) seen.empty++;
        if (a.setsBefore.length > 0) seen.setNotFirst++;
        expect(scan.bounds).toHaveLength(2 * a.instances.length);
        expect(scan.lineBreaks).toBe(slices(body, scan.bounds).some((range) => /[\r\n]/.test(range)));
        expect(scan.nextCursor).toBe(a.hasNextCursor ? a.cursor : undefined);
      }),
      { seed: 29, numRuns: 400 },
    );
    // The generator reaches each case the property is for.
    Object.entries(seen).forEach(([what, count]) => expect(count, what).toBeGreaterThan(20));
  });

  it('when it answers for an edited answer, JSON.parse reads the same (random edits)', () => {
    const edit = fc.record({
      at: fc.nat(),
      kind: fc.constantFrom('delete', 'insert', 'replace'),
      char: fc.constantFrom(...'{}[]",:\\ \n\t0123456789-+.eEtrufalsn/bux\u0000\u001f\u00e9'.split('')),
    });
    let answered = 0;
    fc.assert(
      fc.property(answer, fc.array(edit, { minLength: 1, maxLength: 3 }), (a, edits) => {
        let text = write(a);
        for (const { at, kind, char } of edits) {
          const i = at % (text.length + 1);
          if (kind === 'delete') text = text.slice(0, i) + text.slice(i + 1);
          else if (kind === 'insert') text = text.slice(0, i) + char + text.slice(i);
          else text = text.slice(0, i) + char + text.slice(i + 1);
        }
        const body = bytes(text);
        const scan = scanSyncPage(body, SET);
        if (scan === undefined) return;
        answered++;
        expectAgreement(body);
        expect(scan.nextCursor === undefined || (typeof scan.nextCursor === 'string' && scan.nextCursor !== '')).toBe(true);
      }),
      { seed: 2929, numRuns: 2000 },
    );
    // Most edits land in whitespace or strings and keep the answer valid: the check above ran.
    expect(answered).toBeGreaterThan(100);
  });
});
