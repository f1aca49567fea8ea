import fc from 'fast-check';

/**
 * Instances of EVERY_KIND_VIEW (instance-walk.ts) as fast-check arbitraries, written as JSON text
 * the way a server might: any key order, whitespace and line breaks between tokens, escapes where
 * none are needed, numbers in any form. Most are the plain case; the rest hold what the walk must
 * leave to the parse, one each (a value of another type, a key twice, another group, ...).
 */

/** JSON as written: a string, a number's text, a literal, an array, an object (its keys may repeat). */
export type Raw =
  | { readonly s: string } |
  { readonly n: string } |
  { readonly l: 'true' | 'false' | 'null' } |
  { readonly a: readonly Raw[] } |
  { readonly o: readonly (readonly [string, Raw])[] };

/**
 * How a text is written: the chance of whitespace between two tokens, of an escape for a
 * character of a string and of a key, whether keys are shuffled.
 */
export interface Style {
  readonly seed: number;
  readonly spaces: number;
  readonly escapes: number;
  readonly keyEscapes: number;
  readonly shuffle: boolean;
}

const str = (s: string): Raw => ({ s });
/** One of the arbitraries, each as often as its weight says (0: never). */
const weighted = <T>(...choices: [fc.Arbitrary<T>, number][]): fc.Arbitrary<T> =>
  fc.oneof(...choices.map(([arbitrary, weight]) => ({ arbitrary, weight })));
const num = (n: string): Raw => ({ n });
const NULL: Raw = { l: 'null' };

const text = fc.oneof(
  { arbitrary: fc.string({ unit: 'binary', maxLength: 8 }), weight: 3 },
  { arbitrary: fc.constantFrom('', 'a"b', 'back\\slash', 'tab\tline\nfeed', '\u0000\u001f', 'ünï ✓ 温度 🙂', 'a/b'), weight: 1 },
).map(str);
const safeInteger = fc.oneof(fc.integer(), fc.maxSafeInteger(), fc.constantFrom(2 ** 53 - 1, -(2 ** 53 - 1), 0));
const integerText = safeInteger.map((v) => num(String(v)));
/** A number as JSON.stringify writes it, in exponent form, or with a trailing zero in its fraction. */
const numberForms = (value: number) => {
  const shortest = JSON.stringify(value);
  const padded = shortest.includes('e') ? shortest : `${shortest}${shortest.includes('.') ? '0' : '.0'}`;
  return fc.constantFrom(shortest, value.toExponential(), padded);
};
const double = fc.double({ noNaN: true, noDefaultInfinity: true }).chain(numberForms).map(num);
const float = fc.float({ noNaN: true, noDefaultInfinity: true }).chain(numberForms).map(num);
const digits = (value: number, width: number) => String(value).padStart(width, '0');
/** A number in [min, valid], or (`odd`) now and then up to `beyond`: a day, hour or second that does not exist. */
const part = (odd: boolean, min: number, valid: number, beyond: number) =>
  odd
    ? weighted([fc.integer({ min, max: valid }), 5], [fc.integer({ min, max: beyond }), 1])
    : fc.integer({ min, max: valid });
const dayOf = (odd: boolean) =>
  fc.tuple(fc.integer({ min: 1, max: 9999 }), part(odd, 1, 12, 13), part(odd, 1, 28, 31))
    .map(([y, m, d]) => `${digits(y, 4)}-${digits(m, 2)}-${digits(d, 2)}`);
const zoneOf = (odd: boolean) =>
  fc.oneof(fc.constant('Z'), fc.tuple(fc.constantFrom('+', '-'), part(odd, 0, 23, 24), part(odd, 0, 59, 60))
    .map(([sign, h, m]) => `${sign}${digits(h, 2)}:${digits(m, 2)}`));
const fraction = fc.oneof(fc.constant(''), fc.stringMatching(/^\.[0-9]{1,9}$/));
const timestampOf = (odd: boolean) =>
  fc.tuple(
    dayOf(odd),
    part(odd, 0, 23, 24),
    part(odd, 0, 59, 60),
    part(odd, 0, 59, 60),
    odd ? fc.stringMatching(/^(\.[0-9]{0,11})?$/) : fraction,
    zoneOf(odd),
  )
    .map(([date, h, m, s, f, z]) => `${date}T${digits(h, 2)}:${digits(m, 2)}:${digits(s, 2)}${f}${z}`);

