import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AskedQuery } from '../../src/export/kinds/datapoints/points-answer.js';
import type { Aggregate, PointsShape } from '../../src/resources/index.js';
import { expectSameReads, scannedSeries } from '../support/points-paths.js';

/**
 * Random answers of `POST /timeseries/data/list`, mostly well formed, some broken, written compact,
 * with spaces or indented, with escapes and Unicode, odd keys and numbers: read from their bytes
 * and parsed, they give the same series, points, Parquet values and NDJSON lines, or the same error.
 */

/** Mostly `usual`, now and then one of `odd`. */
const mostly = <T>(usual: fc.Arbitrary<T>, ...odd: fc.Arbitrary<T>[]): fc.Arbitrary<T> =>
  fc.oneof({ arbitrary: usual, weight: 12 }, ...odd.map((arbitrary) => ({ arbitrary, weight: 1 })));
/** Almost always `usual`: for what each point may break, so that most answers stay well formed. */
const almost = <T>(usual: fc.Arbitrary<T>, ...odd: fc.Arbitrary<T>[]): fc.Arbitrary<T> =>
  fc.oneof({ arbitrary: usual, weight: 60 }, ...odd.map((arbitrary) => ({ arbitrary, weight: 1 })));

const text = fc.string({ unit: 'binary', maxLength: 8 });
/** A JSON string token: as JSON.stringify writes it, or with its first character escaped. */
const stringToken = (value: fc.Arbitrary<string>) =>
  fc.tuple(value, fc.boolean()).map(([s, escaped]) =>
    escaped && s.length > 0 ? `"${escapedFirst(s)}${JSON.stringify(s.slice(1)).slice(1)}` : JSON.stringify(s),
  );

