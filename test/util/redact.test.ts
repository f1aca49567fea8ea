import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { MIN_REDACTED_LENGTH, Redactor } from '../../src/util/redact.js';

describe('Redactor', () => {
  const redactor = new Redactor(['s3cret value/+1', 's3cret', 'on', 'x.y*z']);

  it.each([
    ['as written', 'got "s3cret value/+1" here', 'got "[redacted]" here'],
    ['a value inside a longer one is hidden whole', 's3cret value/+1 and s3cret', '[redacted] and [redacted]'],
    ['in a URL path', 'GET /projects/s3cret%20value/+1/events', 'GET /projects/[redacted]/events'],
    ['as a URI component', '?q=s3cret%20value%2F%2B1&x=1', '?q=[redacted]&x=1'],
    ['form-encoded', '?q=s3cret+value%2F%2B1', '?q=[redacted]'],
    ['regular expression characters are literal', 'x.y*z but not xxyz', '[redacted] but not xxyz'],
    ['values under the minimum are left alone', 'turn on the light', 'turn on the light'],
  ])('%s', (_, text, expected) => {
    expect(redactor.redact(text)).toBe(expected);
  });

  it('finds a value escaped inside a JSON string', () => {
    const tricky = new Redactor(['tab\there "quoted"']);
    const line = JSON.stringify({ msg: 'got tab\there "quoted" in a line' });
    expect(tricky.redact(line)).toBe('{"msg":"got [redacted] in a line"}');
  });

  it(`ignores values under ${MIN_REDACTED_LENGTH} characters; none hides nothing`, () => {
    expect(new Redactor(['abc', '', 'on']).active).toBe(false);
    expect(Redactor.none.redact('anything s3cret')).toBe('anything s3cret');
  });

  it('redacts every string of a report, a copy', () => {
    const report = { reason: { code: 'E_X', message: 'at s3cret' }, list: ['s3cret', 3, null], n: 1 };
    expect(redactor.redactStrings(report)).toEqual({ reason: { code: 'E_X', message: 'at [redacted]' }, list: ['[redacted]', 3, null], n: 1 });
    expect(report.reason.message).toBe('at s3cret');
  });

  it('redacts an error in place: message, stack, text fields, causes and aggregated errors', () => {
    const inner = Object.assign(new Error('open /run/s3cret/x failed'), { path: '/run/s3cret/x', errno: -2 });
    const error = new Error('outer s3cret', { cause: new AggregateError([inner], 'many s3cret') });
    expect(redactor.redactError(error)).toBe(error);
    const shown = inspect(error, { depth: 10 });
    expect(shown).not.toContain('s3cret');
    expect(shown).toContain('outer [redacted]');
    expect(inner.path).toBe('/run/[redacted]/x');
  });

  it('never shows its values itself', () => {
    expect(inspect(redactor)).toBe('Redactor(3 values)');
    expect(JSON.stringify({ redactor })).toBe('{"redactor":"Redactor(3 values)"}');
  });
});
