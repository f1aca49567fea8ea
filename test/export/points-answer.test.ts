import { describe, expect, it } from 'vitest';
import { BadResponseError } from '../../src/http/errors.js';
import { readAnswer } from '../../src/export/kinds/datapoints/points-answer.js';

const QUERY = { ref: { id: 1 }, start: 0, end: 1000, limit: 10, last: null };
const CTX = { method: 'POST', path: '/timeseries/data/list' };
const answer = (value: unknown) => ({ items: [{ id: 1, isString: false, datapoints: [{ timestamp: 5, value }] }] });

describe('readAnswer: the value of a numeric point', () => {
  it.each(['NaN', 'Infinity', '-Infinity'])('takes the special value %s', (value) => {
    expect(readAnswer(answer(value), [QUERY], undefined, CTX).series[0]!.points.length).toBe(1);
  });

  it.each(['toString', 'constructor', '__proto__', 'nan'])('refuses any other string, %s included', (value) => {
    expect(() => readAnswer(answer(value), [QUERY], undefined, CTX)).toThrow(BadResponseError);
  });
});
