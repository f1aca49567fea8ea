import { describe, expect, it } from 'vitest';
import type { AskedQuery } from '../../src/export/kinds/datapoints/points-answer.js';
import type { PointsShape } from '../../src/resources/index.js';
import { expectSameReads, scannedSeries, type TestShape } from '../support/points-paths.js';

/**
 * Answers of `POST /timeseries/data/list` that are broken, or odd but valid, read from their bytes
 * and parsed: the same error (class and message), or the same series, points, Parquet values and
 * NDJSON lines. points-scan.test.ts has the simulator's answers.
 */
const RAW: PointsShape = { includeStatus: true };
const AGGREGATES: PointsShape = { aggregates: ['count', 'average'], granularity: '1h', includeStatus: false };

const QUERIES: AskedQuery[] = [
  { ref: { id: 1 }, start: 0, end: 100, limit: 4, last: null },
  { ref: { externalId: 'b' }, start: 10, end: 100, limit: 3, last: null },
];

const numericItem = (points: string, head = '"id":1,"externalId":"a","isString":false,"isStep":false') =>
  `{${head},"datapoints":[${points}]}`;
const stringItem = (points: string, head = '"id":2,"externalId":"b","isString":true,"nextCursor":"c2"') =>
  `{${head},"datapoints":[${points}]}`;
const answer = (...items: string[]) => Buffer.from(`{"items":[${items.join(',')}]}`);
const GOOD_NUMERIC = '{"timestamp":10,"value":1.5},{"timestamp":20,"value":2}';
const GOOD_STRING = '{"timestamp":15,"value":"on"}';
/** An answer whose second item's points are `points`. */
const withStrings = (points: string) => answer(numericItem(GOOD_NUMERIC), stringItem(points));
const withNumbers = (points: string) => answer(numericItem(points), stringItem(GOOD_STRING));

async function expectRefused(body: Buffer, queries = QUERIES, shape: TestShape = RAW): Promise<void> {
  const read = await expectSameReads(body, queries, shape);
  expect(read, body.toString()).toMatchObject({ code: 'E_BAD_RESPONSE' });
}

async function expectTaken(body: Buffer, queries = QUERIES, shape: TestShape = RAW): Promise<number> {
  const read = await expectSameReads(body, queries, shape);
  expect(read, body.toString()).toHaveProperty('series');
  return scannedSeries(read);
}

