import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { MAX_OBTAINED_VALUES, MIN_REDACTED_LENGTH, Redactor } from '../../src/util/redact.js';

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
    const short = new Redactor(['abc', '', 'on']);
    expect(short.redact('abc on the light')).toBe('abc on the light');
    expect(inspect(short)).toBe('Redactor(0 values)');
    expect(Redactor.none.active).toBe(false);
    expect(Redactor.none.redact('anything s3cret, Authorization: Bearer abcdefghijklmnop0123')).toBe(
      'anything s3cret, Authorization: Bearer abcdefghijklmnop0123',
    );
  });

  describe('values obtained during a run (add)', () => {
    const token = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ3b3JrZXIifQ.c2lnbmF0dXJlK/w==';

    it('hides a value from the moment it is added, in every form', () => {
      const job = new Redactor(['s3cret']);
      expect(job.redact(`token ${token}`)).toBe(`token ${token}`);
      job.add(token);
      expect(job.redact(`token ${token}, s3cret`)).toBe('token [redacted], [redacted]');
      expect(job.redact(`?access_token=${encodeURIComponent(token)}&x=1`)).toBe('?access_token=[redacted]&x=1');
      expect(job.redact(JSON.stringify({ msg: `got ${token}` }))).toBe('{"msg":"got [redacted]"}');
      expect(inspect(job)).toBe('Redactor(2 values)');
    });

    it('hides a token whole when a short value of the job file lies inside it', () => {
      const job = new Redactor(['c2ln']);
      job.add(token);
      expect(job.redact(`${token} c2ln`)).toBe('[redacted] [redacted]');
    });

    it(`keeps the ${MAX_OBTAINED_VALUES} latest, forgetting the oldest first; ignores short and repeated ones`, () => {
      const job = new Redactor([]);
      job.add('abc');
      job.add(token);
      job.add(token);
      expect(inspect(job)).toBe('Redactor(1 values)');
      for (let n = 1; n <= MAX_OBTAINED_VALUES; n++) job.add(`renewed-${n}-token`);
      expect(inspect(job)).toBe(`Redactor(${MAX_OBTAINED_VALUES} values)`);
      expect(job.redact(`${token} renewed-1-token renewed-${MAX_OBTAINED_VALUES}-token`)).toBe(`${token} [redacted] [redacted]`);
    });

    it('none takes no values: they would be hidden nowhere', () => {
      expect(() => Redactor.none.add(token)).toThrow(/Redactor.none/);
      expect(Redactor.none.redact(token)).toBe(token);
    });
  });

  describe('any Bearer credential', () => {
    const job = new Redactor([]);

    it.each([
      ['in a header quoted by a server', 'Authorization: Bearer abcdefghijklmnop0123 was refused', 'Authorization: Bearer [redacted] was refused'],
      ['the scheme in any case, padding included', 'authorization: bearer abc.def-ghi_jkl~mno+p/q==', 'authorization: bearer [redacted]'],
      ['a word after "bearer" is not a token', 'Invalid bearer token', 'Invalid bearer token'],
      ['too short to be a token', 'Bearer abc123', 'Bearer abc123'],
    ])('%s', (_, text, expected) => {
      expect(job.redact(text)).toBe(expected);
    });

    it('a JSON log line stays JSON: only the token is taken, not the quote after it', () => {
      const line = JSON.stringify({ msg: 'HTTP 400: "Authorization: Bearer abcdefghijklmnop0123"', code: 'E_HTTP_STATUS' });
      expect(JSON.parse(job.redact(line))).toEqual({ msg: 'HTTP 400: "Authorization: Bearer [redacted]"', code: 'E_HTTP_STATUS' });
    });
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

  it('redacts an error whose cause reads its message through a getter (an aborted signal\'s DOMException), and leaves a frozen one', () => {
    const aborted = new DOMException('aborted at s3cret', 'AbortError');
    const frozen = Object.freeze(new Error('frozen s3cret'));
    const error = new Error('stopped s3cret', { cause: new AggregateError([aborted, frozen], 'both') });
    expect(redactor.redactError(error)).toBe(error);
    expect(aborted.message).toBe('aborted at [redacted]');
    expect(error.message).toBe('stopped [redacted]');
    expect(frozen.message).toBe('frozen s3cret');
  });

  it('never shows its values itself', () => {
    expect(inspect(redactor)).toBe('Redactor(3 values)');
    expect(JSON.stringify({ redactor })).toBe('{"redactor":"Redactor(3 values)"}');
  });
});
