import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DmFilter } from '../../src/config/dm-filter.js';
import {
  compareBoundaries,
  type InstancesQuery,
  MAX_SPLIT_BOUNDARIES,
  splitFilters,
  splitPropertyProblem,
} from '../../src/config/instances-schema.js';
import type { ViewDefinition, ViewPropertyDefinition } from '../../src/resources/index.js';

const VIEW = { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };
const SOURCE = `${VIEW.externalId}/${VIEW.version}`;
const WEIGHT = [VIEW.space, SOURCE, 'weight'];

/** An instance as the evaluator sees it: its own fields, and its values of the view's properties. */
interface Sample {
  instanceType: 'node' | 'edge';
  space: string;
  externalId: string;
  properties: Readonly<Record<string, unknown>>;
}

/** The value a property reference names on a sample; undefined where it has none. */
function valueAt(sample: Sample, ref: readonly string[]): unknown {
  if (ref.length === 2) return ref[0] === sample.instanceType ? sample[ref[1] as 'space' | 'externalId'] : undefined;
  return ref[0] === VIEW.space && ref[1] === SOURCE ? sample.properties[ref[2]!] : undefined;
}

const comparable = (value: unknown, bound: unknown): value is number | string =>
  (typeof value === 'number' || typeof value === 'string') && typeof value === typeof bound;

/**
 * The platform's filter language over samples, for the operators splitFilters writes and the
 * tests use: no value (undefined or null) matches nothing but `not`; numbers compare by value,
 * texts by code point (collation ucs_basic).
 */
function matches(filter: DmFilter | undefined, sample: Sample): boolean {
  if (filter === undefined) return true;
  const [operator, inner] = Object.entries(filter)[0]!;
  if (operator === 'and') return (inner as DmFilter[]).every((each) => matches(each, sample));
  if (operator === 'or') return (inner as DmFilter[]).some((each) => matches(each, sample));
  if (operator === 'not') return !matches(inner as DmFilter, sample);
  const body = inner as Readonly<Record<string, unknown>>;
  const value = valueAt(sample, body.property as string[]);
  const present = value !== undefined && value !== null;
  switch (operator) {
    case 'exists':
      return present;
    case 'equals':
      return present && value === body.value;
    case 'in':
      return present && (body.values as unknown[]).includes(value);
    case 'prefix':
      return typeof value === 'string' && value.startsWith(body.value as string);
    case 'range': {
      const bounds: [string, (order: number) => boolean][] = [
        ['gt', (order) => order > 0], ['gte', (order) => order >= 0], ['lt', (order) => order < 0], ['lte', (order) => order <= 0],
      ];
      return present && bounds.every(([key, holds]) => {
        const bound = body[key];
        if (bound === undefined) return true;
        if (!comparable(value, bound)) throw new Error(`range of ${JSON.stringify(value)} against ${JSON.stringify(bound)}`);
        return holds(compareBoundaries(value, bound as number | string));
      });
    }
    default:
      throw new Error(`the evaluator has no ${operator}`);
  }
}

describe('splitFilters: the queries of a stream', () => {
  const nodes = (more: Partial<InstancesQuery> = {}): InstancesQuery => ({ instanceType: 'node', ...more });

  it('one query: no filter, or the stream\'s filter and spaces joined with and', () => {
    expect(splitFilters(nodes(), VIEW)).toEqual([undefined]);
    const filter = { exists: { property: WEIGHT } };
    expect(splitFilters(nodes({ filter }), VIEW)).toEqual([filter]);
    expect(splitFilters({ instanceType: 'edge', spaces: ['a'] }, VIEW)).toEqual([{ equals: { property: ['edge', 'space'], value: 'a' } }]);
    expect(splitFilters(nodes({ filter, spaces: ['a', 'b'] }), VIEW)).toEqual([
      { and: [filter, { in: { property: ['node', 'space'], values: ['a', 'b'] } }] },
    ]);
  });

  it('split: space: one query per space, in the order of spaces (and none without spaces: an error)', () => {
    expect(() => splitFilters(nodes({ split: 'space' }), VIEW)).toThrow('split: space without spaces');
    const filter = { prefix: { property: ['node', 'externalId'], value: 'pump:' } };
    expect(splitFilters(nodes({ filter, spaces: ['b', 'a'], split: 'space' }), VIEW)).toEqual([
      { and: [filter, { equals: { property: ['node', 'space'], value: 'b' } }] },
      { and: [filter, { equals: { property: ['node', 'space'], value: 'a' } }] },
    ]);
  });

  it('split by a property: below the first boundary, between each two, from the last, and no value', () => {
    expect(splitFilters(nodes({ spaces: ['a'], split: { property: 'weight', at: [10, 20] } }), VIEW)).toEqual([
      { and: [{ equals: { property: ['node', 'space'], value: 'a' } }, { range: { property: WEIGHT, lt: 10 } }] },
      { and: [{ equals: { property: ['node', 'space'], value: 'a' } }, { range: { property: WEIGHT, gte: 10, lt: 20 } }] },
      { and: [{ equals: { property: ['node', 'space'], value: 'a' } }, { range: { property: WEIGHT, gte: 20 } }] },
      { and: [{ equals: { property: ['node', 'space'], value: 'a' } }, { not: { exists: { property: WEIGHT } } }] },
    ]);
  });

  it("split by externalId: the instance's own, which every instance has, so no query of no value", () => {
    const property = ['edge', 'externalId'];
    expect(splitFilters({ instanceType: 'edge', split: { property: 'externalId', at: ['m'] } }, VIEW)).toEqual([
      { range: { property, lt: 'm' } },
      { range: { property, gte: 'm' } },
    ]);
  });
});