/** A direct relation: its two texts in either order, now and then with a key missing, another key, a non-text. */
const nodeRef = (odd: boolean): fc.Arbitrary<Raw> =>
  fc.tuple(text, text, fc.boolean(), odd ? fc.constantFrom('none', 'extra', 'missing', 'number') : fc.constant('none'))
    .map(([space, externalId, swap, oddity]) => {
      const entries: [string, Raw][] = [['space', oddity === 'number' ? num('1') : space], ['externalId', externalId]];
      if (oddity === 'missing') entries.pop();
      if (oddity === 'extra') entries.push(['version', num('1')]);
      return { o: swap ? entries.reverse() : entries };
    });

/** Any JSON, as written: escapes, number forms, keys of digits, now and then a key twice or an integer beyond 2^53. */
const json = (odd: boolean): fc.Arbitrary<Raw> =>
  fc.letrec<{ value: Raw }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      text,
      double,
      fc.constantFrom<Raw>({ l: 'true' }, { l: 'false' }, NULL, num('-0'), num('1E+21'), num('1.50')),
      ...(odd ? [fc.constantFrom(num('9007199254740993'), num('12345678901234567890'))] : []),
      fc.array(tie('value'), { maxLength: 3 }).map((a): Raw => ({ a })),
      fc.array(fc.tuple(fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom('1', '0', '__proto__')), tie('value')), { maxLength: 3 })
        .map((entries): Raw => ({ o: odd && entries.length > 0 ? [...entries, entries[0]!] : unique(entries) })),
    ),
  })).value;

/** The entries of an object with the first of each key only. */
function unique(entries: readonly (readonly [string, Raw])[]): (readonly [string, Raw])[] {
  return entries.filter(([key], i) => entries.findIndex(([other]) => other === key) === i);
}

/** A value of each property type a column takes (`direct` and the fields' `type`: node-ref). */
const GOOD: Readonly<Record<string, (odd: boolean) => fc.Arbitrary<Raw>>> = {
  text: () => text,
  enum: () => text,
  int32: () => fc.integer().map((v) => num(String(v))),
  int64: () => integerText,
  float32: () => float,
  float64: () => double,
  boolean: () => fc.boolean().map((v): Raw => ({ l: v ? 'true' : 'false' })),
  timestamp: (odd) => weighted([timestampOf(odd).map(str), 4], [integerText, 1]),
  date: (odd) => dayOf(odd).map(str),
  json,
  direct: nodeRef,
};
const TYPES = Object.keys(GOOD);

/** A value for a property of `type`: one it takes, or null. */
const propertyValue = (type: string) => weighted([GOOD[type]!(false), 8], [fc.constant(NULL), 1]);
const listValue = (type: string) => fc.array(GOOD[type]!(false), { maxLength: 4 }).map((a): Raw => ({ a }));

/** Per type, values at the edge of what it takes, or just past it. */
const EDGES: Readonly<Record<string, readonly Raw[]>> = {
  text: [num('1'), { l: 'true' }],
  enum: [num('1'), { o: [] }],
  int32: [num('2147483648'), num('-2147483649'), num('2147483647'), num('1.5'), num('1.0'), str('1')],
  int64: [num('9007199254740992'), num('-9007199254740993'), num('1e3'), num('1.5'), str('1')],
  float32: [num('3.5e38'), num('3.4028234663852886e38'), num('-1e39'), str('1')],
  // Past the range of a double (1e400) never reaches a walk: the client refuses the answer (checkAnswerBytes).
  float64: [num('1.7976931348623157e308'), num('-5e-324'), num('1e-400'), num('1e308'), str('1')],
  boolean: [str('true'), num('1')],
  timestamp: [str('2023-02-29T00:00:00Z'), str('2024-01-01T24:00:00Z'), str('2024-01-01T00:00:00'), num('1.5'), num('1e300')],
  date: [str('2023-02-29'), str('2024-1-01'), num('20240101')],
  json: [num('9007199254740993'), { o: [['a', num('1')], ['a', num('2')]] }, { a: [{ o: [['b', NULL], ['b', NULL]] }] }],
  direct: [str('s:e'), { o: [['space', str('s')]] }, { o: [['space', NULL], ['externalId', str('e')]] }],
};

