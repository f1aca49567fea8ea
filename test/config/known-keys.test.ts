import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { jobSchema } from '../../src/config/job-schema.js';
import { knownKeysAt } from '../../src/config/known-keys.js';
import { filterKeys, RESOURCES } from '../../src/resources/index.js';

const STREAM = ['resource', 'filter', 'name', 'partitions', 'limit', 'formats', 'table', 'mode', 'keep', 'safetyLag', 'metadataColumns'];
const ASSET_FILTER = filterKeys('assets');
const EVENT_FILTER = filterKeys('events');
/** Every collection's filter keys, once each. */
const ANY_FILTER = [...new Set(RESOURCES.flatMap((resource) => filterKeys(resource)))];
const AUTH_OPTIONS = ['type', 'tokenUrl', 'clientId', 'clientSecret', 'scopes', 'audience', 'token', 'apiKey', 'cookie'];

describe('knownKeysAt: the job schema', () => {
  const job = (extra: Record<string, unknown>) => ({ source: { auth: { type: 'token' } }, ...extra });

  it.each([
    ['the top', {}, [], ['source', 'streams', 'output', 'checkpoint', 'metrics']],
    ['metrics (optional)', {}, ['metrics'], ['export', 'textfile', 'pushgateway', 'port', 'host', 'intervalSeconds', 'runDeadline']],
    ['source', {}, ['source'], ['baseUrl', 'auth', 'appName', 'allowInsecureHttp', 'caFile', 'concurrency', 'maxRequestsPerSecond', 'maxBufferedBytes', 'maxResponseBytes', 'maxReadFactor', 'maxConnections', 'timeouts', 'retry']],
    ['source.retry (prefault)', {}, ['source', 'retry'], ['maxAttempts', 'baseDelayMs', 'maxDelayMs', 'maxRetryAfterMs']],
    ['source.auth of type token', {}, ['source', 'auth'], ['type', 'token']],
    ['source.auth of an unknown type: every option', { source: { auth: { type: 'oauth2' } } }, ['source', 'auth'], AUTH_OPTIONS],
    ['source.auth without a type: every option', { source: { auth: {} } }, ['source', 'auth'], AUTH_OPTIONS],
    ['a stream (array element, default)', { streams: [{ resource: 'assets' }] }, ['streams', 0], STREAM],
    ['an asset filter', { streams: [{ resource: 'assets' }] }, ['streams', 0, 'filter'], ASSET_FILTER],
    ['the event filter of the second stream', { streams: [{ resource: 'assets' }, { resource: 'events' }] }, ['streams', 1, 'filter'], EVENT_FILTER],
    ['a filter of a stream without a resource: every collection\'s', { streams: [{}] }, ['streams', 0, 'filter'], ANY_FILTER],
    ['output.s3 (optional)', {}, ['output', 's3'], ['endpoint', 'region', 'forcePathStyle', 'partSizeMiB', 'staging']],
    ['output.azure (optional)', {}, ['output', 'azure'], ['account', 'endpoint', 'blockSizeMiB', 'retry', 'staging']],
    ['output.shard', {}, ['output', 'shard'], ['maxRows', 'maxBytes']],
    ['a key the schema does not have', {}, ['sink'], []],
    ['under a scalar', {}, ['source', 'baseUrl'], []],
    ['an array index into an object', {}, ['source', 0], []],
  ] as const)('%s', (_, extra, path, keys) => {
    expect(knownKeysAt(jobSchema, job(extra), path)).toEqual(expect.arrayContaining([...keys]));
    expect(knownKeysAt(jobSchema, job(extra), path)).toHaveLength(keys.length);
  });
});

describe('knownKeysAt: other shapes', () => {
  it('follows a pipe on its input side, a plain union into every option, a nullable', () => {
    const schema = z.object({
      piped: z.object({ a: z.string() }).pipe(z.object({ a: z.string() }).transform(() => 1)),
      either: z.union([z.object({ b: z.number() }), z.object({ c: z.number() }), z.string()]),
      maybe: z.object({ d: z.boolean() }).nullable().readonly(),
    });
    expect(knownKeysAt(schema, {}, ['piped'])).toEqual(['a']);
    expect(knownKeysAt(schema, {}, ['either'])).toEqual(['b', 'c']);
    expect(knownKeysAt(schema, {}, ['maybe'])).toEqual(['d']);
    expect(knownKeysAt(schema, 'not an object', [])).toEqual(['piped', 'either', 'maybe']);
  });
});