/** Texts whose code-point order differs from JavaScript's UTF-16 order: U+FFFF comes before U+1F600. */
const TEXTS = ['', 'a', 'b', 'ab', 'b\u0000', 'z', 'é', '\uffff', '😀', '😀a'];
const SPACES = ['site_a', 'site_b', 'site_c'];

const numberValues = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.double({ min: -5, max: 5, noNaN: true }));
const same = (a: number | string, b: number | string) => compareBoundaries(a, b) === 0;
const boundaries = (values: fc.Arbitrary<number | string>) =>
  fc
    .uniqueArray(values, { minLength: 1, maxLength: MAX_SPLIT_BOUNDARIES, comparator: same })
    .map((list) => [...list].sort(compareBoundaries));

/** A stream with a split by a property of numbers or of texts, and the samples to run its queries on. */
const scenario = fc
  .constantFrom<fc.Arbitrary<number | string>>(numberValues, fc.constantFrom(...TEXTS))
  .chain((values) => fc.record({ values: fc.constant(values), at: boundaries(values) }))
  .chain(({ values, at }) =>
    fc.record({
      instanceType: fc.constantFrom('node' as const, 'edge' as const),
      spaces: fc.option(fc.subarray(SPACES, { minLength: 1 }), { nil: undefined }),
      filtered: fc.boolean(),
      at: fc.constant(at),
      samples: fc.array(
        fc.record({
          space: fc.constantFrom(...SPACES),
          externalId: fc.constantFrom(...TEXTS.slice(1)),
          // Values at the boundaries themselves, and no value (missing or null), come often.
          weight: fc.oneof(values, fc.constantFrom(...at), fc.constant(null), fc.constant(undefined)),
          flag: fc.boolean(),
        }),
        { maxLength: 40 },
      ),
    }),
  );

