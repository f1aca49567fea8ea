import { describe, expect, it } from 'vitest';
import { keyDistance, maxTypoDistance, suggestKey } from '../../src/config/suggest-key.js';

describe('keyDistance', () => {
  it.each([
    ['', '', 0],
    ['dir', '', 3],
    ['', 'dir', 3],
    ['limit', 'limit', 0],
    ['apikey', 'apiKey', 0],
    ['partitons', 'partitions', 1],
    ['limt', 'limit', 1],
    ['dri', 'dir', 1],
    ['fromats', 'formats', 1],
    ['client_secret', 'clientSecret', 1],
    ['colour', 'color', 1],
    ['kitten', 'sitting', 3],
    ['ca', 'abc', 3],
    ['sink', 'source', 5],
  ] as const)('%s -> %s: %i', (a, b, distance) => {
    expect(keyDistance(a, b)).toBe(distance);
    expect(keyDistance(b, a)).toBe(distance);
  });
});

describe('maxTypoDistance', () => {
  it.each([
    ['', 1],
    ['dir', 1],
    ['limit', 1],
    ['stream', 2],
    ['partitons', 3],
    ['maxRetryAfterMillis', 3],
  ] as const)('%s: %i', (key, max) => {
    expect(maxTypoDistance(key)).toBe(max);
  });
});

describe('suggestKey', () => {
  const STREAM = ['resource', 'filter', 'name', 'partitions', 'limit', 'formats', 'mode', 'safetyLag'];
  const JOB = ['source', 'streams', 'output', 'checkpoint'];
  it.each([
    ['partitons', STREAM, 'partitions'],
    ['partition', STREAM, 'partitions'],
    ['Limit', STREAM, 'limit'],
    ['safetylag', STREAM, 'safetyLag'],
    ['resourse', STREAM, 'resource'],
    ['stream', JOB, 'streams'],
    ['checkpiont', JOB, 'checkpoint'],
    ['clientsecret', ['type', 'tokenUrl', 'clientId', 'clientSecret', 'scopes', 'audience'], 'clientSecret'],
    ['sink', JOB, undefined],
    ['colour', STREAM, undefined],
    ['pageSize', ['baseUrl', 'auth', 'concurrency', 'maxConnections'], undefined],
    ['x', [], undefined],
  ] as const)('%s among %j: %s', (unknown, known, expected) => {
    expect(suggestKey(unknown, known)).toBe(expected);
  });

  it('a long enough start of one known key names it; a short or shared start names none', () => {
    const INSTANCES = ['view', 'instanceType', 'allowExpiredCursorsAndAcceptMissedDeletes', 'maxRequestsPerSecond', 'maxRetries'];
    expect(suggestKey('allowExpiredCursors', INSTANCES)).toBe('allowExpiredCursorsAndAcceptMissedDeletes');
    expect(suggestKey('AllowExpired', INSTANCES)).toBe('allowExpiredCursorsAndAcceptMissedDeletes');
    expect(suggestKey('allow', INSTANCES)).toBeUndefined();
    expect(suggestKey('maxRequests', INSTANCES)).toBe('maxRequestsPerSecond');
    expect(suggestKey('maxRe', INSTANCES)).toBeUndefined();
    expect(suggestKey('instanceT', INSTANCES)).toBe('instanceType');
  });

  it('the closest key wins; between equals, the first', () => {
    expect(suggestKey('modes', ['mode', 'nodes'])).toBe('mode');
    expect(suggestKey('mide', ['made', 'mode'])).toBe('made');
    expect(suggestKey('limits', ['limitz', 'limit'])).toBe('limitz');
  });
});