/** The first UTF-16 unit of `s` as a `\\u` escape. */
function escapedFirst(s: string): string {
  return `\\u${s.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

const numberToken = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
  fc.integer({ min: -1000, max: 1000 }).map(String),
  fc.tuple(fc.integer({ min: -99_999, max: 99_999 }), fc.nat(6)).map(([n, places]) => (n / 10 ** places).toString()),
  fc.constantFrom('-0', '0.0', '1e400', '-1e400', '1E2', '2.5e-3', '12345678901234567890', '0.1', '9007199254740993'),
);
const special = almost(fc.constantFrom('"NaN"', '"Infinity"', '"-Infinity"', '"N\\u0061N"'), fc.constant('"toString"'));
const oddValue = fc.constantFrom('null', 'true', '{}', '[1]', '"x"');

interface Layout {
  /** Whitespace after commas and colons. */
  gap: string;
}

/** An object of `members` (`"key": value`), the keys of those `escaped` written with an escape. */
function object(members: readonly [string, string][], escaped: readonly boolean[], { gap }: Layout): string {
  const written = members.map(([key, value], i) => {
    const name = escaped[i] === true ? `${escapedFirst(key)}${key.slice(1)}` : key;
    return `"${name}":${gap}${value}`;
  });
  return `{${written.join(`,${gap}`)}}`;
}

const statusToken = mostly(
  fc.tuple(fc.integer({ min: -5, max: 1 << 30 }), fc.option(stringToken(text), { nil: undefined })).map(
    ([code, symbol]) => (symbol === undefined ? `{"code":${code}}` : `{"code":${code},"symbol":${symbol}}`),
  ),
  fc.constantFrom('{"code":"1"}', 'null', '{"symbol":"s"}', '{"code":1,"symbol":5}', '{"code":1.0}', '{"code":2,"code":3,"x":[]}'),
);

/** The members of a point after its timestamp. */
function pointFields(shape: PointsShape, isString: boolean): fc.Arbitrary<[string, string][]> {
  const field = fc.tuple(fc.constantFrom('x', '__proto__', '1', 'extra', 'value', 'é'), almost(numberToken, oddValue));
  const extra = mostly(fc.constant<[string, string][]>([]), field.map((one): [string, string][] => [one]));
  if (shape.aggregates !== undefined) {
    const aggregates = shape.aggregates.map((name) => {
      const usual = name.startsWith('count') ? fc.nat(1000).map(String) : mostly(numberToken, special);
      const value = fc.option(almost(usual, numberToken, oddValue), { nil: undefined });
      return value.map((one) => (one === undefined ? [] : [[name, one] as [string, string]]));
    });
    return fc.tuple(fc.tuple(...aggregates), extra).map(([values, more]) => [...values.flat(), ...more]);
  }
  const numeric = fc.oneof({ arbitrary: numberToken, weight: 8 }, special);
  const value = isString
    ? mostly(stringToken(text), numberToken, oddValue)
    : almost(numeric, oddValue, stringToken(text));
  return fc
    .tuple(fc.option(value, { nil: undefined, freq: 8 }), fc.option(statusToken, { nil: undefined, freq: 2 }), extra)
    .map(([v, status, more]) => [
      ...(v === undefined ? [] : [['value', v] as [string, string]]),
      ...(status === undefined ? [] : [['status', status] as [string, string]]),
      ...more,
    ]);
}

/** The points of an item answering `query`: timestamps mostly rising inside its window. */
function points(query: AskedQuery, shape: PointsShape, isString: boolean, layout: Layout): fc.Arbitrary<string> {
  const point = fc.tuple(
    almost(fc.integer({ min: 1, max: 12 }), fc.constant(0)),
    almost(fc.constant(''), fc.constantFrom('.0', 'e0', '"', 'x')),
    pointFields(shape, isString),
    fc.array(mostly(fc.constant(false), fc.constant(true)), { maxLength: 4 }),
  );
  const list = mostly(fc.array(point, { maxLength: query.limit }), fc.array(point, { maxLength: query.limit + 1 }));
  // A chain of aggregates started again by time gets its last bucket again first.
  const again = shape.aggregates !== undefined && query.last !== null ? fc.boolean() : fc.constant(false);
  return fc.tuple(list, again).map(([list, repeated]) => {
    let time = query.last ?? query.start - 1;
    if (repeated) time--;
    const texts = list.map(([step, form, fields, escapes]) => {
      time += step;
      const timestamp = form === '"' ? `"${time}"` : form === 'x' ? 'null' : `${time}${form}`;
      return object([['timestamp', timestamp], ...fields], escapes, layout);
    });
    return `[${texts.join(`,${layout.gap}`)}]`;
  });
}

/** An item answering `query`, its members in a random order now and then. */
function item(query: AskedQuery, shape: PointsShape, layout: Layout): fc.Arbitrary<string> {
  const id = 'id' in query.ref ? query.ref.id : 9;
  const externalId = 'externalId' in query.ref ? query.ref.externalId : undefined;
  return fc.boolean().chain((isString) =>
    fc
      .tuple(
        almost(fc.constant(String(id)), fc.constantFrom('"1"', '1.0', '7', 'null')),
        almost(fc.constant(externalId === undefined ? undefined : JSON.stringify(externalId)), stringToken(text), fc.constant('5')),
        almost(fc.constant(String(isString)), fc.constant('"true"')),
        fc.option(almost(stringToken(text.filter((s) => s !== '')), fc.constantFrom('""', 'null')), { nil: undefined }),
        points(query, shape, isString, layout),
        fc.array(fc.tuple(mostly(fc.constantFrom('isStep', 'unit'), fc.constantFrom('id', 'isString', 'externalId')), stringToken(text)), {
          maxLength: 1,
        }),
        mostly(fc.constant(false), fc.constant(true)),
        fc.array(mostly(fc.constant(false), fc.constant(true)), { maxLength: 8 }),
      )
      .map(([idText, externalIdText, isStringText, cursor, datapoints, extra, shuffled, escapes]) => {
        const members: [string, string][] = [['id', idText]];
        if (externalIdText !== undefined) members.push(['externalId', externalIdText]);
        members.push(['isString', isStringText], ...extra);
        if (cursor !== undefined) members.push(['nextCursor', cursor]);
        members.push(['datapoints', datapoints]);
        if (shuffled) members.reverse();
        return object(members, escapes, layout);
      }),
  );
}

const queryArbitrary: fc.Arbitrary<AskedQuery> = fc
  .tuple(
    fc.oneof(fc.integer({ min: 1, max: 3 }).map((id) => ({ id })), fc.constantFrom('a', 'b', 'é"').map((externalId) => ({ externalId }))),
    fc.integer({ min: -5, max: 20 }),
    mostly(fc.integer({ min: 30, max: 200 }), fc.integer({ min: 1, max: 30 })),
    fc.integer({ min: 1, max: 5 }),
    fc.option(fc.integer({ min: 0, max: 10 }), { nil: null, freq: 3 }),
  )
  .map(([ref, start, span, limit, last]) => ({
    ref,
    start,
    end: start + span,
    limit,
    last: last === null ? null : start + last,
  }));

const shapeArbitrary: fc.Arbitrary<PointsShape> = fc.oneof(
  fc.boolean().map((includeStatus) => ({ includeStatus })),
  fc.constantFrom<Aggregate[]>(['count', 'average'], ['sum', 'countBad', 'min']).map((aggregates) => ({
    aggregates,
    granularity: '1h',
    includeStatus: false,
  })),
);

const answerArbitrary = fc
  .tuple(fc.array(queryArbitrary, { minLength: 1, maxLength: 3 }), shapeArbitrary, fc.constantFrom('', ' ', '\n  ', '\t'))
  .chain(([queries, shape, gap]) =>
    fc
      .tuple(...queries.map((query) => fc.option(item(query, shape, { gap }), { nil: undefined, freq: 6 })))
      .map((items) => ({ queries, shape, body: `{"items":[${items.filter((each) => each !== undefined).join(`,${gap}`)}]}` })),
  );

describe('the datapoints answer read from its bytes, on random answers', () => {
  it('gives what JSON.parse gives: the same series, points, Parquet values and NDJSON lines, or the same error (fast-check)', async () => {
    const seen = { scanned: 0, parsed: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(answerArbitrary, async ({ queries, shape, body }) => {
        const read = await expectSameReads(Buffer.from(body), queries, shape);
        if ('error' in read) seen.refused++;
        else {
          const scanned = scannedSeries(read);
          seen.scanned += scanned;
          seen.parsed += read.series.length - scanned;
        }
      }),
      { numRuns: 400 },
    );
    // The answers exercise both ways of reading an item, and the errors.
    expect(seen.scanned).toBeGreaterThan(100);
    expect(seen.parsed).toBeGreaterThan(50);
    expect(seen.refused).toBeGreaterThan(50);
  });
});