describe('splitFilters: the queries of a split are disjoint and together hold every instance the stream selects', () => {
  it('by a property of numbers or texts, with nulls, spaces and a filter of the stream (property-based)', () => {
    fc.assert(
      fc.property(scenario, ({ instanceType, spaces, filtered, at, samples }) => {
        const filter = filtered ? { equals: { property: [VIEW.space, SOURCE, 'flag'], value: true } } : undefined;
        const split = { property: 'weight', at: at as number[] | string[] };
        const queries = splitFilters({ instanceType, spaces, filter, split }, VIEW);
        expect(queries).toHaveLength(at.length + 2);
        for (const { weight, flag, ...own } of samples) {
          const sample: Sample = { ...own, instanceType, properties: { weight, flag } };
          const selected = (spaces === undefined || spaces.includes(sample.space)) && (!filtered || flag);
          expect(queries.filter((query) => matches(query, sample))).toHaveLength(selected ? 1 : 0);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('by externalId and by space', () => {
    fc.assert(
      fc.property(scenario, ({ instanceType, spaces, at, samples }) => {
        const texts = at.map(String).sort(compareBoundaries).filter((b, i, all) => i === 0 || all[i - 1] !== b);
        const byId = splitFilters({ instanceType, spaces, split: { property: 'externalId', at: texts } }, VIEW);
        const bySpace = splitFilters({ instanceType, spaces: spaces ?? SPACES, split: 'space' }, VIEW);
        expect(bySpace).toHaveLength((spaces ?? SPACES).length);
        for (const own of samples) {
          const sample: Sample = { ...own, instanceType, properties: {} };
          const inSpaces = (spaces ?? SPACES).includes(sample.space);
          expect(byId.filter((query) => matches(query, sample))).toHaveLength(spaces === undefined || inSpaces ? 1 : 0);
          expect(bySpace.filter((query) => matches(query, sample))).toHaveLength(inSpaces ? 1 : 0);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('orders texts by code point, as collation ucs_basic does, not by UTF-16 code unit', () => {
    expect(compareBoundaries('\uffff', '😀')).toBeLessThan(0);
    expect('\uffff' < '😀').toBe(false);
    const queries = splitFilters({ instanceType: 'node', split: { property: 'weight', at: ['\uffff', '😀'] } }, VIEW);
    const sample = (weight: string): Sample => ({ instanceType: 'node', space: 'a', externalId: 'x', properties: { weight } });
    expect(queries.map((query) => matches(query, sample('\uffffz')))).toEqual([false, true, false, false]);
  });
});

describe('splitPropertyProblem: a split by a property, against the view the platform defines', () => {
  const file = new URL('../resources/fixtures/cognite-asset.view.json', import.meta.url);
  const asset = JSON.parse(readFileSync(file, 'utf8')) as ViewDefinition;
  const mapped = asset.properties.name as ViewPropertyDefinition;
  const view: ViewDefinition = {
    ...asset,
    properties: {
      ...asset.properties,
      weight: { ...mapped, type: { type: 'float64' } },
      serial: { ...mapped, type: { type: 'int64' } },
      installed: { ...mapped, type: { type: 'date' } },
      label: { ...mapped, type: { type: 'text', collation: 'en' } },
      state: { ...mapped, type: { type: 'enum' } },
    },
  };
  const problem = (property: string, at: number[] | string[]) => splitPropertyProblem({ property, at }, view);

  it('takes ordered properties of one value with boundaries of their type, and externalId with texts', () => {
    expect(problem('name', ['M', 'a'])).toBeUndefined();
    expect(problem('weight', [0.5, 10])).toBeUndefined();
    expect(problem('serial', [-1, 9_007_199_254_740_991])).toBeUndefined();
    expect(problem('pathLastUpdatedTime', ['2024-01-01T00:00:00Z', '2024-01-01T02:00:00+01:00'])).toBeUndefined();
    expect(problem('installed', ['1999-12-31', '2024-02-29'])).toBeUndefined();
    expect(problem('externalId', ['a', 'b'])).toBeUndefined();
    expect(splitPropertyProblem('space', view)).toBeUndefined();
    expect(splitPropertyProblem(undefined, view)).toBeUndefined();
  });

  it.each<[string, number[] | string[], string]>([
    ['nme', ['a'], 'split.property: nme is not a property of the view cdf_cdm/CogniteAsset/v1'],
    ['children', ['a'], 'split.property: children is a connection of the view cdf_cdm/CogniteAsset/v1, not a stored value'],
    ['tags', ['a'], 'split.property: tags is a list; a split ranges over properties of one value'],
    ['parent', ['a'], 'split.property: parent is of type direct; a split ranges over numbers, text, timestamps or dates'],
    ['state', ['a'], 'split.property: state is of type enum; a split ranges over numbers, text, timestamps or dates'],
    [
      'label',
      ['a'],
      'split.property: label has collation en; a split by text needs collation ucs_basic, the code-point order of its boundaries',
    ],
    ['name', [1, 2], 'split.at.0: name takes strings; got 1'],
    ['externalId', [1], 'split.at.0: externalId takes strings; got 1'],
    ['weight', ['1'], 'split.at.0: weight takes numbers; got "1"'],
    ['serial', [1, 2.5], 'split.at.1: serial takes integers; got 2.5'],
    [
      'pathLastUpdatedTime',
      ['2024-01-01'],
      'split.at.0: pathLastUpdatedTime takes timestamps as text with a zone, e.g. 2024-01-01T00:00:00Z; got "2024-01-01"',
    ],
    [
      'pathLastUpdatedTime',
      ['2024-01-01T00:00:00Z', '2024-01-01T00:30:00+01:00'],
      'split.at.1: 2024-01-01T00:30:00+01:00 is not later than 2024-01-01T00:00:00Z',
    ],
    ['installed', ['2024-02-30'], 'split.at.0: installed takes dates as text, e.g. 2024-01-01; got "2024-02-30"'],
  ])('%s at %j', (property, at, message) => {
    expect(problem(property, at)).toBe(message);
  });
});
