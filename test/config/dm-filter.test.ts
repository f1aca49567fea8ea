import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { dmFilterProblems, dmFilterSchema, FILTER_OPERATORS, MAX_FILTER_DEPTH } from '../../src/config/dm-filter.js';
import { instanceFieldReferences } from '../../src/config/dm-filter-fields.js';
import { describeZodIssues, formatPath } from '../../src/util/zod-issues.js';

const NAME = ['cdf_cdm', 'CogniteAsset/v1', 'name'];
const OPERATORS = FILTER_OPERATORS.join(', ');
const REFERENCE_EXPECTED =
  'expected a property reference: [space, "view/version", property], [space, container, property] or ["node"|"edge", field]';
const PARAMETER_REFUSED =
  '{parameter: ...} values are for parameterised queries, and bulk-extract sends no parameters; write the value itself';
const FIELDS = 'instanceType, version, space, externalId, type, createdTime, lastUpdatedTime, deletedTime, startNode, endNode';

/** The problems of a filter as `path: message` lines, the path formatted as the config's messages format it. */
const lines = (filter: unknown) => dmFilterProblems(filter).map(({ path, message }) => `${formatPath(path)}: ${message}`);

describe('dmFilterProblems: filters the platform takes', () => {
  it('accepts every operator, nested, with view, container and instance references', () => {
    const filter = {
      and: [
        { equals: { property: NAME, value: 'Pump 1' } },
        { in: { property: ['node', 'space'], values: ['site_a', 'site_b'] } },
        { range: { property: ['cdf_cdm', 'CogniteSourceable', 'sourceUpdatedTime'], gte: '2024-01-01T00:00:00Z', lt: 1e15 } },
        { prefix: { property: ['node', 'externalId'], value: 'pump:' } },
        { or: [{ exists: { property: NAME } }, { not: { matchAll: {} } }] },
        { containsAny: { property: ['cdf_cdm', 'CogniteAsset/v1', 'tags'], values: ['critical'] } },
        { containsAll: { property: ['cdf_cdm', 'CogniteAsset/v1', 'tags'], values: { property: NAME } } },
        { hasData: [{ type: 'view', space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' }] },
        { hasData: [{ type: 'container', space: 'cdf_cdm', externalId: 'CogniteAsset' }] },
        { equals: { property: ['node', 'type'], value: { space: 'types', externalId: 'pump' } } },
        { range: { property: ['node', 'lastUpdatedTime'], gt: { property: ['node', 'createdTime'] } } },
        { equals: { property: ['node', 'externalId'], value: { property: NAME } } },
        { equals: { property: ['edge', 'startNode'], value: { space: 'site_a', externalId: 'any text: 1/2' } } },
      ],
    };
    expect(dmFilterProblems(filter)).toEqual([]);
  });

  it('reads a filter written in YAML the same way', () => {
    const filter: unknown = parse(
      'or:\n  - equals: {property: [cdf_cdm, CogniteAsset/v1, name], value: P-1}\n  - range: {property: [node, version], gte: 2}\n',
    );
    expect(dmFilterProblems(filter)).toEqual([]);
  });
});

describe('dmFilterProblems: each problem at its path, with its message', () => {
  it.each<[string, unknown, string[]]>([
    ['not a mapping', 'name = 1', ['filter: expected a filter: a mapping with one operator, e.g. {equals: {...}}']],
    ['no operator', {}, [`filter: a filter has one operator, one of ${OPERATORS}; got none`]],
    [
      'two operators',
      { equals: { property: NAME, value: 1 }, exists: { property: NAME } },
      ['filter: a filter has one operator; got 2: equals, exists (combine them with and: [...])'],
    ],
    ['a misspelt operator', { rnage: {} }, [`filter.rnage: unknown operator (did you mean "range"?); one of ${OPERATORS}`]],
    ['an unknown operator', { regex: {} }, [`filter.regex: unknown operator; one of ${OPERATORS}`]],
    [
      'an operator bulk-extract does not send',
      { nested: { scope: NAME, filter: { matchAll: {} } } },
      [`filter.nested: nested is a platform filter that bulk-extract does not send; one of ${OPERATORS}`],
    ],
    ['an empty and', { and: [] }, ['filter.and: expected a non-empty list of filters to and']],
    ['or of a mapping', { or: { exists: { property: NAME } } }, ['filter.or: expected a non-empty list of filters to or']],
    [
      'not of a list',
      { not: [{ exists: { property: NAME } }] },
      ['filter.not: expected one filter (a mapping); to negate several, not: {or: [...]}'],
    ],
    [
      'a range without bounds, inside and',
      { and: [{ exists: { property: NAME } }, { range: { property: NAME } }] },
      ['filter.and.1.range: give at least one of gt, gte, lt, lte'],
    ],
    ['gt with gte', { range: { property: NAME, gt: 1, gte: 2 } }, ['filter.range.gte: give gt or gte, not both']],
    ['lt with lte', { range: { property: NAME, lt: 'b', lte: 'c' } }, ['filter.range.lte: give lt or lte, not both']],
    ['an empty range', { range: { property: NAME, gt: 10, lt: 5 } }, ['filter.range: the range from 10 to 5 holds no value']],
    ['a range of one excluded value', { range: { property: NAME, gte: 5, lt: 5 } }, ['filter.range: the range from 5 to 5 holds no value']],
    [
      'a boolean bound',
      { range: { property: NAME, gt: true } },
      ['filter.range.gt: expected a number or a string (a timestamp as 2024-01-01T00:00:00Z, a date as 2024-01-01)'],
    ],
    [
      'a misspelt bound',
      { range: { property: NAME, gtee: 1 } },
      [
        'filter.range.gtee: unknown key (did you mean "gte"?); range takes property, gt, gte, lt, lte',
        'filter.range: give at least one of gt, gte, lt, lte',
      ],
    ],
    ['equals without a value', { equals: { property: NAME } }, ['filter.equals: equals needs property and value; value missing']],
    ['exists without a property', { exists: {} }, ['filter.exists: exists needs property; property missing']],
    [
      'a null value',
      { equals: { property: NAME, value: null } },
      ['filter.equals.value: a value cannot be null; instances without a value match not: {exists: {property: ...}}'],
    ],
    ['a parameter', { equals: { property: NAME, value: { parameter: 'site' } } }, [`filter.equals.value: ${PARAMETER_REFUSED}`]],
    ['a parameter as a bound', { range: { property: NAME, lt: { parameter: 'end' } } }, [`filter.range.lt: ${PARAMETER_REFUSED}`]],
    ['a parameter as a prefix', { prefix: { property: NAME, value: { parameter: 'p' } } }, [`filter.prefix.value: ${PARAMETER_REFUSED}`]],
    ['no values', { in: { property: NAME, values: [] } }, ['filter.in.values: expected a non-empty list of values for in']],
    [
      'too many values',
      { in: { property: NAME, values: Array.from({ length: 1001 }, (_, i) => i) } },
      ['filter.in.values: at most 1000 values, as the platform accepts; split them with or'],
    ],
    ['values in a mapping', { in: { property: NAME, values: { a: 1 } } }, ['filter.in.values: expected a non-empty list of values for in']],
    ['a value that is not finite', { in: { property: NAME, values: [1, Number.NaN] } }, ['filter.in.values.1: not a finite number']],
    ['a reference of 4 names', { exists: { property: [...NAME, 'x'] } }, [`filter.exists.property: ${REFERENCE_EXPECTED}`]],
    ['a reference of one text', { exists: { property: 'name' } }, [`filter.exists.property: ${REFERENCE_EXPECTED}`]],
    [
      'a misspelt instance field',
      { exists: { property: ['node', 'externalid'] } },
      [`filter.exists.property.1: not a field of an instance (did you mean "externalId"?); one of ${FIELDS}`],
    ],
    [
      'an instance field of another scope',
      { exists: { property: ['nodes', 'space'] } },
      ['filter.exists.property.0: an instance field is named ["node", field] or ["edge", field]'],
    ],
    [
      "an edge's field on a node",
      { exists: { property: ['node', 'startNode'] } },
      ['filter.exists.property.1: startNode is a field of edges: ["edge", "startNode"]'],
    ],
    [
      'a view version that cannot be',
      { exists: { property: ['cdf_cdm', 'CogniteAsset/v 1', 'name'] } },
      [
        'filter.exists.property.1: expected a version: a letter or digit, then at most 42 letters, digits, ., _ or -, ' +
        'ending in a letter or digit (a container\'s, or "view/version")',
      ],
    ],
    [
      'a reserved space and a property that cannot be',
      { exists: { property: ['node', 'CogniteAsset', 'name_'] } },
      [
        "filter.exists.property.0: 'node' is a reserved name, not a space that can exist",
        'filter.exists.property.2: expected a property identifier: a letter, then at most 254 letters, digits or _, not ending in _',
      ],
    ],
    ['an empty prefix', { prefix: { property: NAME, value: '' } }, ['filter.prefix.value: expected the text the value starts with']],
    ['a prefix of a number', { prefix: { property: ['node', 'version'], value: '1' } }, ['filter.prefix.value: prefix applies to text; version is not text']],
    [
      'containsAny of a field that is no list',
      { containsAny: { property: ['node', 'space'], values: ['a'] } },
      ['filter.containsAny.property: containsAny applies to list properties; space is not one (use in)'],
    ],
    [
      "a node's type as text",
      { in: { property: ['node', 'type'], values: [{ space: 'types', externalId: 'pump' }, 'valve'] } },
      ['filter.in.values.1: type is a node: expected {space, externalId}'],
    ],
    ['a range of types', { range: { property: ['node', 'type'], gt: 'a' } }, ['filter.range.property: range does not apply to type']],
    ['a space that is a number', { equals: { property: ['edge', 'space'], value: 7 } }, ['filter.equals.value: space is text; expected a string']],
    [
      'a direct relation with an empty externalId',
      { equals: { property: NAME, value: { space: 'site_a', externalId: '' } } },
      ['filter.equals.value.externalId: expected an instance externalId: 1 to 256 characters, no NUL'],
    ],
    [
      'a view in hasData without its version',
      { hasData: [{ type: 'view', space: 'cdf_cdm', externalId: 'CogniteAsset' }] },
      [
        'filter.hasData.0.version: expected a version: a letter or digit, then at most 42 letters, digits, ., _ or -, ' +
        'ending in a letter or digit',
      ],
    ],
    [
      'a container in hasData with a version',
      { hasData: [{ type: 'container', space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' }] },
      ['filter.hasData.0.version: unknown key; a container is {type, space, externalId}'],
    ],
    [
      'hasData of something else',
      { hasData: [{ type: 'table', space: 'a', externalId: 'b' }] },
      [
        'filter.hasData.0: expected a view {type: view, space, externalId, version} or a container ' +
        '{type: container, space, externalId}',
      ],
    ],
    ['matchAll with keys', { matchAll: { all: true } }, ['filter.matchAll: matchAll takes nothing: write matchAll: {}']],
  ])('%s', (_, filter, expected) => {
    expect(lines(filter)).toEqual(expected);
  });

  it(`nests and, or and not at most ${MAX_FILTER_DEPTH} deep`, () => {
    let filter: unknown = { exists: { property: NAME } };
    for (let depth = 1; depth < MAX_FILTER_DEPTH; depth++) {
      filter = depth % 2 === 0 ? { not: filter } : { and: [filter] };
    }
    expect(dmFilterProblems(filter)).toEqual([]);
    const deeper = { or: [filter] };
    const problems = dmFilterProblems(deeper);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.message).toBe(`filters nest at most ${MAX_FILTER_DEPTH} deep`);
    expect(problems[0]!.path.at(-1)).toBe('exists');
  });

  it('reports every problem of a filter at once, each at its own path', () => {
    const filter = { or: [{ range: { property: NAME } }, { equals: { property: ['edge', 'x'], value: null } }, { prefx: {} }] };
    expect(lines(filter)).toEqual([
      'filter.or.0.range: give at least one of gt, gte, lt, lte',
      `filter.or.1.equals.property.1: not a field of an instance; one of ${FIELDS}`,
      'filter.or.1.equals.value: a value cannot be null; instances without a value match not: {exists: {property: ...}}',
      `filter.or.2.prefx: unknown operator (did you mean "prefix"?); one of ${OPERATORS}`,
    ]);
  });

  it('places its paths under another key when asked', () => {
    expect(dmFilterProblems({ and: [] }, ['streams', 3, 'filter'])).toEqual([
      { path: ['streams', 3, 'filter', 'and'], message: 'expected a non-empty list of filters to and' },
    ]);
  });
});

describe('dmFilterSchema', () => {
  const schema = z.strictObject({ filter: dmFilterSchema.optional() });
  const issueLines = (input: unknown) => {
    const result = schema.safeParse(input);
    return result.success ? [] : describeZodIssues(result.error, input).map((line) => `${formatPath(line.path)}: ${line.message}`);
  };

  it("gives zod issues at the problems' paths, with what was found there, as the job file's messages read", () => {
    expect(issueLines({ filter: { and: [{ exists: { property: NAME } }, { range: { property: NAME } }] } })).toEqual([
      'filter.and.1.range: give at least one of gt, gte, lt, lte (got a mapping)',
    ]);
    expect(issueLines({ filter: { in: { property: NAME, values: [1, null] } } })).toEqual([
      'filter.in.values.1: a value cannot be null; instances without a value match not: {exists: {property: ...}} (got null)',
    ]);
    expect(issueLines({ filter: ['equals'] })).toEqual([
      'filter: expected a filter: a mapping with one operator, e.g. {equals: {...}} (got a list)',
    ]);
    const valid = { filter: { exists: { property: NAME } } };
    expect(schema.parse(valid)).toEqual(valid);
  });
});

describe('instanceFieldReferences', () => {
  it('finds the instance fields a filter names, with their paths, passing over what is malformed', () => {
    const filter = {
      and: [
        { equals: { property: ['node', 'space'], value: 'a' } },
        { not: { range: { property: NAME, gt: { property: ['edge', 'createdTime'] } } } },
        { in: 'malformed' },
        { hasData: [{ type: 'view' }] },
      ],
    };
    expect(instanceFieldReferences(filter)).toEqual([
      { path: ['filter', 'and', 0, 'equals', 'property'], scope: 'node', field: 'space' },
      { path: ['filter', 'and', 1, 'not', 'range', 'gt', 'property'], scope: 'edge', field: 'createdTime' },
    ]);
    expect(instanceFieldReferences(undefined)).toEqual([]);
  });
});
