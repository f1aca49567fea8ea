import { describe, expect, it } from 'vitest';
import {
  type ConfigProblem,
  configProblemsError,
  isAtOrUnder,
  withoutConsequences,
} from '../../src/config/config-problems.js';

describe('isAtOrUnder', () => {
  it.each([
    [['source', 'baseUrl'], ['source', 'baseUrl'], true],
    [['source', 'auth', 'type'], ['source', 'auth'], true],
    [['streams', 0, 'limit'], ['streams', '0'], true],
    [['source'], ['source', 'baseUrl'], false],
    [['source', 'auth'], ['source', 'baseUrl'], false],
    [['source', 'authority'], ['source', 'auth'], false],
    [[], [], true],
    [['x'], [], true],
  ] as const)('%j under %j: %s', (path, prefix, expected) => {
    expect(isAtOrUnder(path, prefix)).toBe(expected);
  });
});

describe('withoutConsequences', () => {
  it('drops issues at or under what an earlier problem covers, keeps the rest', () => {
    const earlier: ConfigProblem[] = [
      { path: ['source', 'baseUrl'], message: 'environment variable CLUSTER is not set' },
      { path: ['source', 'auth', 'apiKeyFile'], covers: ['source', 'auth', 'apiKey'], message: 'cannot read' },
    ];
    const issues: ConfigProblem[] = [
      { path: ['source', 'baseUrl'], message: 'expected an http(s):// URL' },
      { path: ['source', 'auth', 'apiKey'], message: 'expected ${ENV_VARIABLE} in apiKey' },
      { path: ['source', 'auth'], message: 'Unrecognized key: "apikey"' },
      { path: ['streams', 0, 'limit'], message: 'Too big' },
    ];
    expect(withoutConsequences(issues, earlier)).toEqual(issues.slice(2));
  });
});

describe('configProblemsError', () => {
  it('one problem is one line, as before: <file>: <path>: <message>', () => {
    const error = configProblemsError('/x/job.yaml', [{ path: ['source', 'baseUrl'], message: 'environment variable CLUSTER is not set' }]);
    expect(error).toMatchObject({ code: 'E_CONFIG', message: '/x/job.yaml: source.baseUrl: environment variable CLUSTER is not set' });
    expect(error.cause).toBeUndefined();
  });

  it('several problems are a header line and one "  - " line each, in the order given', () => {
    const error = configProblemsError('job.yaml', [
      { path: ['source', 'baseUrl'], message: 'environment variable CLUSTER is not set' },
      { path: [], message: 'Unrecognized key: "sink"' },
      { path: ['streams', 0, 'partitions'], message: 'Too big: expected number to be <=10 (got 11)' },
    ]);
    expect(error.message).toBe(
      [
        'job.yaml: 3 problems:',
        '  - source.baseUrl: environment variable CLUSTER is not set',
        '  - (root): Unrecognized key: "sink"',
        '  - streams.0.partitions: Too big: expected number to be <=10 (got 11)',
      ].join('\n'),
    );
  });

  it('keeps the causes: one as it is, several in an AggregateError', () => {
    const one = new Error('ENOENT');
    const two = new Error('EACCES');
    expect(configProblemsError('f', [{ path: ['a'], message: 'm', cause: one }]).cause).toBe(one);
    const both = configProblemsError('f', [
      { path: ['a'], message: 'm', cause: one },
      { path: ['b'], message: 'm' },
      { path: ['c'], message: 'm', cause: two },
    ]).cause;
    expect(both).toBeInstanceOf(AggregateError);
    expect((both as AggregateError).errors).toEqual([one, two]);
  });
});
