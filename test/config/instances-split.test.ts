import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DmFilter } from '../../src/config/dm-filter.js';
import { type InstancesQuery, MAX_SPLIT_BOUNDARIES, splitFilters, splitScopes } from '../../src/config/instances-schema.js';
import { compareCodePoints } from '../../src/util/code-point-order.js';

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
 * texts by code point (collation ucs_basic, the platform's order of externalIds).
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
        return holds(typeof value === 'number' ? value - (bound as number) : compareCodePoints(value, bound as string));
      });
    }
    default:
      throw new Error(`the evaluator has no ${operator}`);
  }
}

describe('splitFilters: the queries of a stream', () => {
  const nodes = (more: Partial<InstancesQuery> = {}): InstancesQuery => ({ instanceType: 'node', ...more });

  it('one query: no filter, or the stream\'s filter and spaces joined with and', () => {
    expect(splitFilters(nodes())).toEqual([undefined]);
    const filter = { exists: { property: WEIGHT } };
    expect(splitFilters(nodes({ filter }))).toEqual([filter]);
    expect(splitFilters({ instanceType: 'edge', spaces: ['a'] })).toEqual([{ equals: { property: ['edge', 'space'], value: 'a' } }]);
    expect(splitFilters(nodes({ filter, spaces: ['a', 'b'] }))).toEqual([
      { and: [filter, { in: { property: ['node', 'space'], values: ['a', 'b'] } }] },
    ]);
  });

  it('split: space: one query per space, in the order of spaces (and none without spaces: an error)', () => {
    expect(() => splitFilters(nodes({ split: 'space' }))).toThrow('split: space without spaces');
    const filter = { prefix: { property: ['node', 'externalId'], value: 'pump:' } };
    expect(splitFilters(nodes({ filter, spaces: ['b', 'a'], split: 'space' }))).toEqual([
      { and: [filter, { equals: { property: ['node', 'space'], value: 'b' } }] },
      { and: [filter, { equals: { property: ['node', 'space'], value: 'a' } }] },
    ]);
  });

  it('split by externalId: below the first boundary, between each two, from the last, within the spaces', () => {
    const property = ['node', 'externalId'];
    expect(splitFilters(nodes({ spaces: ['a'], split: { property: 'externalId', at: ['g', 'p'] } }))).toEqual([
      { and: [{ equals: { property: ['node', 'space'], value: 'a' } }, { range: { property, lt: 'g' } }] },
      { and: [{ equals: { property: ['node', 'space'], value: 'a' } }, { range: { property, gte: 'g', lt: 'p' } }] },
      { and: [{ equals: { property: ['node', 'space'], value: 'a' } }, { range: { property, gte: 'p' } }] },
    ]);
  });

  it("split by externalId: the instance's own, which every instance has, so no query of no value", () => {
    const property = ['edge', 'externalId'];
    expect(splitFilters({ instanceType: 'edge', split: { property: 'externalId', at: ['m'] } })).toEqual([
      { range: { property, lt: 'm' } },
      { range: { property, gte: 'm' } },
    ]);
  });
});

/** Texts whose code-point order differs from JavaScript's UTF-16 order: U+FFFF comes before U+1F600. */
const TEXTS = ['', 'a', 'b', 'ab', 'b\u0000', 'z', 'é', '\uffff', '😀', '😀a'];
const SPACES = ['site_a', 'site_b', 'site_c'];

const same = (a: string, b: string) => compareCodePoints(a, b) === 0;
/** 1 to 19 boundaries in increasing code-point order. */
const boundaries = fc
  .uniqueArray(fc.constantFrom(...TEXTS), { minLength: 1, maxLength: MAX_SPLIT_BOUNDARIES, comparator: same })
  .map((list) => [...list].sort(compareCodePoints));

/** A stream split by externalId, and the samples to run its queries on. */
const scenario = boundaries.chain((at) =>
  fc.record({
    instanceType: fc.constantFrom('node' as const, 'edge' as const),
    spaces: fc.option(fc.subarray(SPACES, { minLength: 1 }), { nil: undefined }),
    filtered: fc.boolean(),
    at: fc.constant(at),
    samples: fc.array(
      fc.record({
        space: fc.constantFrom(...SPACES),
        // externalIds at the boundaries themselves come often.
        externalId: fc.oneof(fc.constantFrom(...TEXTS.slice(1)), fc.constantFrom(...at)),
        flag: fc.boolean(),
      }),
      { maxLength: 40 },
    ),
  }),
);

describe('splitFilters: the queries of a split are disjoint and together hold every instance the stream selects', () => {
  it('by externalId, with spaces and a filter of the stream (property-based)', () => {
    fc.assert(
      fc.property(scenario, ({ instanceType, spaces, filtered, at, samples }) => {
        const filter = filtered ? { equals: { property: [VIEW.space, SOURCE, 'flag'], value: true } } : undefined;
        const queries = splitFilters({ instanceType, spaces, filter, split: { property: 'externalId', at } });
        expect(queries).toHaveLength(at.length + 1);
        for (const { flag, ...own } of samples) {
          const sample: Sample = { ...own, instanceType, properties: { flag } };
          const selected = (spaces === undefined || spaces.includes(sample.space)) && (!filtered || flag);
          expect(queries.filter((query) => matches(query, sample))).toHaveLength(selected ? 1 : 0);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('by space', () => {
    fc.assert(
      fc.property(scenario, ({ instanceType, spaces, samples }) => {
        const bySpace = splitFilters({ instanceType, spaces: spaces ?? SPACES, split: 'space' });
        expect(bySpace).toHaveLength((spaces ?? SPACES).length);
        for (const own of samples) {
          const sample: Sample = { ...own, instanceType, properties: {} };
          const inSpaces = (spaces ?? SPACES).includes(sample.space);
          expect(bySpace.filter((query) => matches(query, sample))).toHaveLength(inSpaces ? 1 : 0);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('orders externalIds by code point, as the platform does (collation ucs_basic), not by UTF-16 code unit', () => {
    expect(compareCodePoints('\uffff', '😀')).toBeLessThan(0);
    expect('\uffff' < '😀').toBe(false);
    const queries = splitFilters({ instanceType: 'node', split: { property: 'externalId', at: ['\uffff', '😀'] } });
    const sample = (externalId: string): Sample => ({ instanceType: 'node', space: 'a', externalId, properties: {} });
    expect(queries.map((query) => matches(query, sample('\uffffz')))).toEqual([false, true, false]);
  });
});

describe('splitScopes: what each query holds, to check each instance read against', () => {
  it('the spaces of the stream or of the query, the range of externalIds, in the order of the queries', () => {
    expect(splitScopes({})).toEqual([{}]);
    expect(splitScopes({ spaces: ['a', 'b'] })).toEqual([{ spaces: ['a', 'b'] }]);
    expect(splitScopes({ spaces: ['a', 'b'], split: 'space' })).toEqual([{ spaces: ['a'] }, { spaces: ['b'] }]);
    expect(splitScopes({ spaces: ['a'], split: { property: 'externalId', at: ['g', 'p'] } })).toEqual([
      { spaces: ['a'], externalId: { lt: 'g' } },
      { spaces: ['a'], externalId: { gte: 'g', lt: 'p' } },
      { spaces: ['a'], externalId: { gte: 'p' } },
    ]);
  });
});