/** A value a property of `type` may not take: at the edge of its range, odd in its shape, of another type. */
const wrongValue = (type: string) =>
  weighted(
    [fc.constantFrom(...EDGES[type]!), 3],
    [GOOD[type]!(true), 2],
    [fc.constantFrom(...TYPES).chain((other) => GOOD[other]!(false)), 1],
  );
/** A list a list property of `type` may not take: a null or a wrong value among its elements, or no list. */
const wrongList = (type: string) =>
  fc.oneof(
    fc.tuple(listValue(type), fc.oneof(fc.constant(NULL), wrongValue(type)), fc.nat())
      .map(([list, odd, at]): Raw => {
        const items = [...(list as { a: Raw[] }).a];
        items.splice(at % (items.length + 1), 0, odd);
        return { a: items };
      }),
    wrongValue(type),
  );

/** The view's group: each property present or not, with a value it takes. */
const group: fc.Arbitrary<[string, Raw][]> = fc.tuple(
  ...TYPES.flatMap((type) => [
    fc.option(propertyValue(type).map((v): [string, Raw] => [type, v]), { nil: undefined }),
    fc.option(listValue(type).map((v): [string, Raw] => [`${type}s`, v]), { nil: undefined }),
  ]),
  fc.option(nodeRef(false).map((v): [string, Raw] => ['type', v]), { nil: undefined }),
).map((members) => members.filter((member) => member !== undefined));

/**
 * One thing that may make an instance not the plain case: a property's or a field's value (set,
 * or added twice), or the instance's shape (`properties` absent, null, with another group; a
 * field without a column; a field missing).
 */
type Oddity =
  | { readonly at: 'group' | 'top'; readonly key: string; readonly value: Raw; readonly twice: boolean } |
  { readonly at: 'shape'; readonly shape: string };

/** A member of one of these keys with one of these values. */
const member = (keys: string[], values: fc.Arbitrary<Raw>) =>
  fc.tuple(fc.constantFrom(...keys), values).map(([key, value]): [string, Raw] => [key, value]);

const oddity: fc.Arbitrary<Oddity> = fc.oneof(
  fc.record({
    at: fc.constant('group' as const),
    twice: fc.boolean(),
    member: fc.constantFrom(...TYPES).chain((type) =>
      fc.oneof(
        wrongValue(type).map((value): [string, Raw] => [type, value]),
        wrongList(type).map((value): [string, Raw] => [`${type}s`, value]),
        fc.constantFrom<[string, Raw]>(['addedLater', { l: 'true' }], ['shape', { o: [['type', str('Point')]] }]),
      )),
  }).map(({ member: [key, value], ...rest }) => ({ ...rest, key, value })),
  fc.record({
    at: fc.constant('top' as const),
    twice: fc.boolean(),
    member: fc.oneof(
      member(['type', 'startNode', 'endNode'], fc.oneof(nodeRef(true), fc.constant(NULL), text)),
      member(['createdTime', 'lastUpdatedTime', 'deletedTime', 'version'], fc.oneof(GOOD.timestamp!(true), wrongValue('int64'))),
      member(['space', 'externalId', 'instanceType', 'existingVersion'], fc.oneof(text, wrongValue('text'))),
    ),
  }).map(({ member: [key, value], ...rest }) => ({ ...rest, key, value })),
  fc.constantFrom('no-properties', 'null-properties', 'empty-properties', 'other-view', 'other-space', 'no-space', 'no-version')
    .map((shape) => ({ at: 'shape' as const, shape })),
);

/** `members` with `key` set to `value` (where it was, or last), or with it added once more. */
function withMember(members: readonly [string, Raw][], key: string, value: Raw, twice: boolean): [string, Raw][] {
  const at = members.findIndex(([name]) => name === key);
  if (twice || at < 0) return [...members, [key, value]];
  return members.map((member, i) => (i === at ? [key, value] : member));
}

const SOURCE = 'Everything/v1';
const propertiesOf = (members: [string, Raw][]): Raw => ({ o: [['test_space', { o: [[SOURCE, { o: members }]] }]] });

