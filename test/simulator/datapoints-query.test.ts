import { describe, expect, it } from 'vitest';
import { parseDatapointsBody } from '../../src/simulator/datapoints/datapoints-query.js';
import { bucketGrid, parseGranularity } from '../../src/simulator/datapoints/granularity.js';
import { parseTimeZone, type TimeZone } from '../../src/simulator/datapoints/time-zone.js';

/** The body of `POST /timeseries/data/list` validated on its own: defaults, overrides, every 400. */
const NOW = Date.UTC(2026, 0, 1);
const ID = { id: 7_000_000_000_000_000 };

function parsed(body: unknown) {
  const result = parseDatapointsBody(body, NOW);
  if (!result.ok) throw new Error(result.message);
  return result.value;
}

function refused(body: unknown): string {
  const result = parseDatapointsBody(body, NOW);
  if (result.ok) throw new Error(`accepted: ${JSON.stringify(body)}`);
  return result.message;
}

describe('parseDatapointsBody', () => {
  it('applies the platform\'s defaults: start 0, end now, limit 100, raw, bad points left out, no status', () => {
    expect(parsed({ items: [ID] })).toMatchObject({
      ignoreUnknownIds: false,
      items: [
        {
          at: 'items[0]',
          ref: ID,
          start: 0,
          end: NOW,
          limit: 100,
          aggregates: [],
          granularity: undefined,
          includeOutsidePoints: false,
          includeStatus: false,
          ignoreBadDataPoints: true,
          treatUncertainAsBad: true,
          cursor: undefined,
        },
      ],
    });
  });

  it('takes the top-level defaults where an item sets nothing, and the item\'s own fields over them', () => {
    const request = parsed({
      start: '2d-ago',
      end: 'now',
      limit: 7,
      aggregates: ['max', 'count', 'max'],
      granularity: '1h',
      ignoreUnknownIds: true,
      items: [{ externalId: 'TS-000001' }, { instanceId: { space: 's', externalId: 'x' }, start: -5, end: 9, limit: 3, aggregates: [] }],
    });
    expect(request.ignoreUnknownIds).toBe(true);
    expect(request.items[0]).toMatchObject({ start: NOW - 2 * 86_400_000, end: NOW, limit: 7, aggregates: ['max', 'count'] });
    expect(request.items[0]?.granularity).toEqual({ count: 1, unit: 'h', text: '1h' });
    expect(request.items[1]).toMatchObject({ start: -5, end: 9, limit: 3, aggregates: [] });
  });

  it.each([
    ['1w-ago', NOW - 604_800_000],
    ['3d-ago', NOW - 3 * 86_400_000],
    ['5h-ago', NOW - 5 * 3_600_000],
    ['10m-ago', NOW - 600_000],
    ['90s-ago', NOW - 90_000],
    ['0s-ago', NOW],
    [-86_400_000, -86_400_000],
    ['now', NOW],
  ])('reads start %s as %i', (start, ms) => {
    expect(parsed({ items: [{ ...ID, start, end: NOW + 1 }] }).items[0]?.start).toBe(ms);
  });

  it('binds a cursor to the query as given (times unresolved, defaults applied), not to other items or to the cursor', () => {
    const one = parsed({ limit: 5, items: [{ ...ID, start: '1d-ago' }] }).items[0]?.binding;
    const later = parseDatapointsBody({ items: [{ ...ID, start: '1d-ago', limit: 5, cursor: 'c' }, { id: 3 }] }, NOW + 60_000);
    expect(later.ok && later.value.items[0]?.binding).toBe(one);
    expect(parsed({ limit: 6, items: [{ ...ID, start: '1d-ago' }] }).items[0]?.binding).not.toBe(one);
    expect(parsed({ limit: 5, items: [{ ...ID, start: '1d-ago', includeStatus: true }] }).items[0]?.binding).not.toBe(one);
  });

  it.each([
    [[], /'items': expected an array of 1\.\.100 queries/],
    [Array.from({ length: 101 }, () => ID), /'items': expected an array of 1\.\.100 queries/],
  ])('refuses items %j', (items, message) => {
    expect(refused({ items })).toMatch(message);
  });

  it.each([
    [{ items: [ID], cursor: 'x' }, "Unrecognized property 'cursor'"],
    [{ items: [{ ...ID, timeZone: 'UTC' }] }, "Unrecognized property 'items[0].timeZone'"],
    [{ items: [{}] }, "'items[0]': name the time series by exactly one of id, externalId, instanceId; got none"],
    [{ items: [{ id: 1, externalId: 'a' }] }, 'got id, externalId'],
    [{ items: [{ id: 1.5 }] }, "'items[0].id': expected an integer"],
    [{ items: [{ externalId: '' }] }, "'items[0].externalId': expected a string of 1..255"],
    [{ items: [{ instanceId: { space: 's' } }] }, "'items[0].instanceId': expected {space, externalId}"],
    [{ items: [{ ...ID, start: 'yesterday' }] }, "'items[0].start': expected epoch milliseconds"],
    [{ items: [{ ...ID, start: 1.5 }] }, "'items[0].start': expected epoch milliseconds"],
    [{ items: [ID], end: '2y-ago' }, "'end': expected epoch milliseconds"],
    [{ items: [{ ...ID, end: Date.UTC(2100, 0, 2) }] }, "'items[0].end': 4102531200000 is outside the platform's time range"],
    [{ items: [{ ...ID, start: 10, end: 10 }] }, "'items[0].start', 'items[0].end': start 10 must be before end 10"],
    [{ items: [{ ...ID, start: NOW + 1 }] }, "'items[0].start', 'end': start 1767225600001 must be before end 1767225600000 (end not given: now)"],
    [{ items: [{ ...ID, limit: 0 }] }, "'items[0].limit': expected an integer in 1..100000 (raw datapoints), got 0"],
    [{ items: [{ ...ID, limit: 100_001 }] }, "'items[0].limit': expected an integer in 1..100000"],
    [{ items: [{ ...ID, limit: 10_001, aggregates: ['sum'], granularity: '1d' }] }, "'items[0].limit': expected an integer in 1..10000 (aggregates)"],
    [{ limit: 'many', items: [{ ...ID, limit: 5 }] }, "'limit': expected an integer"],
    [{ items: [{ ...ID, aggregates: 'max' }] }, "'items[0].aggregates': expected an array"],
    [{ items: [{ ...ID, aggregates: ['median'], granularity: '1h' }] }, "'items[0].aggregates': unknown aggregate \"median\". The platform's aggregates: average, max, min, count, sum, interpolation"],
    [{ items: [{ ...ID, aggregates: ['median'], granularity: '1h' }] }, "'items[0].aggregates': unknown aggregate \"median\""],
    [{ items: [{ ...ID, aggregates: ['max'] }] }, "'items[0].granularity': aggregates need a granularity"],
    [{ items: [{ ...ID, aggregates: ['max'], includeOutsidePoints: true, granularity: '1h' }] }, 'includeOutsidePoints is not available for aggregates'],
    [{ items: [{ ...ID, includeStatus: 'yes' }] }, "'items[0].includeStatus': expected true or false"],
    [{ items: [{ ...ID, ignoreBadDataPoints: 1 }] }, "'items[0].ignoreBadDataPoints': expected true or false"],
    [{ items: [{ ...ID, treatUncertainAsBad: null }] }, "'items[0].treatUncertainAsBad': expected true or false"],
    [{ items: [{ ...ID, targetUnit: 'temperature:deg_f', targetUnitSystem: 'Imperial' }] }, 'give targetUnit or targetUnitSystem, not both'],
    [{ items: [{ ...ID, cursor: '' }] }, "'items[0].cursor': expected a string"],
    [{ items: [ID], ignoreUnknownIds: 'true' }, "'ignoreUnknownIds': expected true or false"],
    [{ items: [ID], timeZone: 'Mars/Olympus' }, "'timeZone': \"Mars/Olympus\" is not a time zone"],
    [{ items: [ID], timeZone: 'UTC+15:00' }, "'timeZone': \"UTC+15:00\" is not a time zone"],
    [
      { items: [{ ...ID, aggregates: ['max'], granularity: '1d', start: Date.UTC(1900, 0, 1), end: Date.UTC(1901, 0, 1) }], timeZone: 'Asia/Kolkata' },
      "'timeZone': Asia/Kolkata is 19270 s off UTC at -2208988800000 (items[0]); aggregates take only zone offsets of whole multiples of 15 minutes.",
    ],
  ])('refuses %j, naming the field', (body, message) => {
    expect(refused(body)).toContain(message);
  });

  it('takes a time zone for raw points (they do not depend on it), and any zone with aggregates, seconds and minutes too', () => {
    expect(parsed({ items: [ID], timeZone: 'Europe/Oslo' }).items).toHaveLength(1);
    for (const timeZone of ['UTC', 'Europe/Oslo', 'UTC+05:30', 'UTC-03:00', 'Asia/Kathmandu']) {
      for (const granularity of ['1s', '1m', '1h', '1d', '1mo']) {
        expect(parsed({ items: [{ ...ID, aggregates: ['max'], granularity }], timeZone }).items[0]?.timeZone?.name).toBe(timeZone);
      }
    }
  });

  it('takes targetUnit and targetUnitSystem (bound to the cursor, not applied)', () => {
    const [unit, system] = parsed({ items: [{ ...ID, targetUnit: 'temperature:deg_f' }, { ...ID, targetUnitSystem: 'Imperial' }] }).items;
    expect(unit?.binding).toContain('temperature:deg_f');
    expect(system?.binding).toContain('Imperial');
  });

  it('caps the limits in total over the items: 100,000 raw points and 10,000 aggregates per request', () => {
    const raw = (limit: number) => ({ ...ID, limit });
    const aggregate = (limit: number) => ({ ...ID, limit, aggregates: ['count'], granularity: '1m' });
    expect(parsed({ items: [raw(60_000), raw(40_000), aggregate(6000), aggregate(4000)] }).items).toHaveLength(4);
    expect(refused({ items: [raw(60_000), raw(40_001)] })).toBe(
      "Invalid property 'limit': the raw queries' limits add up to 100001; at most 100000 raw datapoints per request, in total over its items.",
    );
    expect(refused({ items: [aggregate(6000), aggregate(4001), raw(5)] })).toContain(
      "Invalid property 'limit': the aggregate queries' limits add up to 10001; at most 10000 aggregates per request",
    );
    expect(refused({ limit: 1001, items: Array.from({ length: 100 }, () => ID) })).toContain('add up to 100100');
  });
});