describe('a broken datapoints answer, read from its bytes', () => {
  it.each([
    ['timestamps out of order', '{"timestamp":20,"value":1},{"timestamp":10,"value":2}'],
    ['a timestamp twice', '{"timestamp":20,"value":1},{"timestamp":20,"value":2}'],
    ['a timestamp at the end of the window', '{"timestamp":100,"value":1}'],
    ['a timestamp before its start', '{"timestamp":-1,"value":1}'],
    ['a timestamp that is a string', '{"timestamp":"10","value":1}'],
    ['a timestamp with a fraction', '{"timestamp":10.5,"value":1}'],
    ['a timestamp too large for a double', '{"timestamp":9007199254740993,"value":1}'],
    ['no timestamp', '{"value":1}'],
    ['a value that is another string', '{"timestamp":10,"value":"x"}'],
    ['a value named like Object.prototype', '{"timestamp":10,"value":"toString"}'],
    ['a value that is true', '{"timestamp":10,"value":true}'],
    ['a value that is null', '{"timestamp":10,"value":null}'],
    ['a value that is an object', '{"timestamp":10,"value":{"v":1}}'],
    ['a status code that is a string', '{"timestamp":10,"value":1,"status":{"code":"1"}}'],
    ['a status symbol that is a number', '{"timestamp":10,"value":1,"status":{"code":1,"symbol":5}}'],
    ['a status without a code', '{"timestamp":10,"value":1,"status":{"symbol":"Bad"}}'],
    ['a status that is null', '{"timestamp":10,"value":1,"status":null}'],
    ['a status that is a string', '{"timestamp":10,"value":1,"status":"Good"}'],
    ['more points than the limit', '{"timestamp":10},{"timestamp":11},{"timestamp":12},{"timestamp":13},{"timestamp":14}'],
    ['a point that is a number', '5'],
    ['a point that is an array', '[10,1]'],
    ['a point that is null', 'null'],
  ])('of a numeric series, with %s, fails as when parsed', async (_, points) => {
    await expectRefused(withNumbers(points));
  });

  it.each([
    ['a value that is a number', '{"timestamp":15,"value":5}'],
    ['a value that is null', '{"timestamp":15,"value":null}'],
    ['a status code with a fraction', '{"timestamp":15,"value":"x","status":{"code":1.5}}'],
  ])('of a string series, with %s, fails as when parsed', async (_, points) => {
    await expectRefused(withStrings(points));
  });

  it.each([
    ['an item that is not an object', answer('[1]')],
    ['an item without an id', answer(numericItem(GOOD_NUMERIC, '"isString":false'))],
    ['an id that is a string', answer(numericItem(GOOD_NUMERIC, '"id":"1","isString":false'))],
    ['an id with a fraction', answer(numericItem(GOOD_NUMERIC, '"id":1.5,"isString":false'))],
    ['an externalId that is a number', answer(numericItem(GOOD_NUMERIC, '"id":1,"externalId":5,"isString":false'))],
    ['isString that is a string', answer(numericItem(GOOD_NUMERIC, '"id":1,"isString":"false"'))],
    ['no isString', answer(numericItem(GOOD_NUMERIC, '"id":1'))],
    ['an empty nextCursor', answer(numericItem(GOOD_NUMERIC, '"id":1,"isString":false,"nextCursor":""'))],
    ['a nextCursor that is null', answer(numericItem(GOOD_NUMERIC, '"id":1,"isString":false,"nextCursor":null'))],
    ['datapoints that are not an array', Buffer.from('{"items":[{"id":1,"isString":false,"datapoints":{}}]}')],
    ['no datapoints', Buffer.from('{"items":[{"id":1,"isString":false}]}')],
    ['a series not asked for', answer(numericItem(GOOD_NUMERIC, '"id":3,"isString":false'))],
    ['the series out of order', answer(stringItem(GOOD_STRING), numericItem(GOOD_NUMERIC))],
    ['a series twice', answer(numericItem(GOOD_NUMERIC), numericItem(GOOD_NUMERIC))],
    ['isString changed after the points', answer(`{"id":1,"isString":false,"datapoints":[${GOOD_NUMERIC}],"isString":true}`)],
    ['a series asked by externalId answered with another', answer(stringItem(GOOD_STRING, '"id":2,"externalId":"c","isString":true'))],
    ['items that are not an array', Buffer.from('{"items":{}}')],
    ['no items', Buffer.from('{"nextCursor":"x"}')],
    ['a body that is an array', Buffer.from('[]')],
  ])('with %s fails as when parsed', async (_, body) => {
    await expectRefused(body);
  });

  it('with a point at or before the chain\'s last point fails as when parsed', async () => {
    const queries = QUERIES.map((query) => ({ ...query, last: 10 }));
    await expectRefused(answer(numericItem('{"timestamp":10,"value":1}')), queries);
  });

  it.each([
    ['a count with a fraction', '{"timestamp":10,"count":1.5}'],
    ['a count that is a string', '{"timestamp":10,"count":"1"}'],
    ['an average that is another string', '{"timestamp":10,"average":"x"}'],
    ['an average that is null', '{"timestamp":10,"average":null}'],
    ['a bucket after the window', '{"timestamp":100,"count":1}'],
  ])('of aggregates, with %s, fails as when parsed', async (_, points) => {
    await expectRefused(answer(numericItem(points)), QUERIES, AGGREGATES);
  });

  const HOUR = 3_600_000;
  const DAY = 24 * HOUR;
  const START = Date.UTC(2024, 2, 31, 10, 30);
  const FROM_START: AskedQuery[] = [{ ref: { id: 1 }, start: START, end: START + 100 * DAY, limit: 4, last: null }];
  const bucket = (timestamp: number) => answer(numericItem(`{"timestamp":${timestamp},"count":1}`));
  const shape = (granularity: string, timeZone?: string): TestShape =>
    ({ ...AGGREGATES, granularity, ...(timeZone === undefined ? {} : { timeZone }) });

  it.each([
    ['1h', undefined, START - 30 * 60_000, START - HOUR],
    ['15m', undefined, START, START - 60_000],
    ['1d', undefined, Date.UTC(2024, 2, 31), START - DAY],
    ['1mo', undefined, Date.UTC(2024, 2, 1), START - 31 * DAY],
    // A local unit may last longer by a change of the zone's offset inside it: 26 hours at most.
    ['1d', 'Europe/Oslo', Date.UTC(2024, 2, 30, 23), START - DAY - 26 * HOUR],
    ['1h', 'UTC+05:30', START - HOUR + 1, START - HOUR],
  ])('of aggregates by %s (time zone %s): the bucket that holds the start taken, one a longest unit before it refused, as when parsed', async (granularity, timeZone, holding, early) => {
    expect(await expectTaken(bucket(holding), FROM_START, shape(granularity, timeZone))).toBe(1);
    await expectRefused(bucket(early), FROM_START, shape(granularity, timeZone));
    await expectRefused(bucket(START - 10 * 365 * DAY), FROM_START, shape(granularity, timeZone));
  });
});

