import { describe, expect, it } from 'vitest';
import { streamSchema } from '../../src/config/job-schema.js';
import { instancesCheck } from '../../src/export/kinds/instances/instances-request.js';
import { planStreams } from '../../src/export/plan/streams.js';
import { PageItems } from '../../src/page/page-items.js';
import { scanPage } from '../../src/page/page-scan.js';

/**
 * instancesCheck: every instance a query of a split reads must be one the query asks for (its
 * spaces, its range of externalIds in code-point order); the first that is not is named, with the query.
 */
const VIEW = { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };

function planOf(keys: Record<string, unknown>) {
  const [plan] = planStreams([streamSchema.parse({ resource: 'instances', name: 'assets', view: VIEW, ...keys })], ['ndjson']);
  return plan!;
}

/** A scanned page of instances with these keys, `[space, externalId]`. */
function page(keys: readonly (readonly [string, string])[]): PageItems {
  const body = Buffer.from(JSON.stringify({ items: keys.map(([space, externalId]) => ({ instanceType: 'node', space, externalId })) }));
  return PageItems.scanned(body, scanPage(body)!);
}

describe('instancesCheck', () => {
  it('a query without spaces or a range takes any instance: no check', () => {
    expect(instancesCheck(planOf({}), 1)).toBeUndefined();
  });

  it('split: space: the query\'s own space only', () => {
    const plan = planOf({ spaces: ['a', 'b'], split: 'space' });
    const second = instancesCheck(plan, 2)!;
    expect(second(page([['b', 'x'], ['b', 'y']]))).toBeUndefined();
    expect(second(page([['b', 'x'], ['a', 'y']]))).toBe(
      'Instance 2 of the page, "a":"y", is not one that query 2/2 of assets asks for (space "b"): the platform did not apply ' +
      "the query's filter, and writing the instance would export it twice or where it does not belong; refusing the page",
    );
  });

  it('spaces without a split: any of them', () => {
    const check = instancesCheck(planOf({ spaces: ['a', 'b'] }), 1)!;
    expect(check(page([['a', 'x'], ['b', 'y']]))).toBeUndefined();
    expect(check(page([['c', 'x']]))).toContain('is not one that query 1/1 of assets asks for (space in ["a","b"])');
  });

  it('split by externalId: from the lower boundary, below the upper, in code-point order ("\\uffff" before "😀")', () => {
    const plan = planOf({ split: { property: 'externalId', at: ['g', '\uffff', '😀'] } });
    const [first, second, third, fourth] = [1, 2, 3, 4].map((m) => instancesCheck(plan, m)!);
    expect(first!(page([['s', 'a'], ['s', 'f~']]))).toBeUndefined();
    expect(first!(page([['s', 'g']]))).toContain('query 1/4 of assets asks for (externalId < "g")');
    expect(second!(page([['s', 'g'], ['s', 'z']]))).toBeUndefined();
    expect(third!(page([['s', '\uffffz']]))).toBeUndefined();
    expect(third!(page([['s', '😀']]))).toContain('query 3/4 of assets asks for (externalId >= "\uffff" and < "😀")');
    expect(fourth!(page([['s', '😀'], ['s', '😁']]))).toBeUndefined();
  });

  it('an instance without a space or an externalId is not one a query of a split asks for', () => {
    const check = instancesCheck(planOf({ split: { property: 'externalId', at: ['m'] } }), 1)!;
    expect(check(PageItems.of([{ space: 's' }]))).toContain('Instance 1 of the page, "s":(no externalId), is not one');
    const bySpace = instancesCheck(planOf({ spaces: ['a', 'b'], split: 'space' }), 1)!;
    expect(bySpace(PageItems.of([{ externalId: 'x' }]))).toContain('Instance 1 of the page, (no space):"x", is not one');
  });
});