describe('granularity', () => {
  it.each([
    ['1s', true],
    ['120s', true],
    ['121s', false],
    ['120m', true],
    ['121m', false],
    ['100000h', true],
    ['100001h', false],
    ['100000d', true],
    ['100000mo', true],
    ['100001mo', false],
    ['0h', false],
    ['h', false],
    ['1w', false],
    ['1y', false],
    ['1.5h', false],
    [60, false],
  ])('%j is within the platform\'s bounds: %s', (given, ok) => {
    expect(parseGranularity(given, 'granularity').ok).toBe(ok);
  });

  it('names the field and the bounds when it refuses', () => {
    expect(parseGranularity('121s', 'items[2].granularity')).toEqual({
      ok: false,
      message: "Invalid property 'items[2].granularity': expected N followed by s, m, h, d or mo (s, m: N in 1..120; h, d, mo: N in 1..100000), got \"121s\".",
    });
  });

  const at = (iso: string) => Date.parse(iso);
  const g = (text: string) => {
    const result = parseGranularity(text, 'granularity');
    if (!result.ok) throw new Error(result.message);
    return result.value;
  };

  const zone = (name: string): TimeZone => {
    const parsedZone = parseTimeZone(name);
    if (parsedZone === undefined) throw new Error(name);
    return parsedZone;
  };
  const grid = (text: string, name?: string) => bucketGrid(g(text), name === undefined ? undefined : zone(name));

  it('rounds start down to a whole unit in UTC, not to a whole multiple of N', () => {
    expect(grid('3h').align(at('2024-03-05T10:20:30.400Z'))).toBe(at('2024-03-05T10:00:00Z'));
    expect(grid('7d').align(at('2024-03-05T10:20:30.400Z'))).toBe(at('2024-03-05T00:00:00Z'));
    expect(grid('15m').align(at('2024-03-05T10:20:30.400Z'))).toBe(at('2024-03-05T10:20:00Z'));
    expect(grid('2mo').align(at('2024-03-05T10:20:30.400Z'))).toBe(at('2024-03-01T00:00:00Z'));
    expect(grid('1s').align(-1)).toBe(-1000);
    expect(grid('1d').align(at('1969-12-31T23:30:00Z'))).toBe(at('1969-12-31T00:00:00Z'));
  });

  it('cuts buckets of N units from there; months are calendar months', () => {
    const origin = at('2024-03-05T10:00:00Z');
    expect(grid('3h').bucketOf(at('2024-03-05T14:59:59.999Z'), origin)).toBe(at('2024-03-05T13:00:00Z'));
    expect(grid('3h').next(at('2024-03-05T13:00:00Z'))).toBe(at('2024-03-05T16:00:00Z'));
    const months = at('2024-01-01T00:00:00Z');
    expect(grid('1mo').bucketOf(at('2024-02-29T23:00:00Z'), months)).toBe(at('2024-02-01T00:00:00Z'));
    expect(grid('3mo').bucketOf(at('2024-04-30T23:00:00Z'), months)).toBe(at('2024-04-01T00:00:00Z'));
    expect(grid('5mo').bucketOf(at('2025-01-01T00:00:00Z'), months)).toBe(at('2024-11-01T00:00:00Z'));
    expect(grid('5mo').next(at('2024-11-01T00:00:00Z'))).toBe(at('2025-04-01T00:00:00Z'));
  });

  it('in Europe/Oslo: days from local midnight, 23 hours in March and 25 in October; months from the local first', () => {
    // 2024: summer time from 31 March 01:00 UTC to 27 October 01:00 UTC.
    const days = grid('1d', 'Europe/Oslo');
    expect(days.align(at('2024-03-30T23:30:00Z'))).toBe(at('2024-03-30T23:00:00Z'));
    expect(days.next(at('2024-03-30T23:00:00Z'))).toBe(at('2024-03-31T22:00:00Z'));
    expect(days.next(at('2024-10-26T22:00:00Z'))).toBe(at('2024-10-27T23:00:00Z'));
    expect(days.bucketOf(at('2024-10-27T22:59:59.999Z'), at('2024-10-20T22:00:00Z'))).toBe(at('2024-10-26T22:00:00Z'));
    expect(grid('7d', 'Europe/Oslo').next(at('2024-03-24T23:00:00Z'))).toBe(at('2024-03-31T22:00:00Z'));
    const months = grid('1mo', 'Europe/Oslo');
    expect(months.align(at('2024-02-29T23:30:00Z'))).toBe(at('2024-02-29T23:00:00Z'));
    expect(months.next(at('2024-02-29T23:00:00Z'))).toBe(at('2024-03-31T22:00:00Z'));
    expect(grid('3mo', 'Europe/Oslo').bucketOf(at('2024-06-30T21:59:59Z'), at('2023-12-31T23:00:00Z'))).toBe(at('2024-03-31T22:00:00Z'));
    // Hours are 3,600,000 ms across the change; seconds and minutes as in UTC.
    expect(grid('24h', 'Europe/Oslo').next(at('2024-03-30T23:00:00Z'))).toBe(at('2024-03-31T23:00:00Z'));
    expect(grid('15m', 'Europe/Oslo').align(at('2024-03-05T10:20:30Z'))).toBe(at('2024-03-05T10:20:00Z'));
  });

  it('in UTC+05:30 and Asia/Kolkata: hours and days start at :30 UTC', () => {
    for (const name of ['UTC+05:30', 'Asia/Kolkata']) {
      expect(grid('1h', name).align(at('2024-03-05T10:20:00Z'))).toBe(at('2024-03-05T09:30:00Z'));
      expect(grid('1d', name).align(at('2024-03-05T10:20:00Z'))).toBe(at('2024-03-04T18:30:00Z'));
      expect(grid('1d', name).next(at('2024-03-04T18:30:00Z'))).toBe(at('2024-03-05T18:30:00Z'));
      expect(grid('1mo', name).align(at('2024-03-05T10:20:00Z'))).toBe(at('2024-02-29T18:30:00Z'));
    }
    expect(grid('1d', 'UTC-03:00').align(at('2024-03-05T02:00:00Z'))).toBe(at('2024-03-04T03:00:00Z'));
  });

  it('starts a day whose midnight does not exist at the jump (America/Sao_Paulo, 2018-11-04 00:00 -> 01:00)', () => {
    const days = grid('1d', 'America/Sao_Paulo');
    expect(days.next(at('2018-11-03T03:00:00Z'))).toBe(at('2018-11-04T03:00:00Z'));
    expect(days.next(at('2018-11-04T03:00:00Z'))).toBe(at('2018-11-05T02:00:00Z'));
  });
});
