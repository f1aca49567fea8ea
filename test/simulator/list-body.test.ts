import { describe, expect, it } from 'vitest';
import { parseListBody } from '../../src/simulator/list-body.js';
import { parseListQuery } from '../../src/simulator/query.js';

describe('parseListBody (POST /{resource}/list)', () => {
  it('an empty body lists everything: limit 100, no partition, metadata included', () => {
    expect(parseListBody('events', {})).toMatchObject({
      ok: true,
      query: { resource: 'events', limit: 100, cursor: undefined, partition: undefined, includeMetadata: true, filter: {} },
    });
  });

  it('paging and filter map onto the same query a GET gives; only the binding tells them apart', () => {
    const body = parseListBody('events', {
      limit: 1000,
      partition: '2/3',
      cursor: 'abc',
      filter: { type: 'alarm', lastUpdatedTime: { min: 3, max: 4 }, startTime: { max: 9 } },
    });
    const get = parseListQuery(
      'events',
      new URLSearchParams({
        limit: '1000',
        partition: '2/3',
        cursor: 'abc',
        type: 'alarm',
        minLastUpdatedTime: '3',
        maxLastUpdatedTime: '4',
        maxStartTime: '9',
      }),
    );
    if (!body.ok || !get.ok) throw new Error('both parse');
    const { binding: postBinding, ...postQuery } = body.query;
    const { binding: getBinding, ...getQuery } = get.query;
    expect(postQuery).toEqual(getQuery);
    expect(postBinding).not.toBe(getBinding);
  });

  it('the binding is every property but cursor', () => {
    const bindingOf = (body: object) => {
      const parsed = parseListBody('events', body);
      if (!parsed.ok) throw new Error(parsed.message);
      return parsed.query.binding;
    };
    const base = { limit: 10, partition: '1/2', filter: { source: 'SAP' } };
    expect(bindingOf({ ...base, cursor: 'x' })).toBe(bindingOf(base));
    expect(bindingOf({ ...base, limit: 11 })).not.toBe(bindingOf(base));
    expect(bindingOf({ ...base, partition: '2/2' })).not.toBe(bindingOf(base));
    expect(bindingOf({ ...base, filter: { source: 'SAP2' } })).not.toBe(bindingOf(base));
  });

  it.each([
    ['not an object', [], /must be a JSON object/],
    ['an unknown property', { filter: {}, colour: 'red' }, /Unrecognized property 'colour'. Allowed: filter, limit, cursor, partition/],
    ['a property the simulator does not serve', { sort: [{ property: ['name'] }] }, /'sort' is accepted by the platform but not served/],
    ['limit 0', { limit: 0 }, /Invalid property 'limit': expected an integer in 1..1000, got 0/],
    ['limit 1001', { limit: 1001 }, /got 1001/],
    ['limit as text', { limit: '10' }, /got "10"/],
    ['an empty cursor', { cursor: '' }, /Invalid property 'cursor'/],
    ['partition 3/2', { partition: '3/2' }, /Invalid property 'partition': expected 'm\/n'/],
    ['partition n > 10', { partition: '1/11' }, /got "1\/11"/],
    ['a filter that is a list', { filter: [] }, /Invalid property 'filter': expected an object/],
    ['a filter field of another collection', { filter: { type: 'x' } }, /Unrecognized property 'filter.type' for \/assets\/list/],
    ['a range bound that is not epoch ms', { filter: { lastUpdatedTime: { min: -1 } } }, /filter.lastUpdatedTime.min/],
  ])('refuses %s, naming it', (_, body, message) => {
    const parsed = parseListBody('assets', body);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toMatch(message);
  });
});