describe('an odd but valid datapoints answer, read from its bytes', () => {
  it.each([
    ['integers written with a fraction or an exponent', '{"timestamp":1.0e1,"value":1E2},{"timestamp":20.00,"value":-0.0}'],
    ['keys written with escapes', '{"t\\u0069mestamp":10,"v\\u0061lue":1,"st\\u0061tus":{"c\\u006fde":2,"symbol":"s"}}'],
    ['keys given twice, the last kept', '{"timestamp":5,"value":"x","value":1,"timestamp":10,"status":{"code":"x","code":3}}'],
    ['valid keys given twice, the last kept', '{"timestamp":5,"value":2,"value":1,"timestamp":10,"status":{"code":1,"code":3}}'],
    ['fields outside the columns', '{"timestamp":10,"value":1,"__proto__":{"a":1},"2":[true],"1":null,"extra":"e","valueString":"v"}'],
    ['-0, big and tiny numbers', '{"timestamp":10,"value":-0},{"timestamp":11,"value":1e400},{"timestamp":12,"value":12345678901234567890}'],
    ['doubles of every length', '{"timestamp":10,"value":0.1},{"timestamp":11,"value":51.84021537657124},{"timestamp":12,"value":-1.5e-7}'],
    ['special values with escapes', '{"timestamp":10,"value":"N\\u0061N"},{"timestamp":11,"value":"-Infinity"},{"timestamp":12,"value":"Infinity"}'],
    ['statuses with and without symbols', '{"timestamp":10,"value":1,"status":{"code":-0}},{"timestamp":11,"status":{"symbol":"\\u00e9","code":2,"x":1}}'],
    ['whitespace inside points', '{ "timestamp" : 10 , "value" : 1 }\t,\r {"timestamp":11,"value":2 }'],
  ])('with %s gives what JSON.parse gives', async (_, points) => {
    await expectTaken(withNumbers(points));
  });

  it('with string values holding escapes and Unicode gives what JSON.parse gives', async () => {
    const points = '{"timestamp":15,"value":"a\\"b\\\\c\\n\\u00e9 ✓ 温度 🙂"},{"timestamp":16},{"timestamp":17,"value":""}';
    expect(await expectTaken(withStrings(points))).toBe(2);
  });

  it('with the item\'s fields in another order, twice, or with escapes: the whole answer parsed, the same', async () => {
    const late = '"datapoints":[{"timestamp":10,"value":1}],"id":1,"isString":false';
    const twice = '"id":7,"id":1,"isString":false,"datapoints":[{"timestamp":10,"value":1}]';
    const escaped = '"\\u0069d":1,"isString":false,"datapoints":[{"timestamp":10,"value":1}]';
    const changed = '"id":7,"isString":true,"datapoints":[{"timestamp":10,"value":1}],"id":1,"isString":false';
    for (const item of [late, twice, escaped, changed]) {
      expect(await expectTaken(answer(`{${item}}`, stringItem(GOOD_STRING)))).toBe(0);
      expect(await expectTaken(answer(stringItem(GOOD_STRING)))).toBe(1);
    }
    // A field the scan does not read may come after the points.
    expect(await expectTaken(answer('{"id":1,"isString":false,"datapoints":[],"unit":"°C"}'))).toBe(1);
  });

  it('with an externalId after the points, which may match another query, parsed: the same', async () => {
    const queries: AskedQuery[] = [{ ...QUERIES[1]!, ref: { externalId: 'a' } }, QUERIES[0]!];
    const item = `{"id":1,"isString":false,"datapoints":[${GOOD_NUMERIC}],"externalId":"a"}`;
    const read = await expectSameReads(answer(item), queries, RAW);
    expect(read).toMatchObject({ series: [{ query: 0 }], unknown: [1] });
  });

  it('with a series the platform did not know leaves its query unknown', async () => {
    const read = await expectSameReads(answer(stringItem(GOOD_STRING)), QUERIES, RAW);
    expect(read).toMatchObject({ unknown: [0] });
  });

  it.each([
    ['a value', '{"timestamp":10,"value":1e400}', RAW],
    ['a value in a point read as it is not plain', '{"value":-2E+308,"timestamp":10}', RAW],
    ['an aggregate', '{"timestamp":10,"count":1,"average":1e999}', AGGREGATES],
  ])('%s past the range of a double is left to the parse, which the client refuses before it (checkAnswerBytes)', async (_name, point, shape) => {
    expect(scannedSeries(await expectSameReads(answer(numericItem(point)), QUERIES, shape))).toBe(0);
  });

  it('of aggregates, drops the buckets at the chain\'s last point unchecked, and only those', async () => {
    const points = '{"timestamp":10,"count":"unchecked"},{"timestamp":10},{"timestamp":20,"count":3,"average":"NaN"}';
    const queries = QUERIES.map((query) => ({ ...query, last: 10 }));
    expect(await expectTaken(answer(numericItem(points)), queries, AGGREGATES)).toBe(1);
    await expectRefused(answer(numericItem(points)), QUERIES, AGGREGATES);
    const counts = '{"timestamp":5,"count":2.0,"average":1e300,"value":1,"status":null},{"timestamp":99,"count":-0}';
    expect(await expectTaken(answer(numericItem(counts)), QUERIES, AGGREGATES)).toBe(0);
    expect(await expectTaken(answer(numericItem(counts.replace('2.0', '2'))), QUERIES, AGGREGATES)).toBe(1);
  });
});