/** An instance of EVERY_KIND_VIEW: a node or an edge, deleted or not; plain, or (`odd`) with one oddity. */
export function instance(odd: boolean, edge: boolean): fc.Arbitrary<Raw> {
  const time = weighted([integerText, 9], [GOOD.timestamp!(false), 1]);
  return fc.record({
    space: text,
    externalId: text,
    version: fc.nat().map((v) => num(String(v))),
    createdTime: time,
    lastUpdatedTime: time,
    deletedTime: fc.option(time, { nil: undefined }),
    type: edge ? nodeRef(false) : fc.option(nodeRef(false), { nil: undefined }),
    ends: fc.tuple(nodeRef(false), nodeRef(false)),
    group,
    oddity: odd ? oddity.map((one): Oddity | undefined => one) : fc.constant(undefined),
  }).map(({ ends, group, oddity, ...fields }): Raw => {
    let members: [string, Raw][] = [['instanceType', str(edge ? 'edge' : 'node')]];
    for (const [key, value] of Object.entries(fields)) if (value !== undefined) members.push([key, value]);
    if (edge) members.push(['startNode', ends[0]], ['endNode', ends[1]]);
    let values = group;
    if (oddity?.at === 'group') values = withMember(values, oddity.key, oddity.value, oddity.twice);
    if (oddity?.at === 'top') members = withMember(members, oddity.key, oddity.value, oddity.twice);
    const shape = oddity?.at === 'shape' ? oddity.shape : undefined;
    const properties: Record<string, Raw | undefined> = {
      'no-properties': undefined,
      'null-properties': NULL,
      'empty-properties': { o: [] },
      'other-view': { o: [['test_space', { o: [[SOURCE, { o: values }], ['Other/v1', { o: [['x', num('1')]] }]] }]] },
      'other-space': { o: [['test_space', { o: [[SOURCE, { o: values }]] }], ['elsewhere', { o: [['Thing/v1', { o: [] }]] }]] },
    };
    members.push(['properties', shape !== undefined && shape in properties ? properties[shape]! : propertiesOf(values)]);
    if (shape === 'no-properties') members.pop();
    if (shape === 'no-space' || shape === 'no-version') members = members.filter(([key]) => key !== shape.slice(3));
    return { o: members };
  });
}

/** Writes a Raw value as JSON text in `style`. */
export function write(value: Raw, style: Style): string {
  let state = style.seed >>> 0;
  const random = () => {
    // mulberry32: the same choices for the same seed.
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const gap = () => (random() < style.spaces ? [' ', '\n', '\t', '\r\n  '][Math.floor(random() * 4)]! : '');
  const quote = (s: string, chance = style.escapes) => {
    let out = '"';
    for (const char of s) {
      const code = char.codePointAt(0)!;
      if (char === '"' || char === '\\' || code < 0x20 || random() < chance) {
        out += code > 0xffff
          ? char.split('').map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')
          : random() < 0.5 && JSON.stringify(char).length === 4 ? JSON.stringify(char).slice(1, -1) : `\\u${code.toString(16).padStart(4, '0')}`;
      } else {
        out += char === '/' && random() < 5 * chance ? '\\/' : char;
      }
    }
    return `${out}"`;
  };
  const go = (raw: Raw): string => {
    if ('s' in raw) return quote(raw.s);
    if ('n' in raw) return raw.n;
    if ('l' in raw) return raw.l;
    if ('a' in raw) return `[${gap()}${raw.a.map((item) => `${go(item)}${gap()}`).join(`,${gap()}`)}]`;
    const entries = [...raw.o];
    if (style.shuffle) entries.sort(() => random() - 0.5);
    return `{${gap()}${entries.map(([key, item]) => `${quote(key, style.keyEscapes)}${gap()}:${gap()}${go(item)}${gap()}`).join(`,${gap()}`)}}`;
  };
  return go(value);
}

/** A style: mostly compact and in order, now and then spaced, escaped, shuffled. */
export const style: fc.Arbitrary<Style> = fc.record({
  seed: fc.integer(),
  spaces: fc.constantFrom(0, 0, 0.1, 0.5),
  escapes: fc.constantFrom(0, 0, 0.05, 0.3),
  keyEscapes: fc.constantFrom(0, 0, 0, 0.02),
  shuffle: fc.boolean(),
});
