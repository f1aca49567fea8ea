import { describe, expect, it } from 'vitest';
import { type ParseResult, parseListQuery } from '../../src/simulator/query.js';

function parse(resource: 'assets' | 'events', query: string): ParseResult {
  return parseListQuery(resource, new URLSearchParams(query));
}

function binding(resource: 'assets' | 'events', query: string): string {
  const result = parse(resource, query);
  if (!result.ok) throw new Error(result.message);
  return result.query.binding;
}

describe('parseListQuery', () => {
  it('applies the platform defaults: limit 100, metadata included, no partition', () => {
    expect(parse('events', '')).toMatchObject({
      ok: true,
      query: { limit: 100, includeMetadata: true, partition: undefined, cursor: undefined, filter: {} },
    });
  });

  it('parses every event filter', () => {
    const result = parse(
      'events',
      'type=alarm&subtype=high&source=SAP&minLastUpdatedTime=1&maxLastUpdatedTime=2&minStartTime=3&maxStartTime=4&partition=2/5&limit=1000&includeMetadata=false',
    );
    expect(result).toMatchObject({
      ok: true,
      query: {
        limit: 1000,
        includeMetadata: false,
        partition: { m: 2, n: 5 },
        filter: {
          type: 'alarm',
          subtype: 'high',
          source: 'SAP',
          minLastUpdatedTime: 1,
          maxLastUpdatedTime: 2,
          minStartTime: 3,
          maxStartTime: 4,
        },
      },
    });
  });

  it('binds cursors to effective values: order and spelled-out defaults do not matter', () => {
    expect(binding('events', 'type=alarm&limit=100')).toBe(binding('events', 'type=alarm'));
    expect(binding('events', 'source=SAP&type=alarm')).toBe(binding('events', 'type=alarm&source=SAP'));
    expect(binding('events', 'includeMetadata=true')).toBe(binding('events', ''));
    expect(binding('events', 'cursor=abc')).toBe(binding('events', ''));
  });

  it('binds cursors to every parameter but the cursor', () => {
    const variants = [
      '',
      'limit=99',
      'partition=1/2',
      'partition=2/2',
      'includeMetadata=false',
      'type=alarm',
      'subtype=high',
      'source=SAP',
      'minLastUpdatedTime=1',
      'maxLastUpdatedTime=1',
      'minStartTime=1',
      'maxStartTime=1',
    ];
    expect(new Set(variants.map((v) => binding('events', v))).size).toBe(variants.length);
    expect(binding('assets', '')).not.toBe(binding('events', ''));
  });

  it('takes string filters up to the platform\'s length: type 64, source 128', () => {
    expect(parse('events', `type=${'x'.repeat(64)}&source=${'s'.repeat(128)}`).ok).toBe(true);
  });

  it.each([
    ['events', 'limit=0', "'limit'"],
    ['events', 'limit=1001', "'limit'"],
    ['events', 'limit=01', "'limit'"],
    ['events', 'limit=+5', "'limit'"],
    ['events', 'partition=0/2', "'partition'"],
    ['events', 'partition=3/2', "'partition'"],
    ['events', 'partition=1/11', "'partition'"],
    ['events', 'partition=1/2/3', "'partition'"],
    ['events', 'minStartTime=-1', "'minStartTime'"],
    ['events', 'maxLastUpdatedTime=99999999999999999999', "'maxLastUpdatedTime'"],
    ['events', 'includeMetadata=yes', "'includeMetadata'"],
    ['events', 'type=', "'type'"],
    ['events', `source=${'x'.repeat(129)}`, "'source'"],
    ['events', `type=${'x'.repeat(65)}`, "'type': expected 1 to 64 characters"],
    ['events', `subtype=${'x'.repeat(65)}`, "'subtype': expected 1 to 64 characters"],
    ['events', 'cursor=', "'cursor'"],
    ['events', 'limit=5&limit=5', "'limit' was given more than once"],
    ['events', 'foo=bar', "'foo'"],
    ['assets', 'type=alarm', "'type'"],
    ['assets', 'minStartTime=1', "'minStartTime'"],
  ] as const)('rejects %s ?%s with a message naming %s', (resource, query, named) => {
    const result = parse(resource, query);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toContain(named);
  });
});
