import { describe, expect, it } from 'vitest';
import { parseAggregateBody } from '../../src/simulator/aggregate-query.js';

describe('parseAggregateBody', () => {
  it('count is the default; an empty body counts everything', () => {
    expect(parseAggregateBody('events', {})).toEqual({
      ok: true,
      query: { resource: 'events', aggregate: 'count', filter: {} },
    });
    expect(parseAggregateBody('assets', { aggregate: 'count', filter: {} })).toMatchObject({ ok: true });
  });

  it('maps every event filter onto the list filter fields (ranges inclusive, epoch ms)', () => {
    const result = parseAggregateBody('events', {
      aggregate: 'count',
      filter: {
        type: 'alarm',
        subtype: 'high',
        source: 'SAP',
        startTime: { min: 1, max: 2 },
        lastUpdatedTime: { min: 3, max: 4 },
      },
    });
    expect(result).toEqual({
      ok: true,
      query: {
        resource: 'events',
        aggregate: 'count',
        filter: {
          type: 'alarm',
          subtype: 'high',
          source: 'SAP',
          minStartTime: 1,
          maxStartTime: 2,
          minLastUpdatedTime: 3,
          maxLastUpdatedTime: 4,
        },
      },
    });
  });

  it('a range may give one bound, none, or min > max (which is valid and matches nothing)', () => {
    expect(parseAggregateBody('assets', { filter: { lastUpdatedTime: { max: 5 } } })).toMatchObject({
      ok: true,
      query: { filter: { maxLastUpdatedTime: 5 } },
    });
    expect(parseAggregateBody('assets', { filter: { lastUpdatedTime: {} } })).toMatchObject({
      ok: true,
      query: { filter: {} },
    });
    expect(parseAggregateBody('events', { filter: { startTime: { min: 9, max: 1 } } })).toMatchObject({
      ok: true,
      query: { filter: { minStartTime: 9, maxStartTime: 1 } },
    });
  });

  const refused: [string, 'assets' | 'events', unknown, RegExp][] = [
    ['a body that is not an object', 'events', [], /must be a JSON object, got \[\]/],
    ['null', 'events', null, /must be a JSON object, got null/],
    ['an unknown top-level key', 'events', { filter: {}, limit: 10 }, /Unrecognized property 'limit'/],
    ['another aggregate', 'events', { aggregate: 'uniqueValues' }, /'aggregate'.*"count" only, got "uniqueValues"/],
    ['aggregate null', 'events', { aggregate: null }, /'aggregate'.*got null/],
    ['a filter that is not an object', 'events', { filter: 'type=alarm' }, /'filter': expected an object/],
    ['a filter key the simulator cannot answer', 'events', { filter: { labels: { containsAny: [] } } }, /'filter\.labels' for \/events\/aggregate/],
    ['metadata that is not an object of strings', 'events', { filter: { metadata: { a: 1 } } }, /'filter\.metadata\.a': expected a string/],
    ['metadata of 257 pairs', 'events', { filter: { metadata: Object.fromEntries(Array.from({ length: 257 }, (_, i) => [`k${i}`, 'v'])) } }, /'filter\.metadata': expected metadata within the platform's bounds \(257 pairs; the platform takes at most 256\)/],
    ['a metadata key of 129 bytes', 'assets', { filter: { metadata: { ['k'.repeat(129)]: 'v' } } }, /'filter\.metadata'.*is 129 bytes \(UTF-8\); the platform takes keys of at most 128/],
    ['asset metadata of 10241 bytes in all', 'assets', { filter: { metadata: { k: 'x'.repeat(10_240) } } }, /'filter\.metadata'.*10241 bytes \(UTF-8\) in all; the platform takes at most 10240/],
    ['an event filter on assets', 'assets', { filter: { type: 'alarm' } }, /'filter\.type' for \/assets\/aggregate/],
    ['startTime on assets', 'assets', { filter: { startTime: { min: 1 } } }, /'filter\.startTime'/],
    ['a number for a string', 'events', { filter: { type: 7 } }, /'filter\.type': expected a string of 1 to 64 characters, got 7/],
    ['an empty string', 'events', { filter: { source: '' } }, /'filter\.source': expected a string of 1 to 128/],
    ['a subtype too long', 'events', { filter: { subtype: 'x'.repeat(65) } }, /'filter\.subtype'.*"xxxx/],
    ['a range that is a number', 'events', { filter: { startTime: 5 } }, /'filter\.startTime': expected an object \{min, max\}/],
    ['a bound that is text', 'events', { filter: { startTime: { min: '5' } } }, /'filter\.startTime\.min': expected epoch milliseconds/],
    ['a negative bound', 'assets', { filter: { lastUpdatedTime: { max: -1 } } }, /'filter\.lastUpdatedTime\.max'.*got -1/],
    ['a fractional bound', 'assets', { filter: { lastUpdatedTime: { min: 1.5 } } }, /'filter\.lastUpdatedTime\.min'/],
    ['an unknown bound', 'events', { filter: { startTime: { min: 1, from: 2 } } }, /'filter\.startTime\.from'. Allowed: min, max/],
  ];

  it.each(refused)('refuses %s with a message naming the property', (_what, resource, body, message) => {
    const result = parseAggregateBody(resource, body);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toMatch(message);
  });
});
