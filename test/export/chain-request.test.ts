import { describe, expect, it } from 'vitest';
import { type ListedResource, streamSchema, type StreamConfig } from '../../src/config/job-schema.js';
import { chainRequest } from '../../src/export/kinds/collections/chain-request.js';
import { planPartitions } from '../../src/export/plan/partitions.js';
import { planStreams } from '../../src/export/plan/streams.js';

const stream = (input: Record<string, unknown>): StreamConfig => streamSchema.parse(input);
const noWindow = () => ({ window: null, run: null });

describe('chainRequest', () => {
  it('a stream whose filters GET takes is listed by GET, its parameters as the query', () => {
    const [plan] = planPartitions(planStreams([stream({ resource: 'events', partitions: 2, filter: { type: 'alarm' } })], ['parquet']), noWindow);
    if (plan === undefined) throw new Error('no plan');
    expect(chainRequest(plan.stream.resource as ListedResource, plan.params)).toEqual({
      method: 'GET',
      path: '/events',
      params: [
        ['limit', '1000'],
        ['type', 'alarm'],
        ['partition', '1/2'],
      ],
    });
  });

  it('metadata, which only POST /list takes, moves the whole request into its body: limit, partition, every filter', () => {
    const streams = planStreams(
      [stream({ resource: 'events', partitions: 3, limit: 200, filter: { type: 'alarm', metadata: { site: 'Troll A' }, maxStartTime: 9 } })],
      ['parquet'],
    );
    const plan = planPartitions(streams, noWindow)[2];
    if (plan === undefined) throw new Error('no plan');
    expect(chainRequest(plan.stream.resource as ListedResource, plan.params)).toEqual({
      method: 'POST',
      path: '/events/list',
      body: { limit: 200, partition: '3/3', filter: { type: 'alarm', startTime: { max: 9 }, metadata: { site: 'Troll A' } } },
    });
  });

  it('the same metadata pairs in another order are the same parameters (no drift from a reordered job file)', () => {
    const params = (metadata: Record<string, string>) =>
      planStreams([stream({ resource: 'assets', filter: { metadata } })], ['parquet'])[0]?.params;
    expect(params({ site: 'a', area: 'b' })).toEqual(params({ area: 'b', site: 'a' }));
    expect(params({ site: 'a', area: 'b' })).toContainEqual(['metadata', '{"area":"b","site":"a"}']);
  });
});

describe('filter.metadata in the job file', () => {
  it.each([
    ['an empty map', {}, /at least one key: value pair/],
    ['a value that is not a string', { site: 5 }, /expected a string; quote it in YAML \('5'\)/],
    ['an empty key', { '': 'x' }, /a metadata key must not be empty/],
    ['an event value over 128000 bytes', { site: 'x'.repeat(128_001) }, /the value of \\"site\\" is 128001 bytes \(UTF-8\); the platform takes values of at most 128000/],
  ])('refuses %s, naming the key', (_, metadata, message) => {
    const parsed = streamSchema.safeParse({ resource: 'events', filter: { metadata } });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toMatch(message);
    expect(parsed.error?.issues[0]?.path.slice(0, 2)).toEqual(['filter', 'metadata']);
  });

  const pairs = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, 'v']));
  it.each([
    ['events', 'at most 256 pairs', pairs(256), undefined],
    ['events', '257 pairs', pairs(257), /257 pairs; the platform takes at most 256/],
    ['events', 'a key of 128 bytes', { ['k'.repeat(128)]: 'v' }, undefined],
    ['events', 'a key of 129 bytes', { ['k'.repeat(129)]: 'v' }, /the key \\"k{40}…\\" is 129 bytes \(UTF-8\); the platform takes keys of at most 128/],
    ['events', 'a key of 65 letters of two bytes each', { ['ж'.repeat(65)]: 'v' }, /is 130 bytes \(UTF-8\); the platform takes keys of at most 128/],
    ['assets', 'a value of 10241 bytes', { s: `${'x'.repeat(10_239)}é` }, /the value of \\"s\\" is 10241 bytes \(UTF-8\); the platform takes values of at most 10240/],
    ['events', '200000 bytes in all', { a: 'x'.repeat(100_000), b: 'x'.repeat(99_998) }, undefined],
    ['events', '200001 bytes in all', { a: 'x'.repeat(100_000), b: 'x'.repeat(99_999) }, /its keys and values are 200001 bytes \(UTF-8\) in all; the platform takes at most 200000/],
    ['timeseries', '10001 bytes in all', { a: 'x'.repeat(10_000) }, /10001 bytes \(UTF-8\) in all; the platform takes at most 10000/],
    ['files', 'a value of 10241 bytes', { a: 'x'.repeat(10_241) }, /the value of \\"a\\" is 10241 bytes/],
    ['sequences', '257 pairs', pairs(257), /257 pairs; the platform takes at most 256/],
  ] as const)('%s metadata with %s: the platform limits', (resource, _, metadata, refused) => {
    const parsed = streamSchema.safeParse({ resource, filter: { metadata } });
    expect(parsed.success).toBe(refused === undefined);
    if (refused !== undefined) {
      expect(JSON.stringify(parsed.error?.issues)).toMatch(refused);
      expect(parsed.error?.issues[0]?.path).toEqual(['filter', 'metadata']);
    }
  });

  it('holds asset metadata to 10240 bytes of keys and values in all, as the platform does', () => {
    expect(streamSchema.safeParse({ resource: 'assets', filter: { metadata: { site: 'x'.repeat(10_236) } } }).success).toBe(true);
    expect(streamSchema.safeParse({ resource: 'assets', filter: { metadata: { site: 'x'.repeat(10_237) } } }).success).toBe(false);
  });
});

/** The first chain of a one-partition stream. */
function firstRequest(input: Record<string, unknown>) {
  const [plan] = planPartitions(planStreams([stream({ partitions: 1, ...input })], ['parquet']), noWindow);
  if (plan === undefined) throw new Error('no plan');
  return chainRequest(plan.stream.resource as ListedResource, plan.params);
}

describe('the filter kinds of the other collections', () => {
  it('id lists go on GET as one JSON array parameter, as the platform reads them', () => {
    expect(firstRequest({ resource: 'timeseries', filter: { assetIds: [3, 1], externalIdPrefix: 'PI:' } })).toEqual({
      method: 'GET',
      path: '/timeseries',
      params: [
        ['limit', '1000'],
        ['externalIdPrefix', 'PI:'],
        ['assetIds', '[3,1]'],
      ],
    });
  });

  it("files' assetIds, which GET /files documents only as an array of no stated form, go by POST /files/list as the SDKs send them", () => {
    expect(firstRequest({ resource: 'files', filter: { assetIds: [3, 1], mimeType: 'application/pdf' } })).toEqual({
      method: 'POST',
      path: '/files/list',
      body: { limit: 1000, filter: { mimeType: 'application/pdf', assetIds: [3, 1] } },
    });
  });

  it('lastUpdatedTime on time series, which GET does not take, makes the chain a POST with a {min, max} range', () => {
    expect(firstRequest({ resource: 'timeseries', filter: { minLastUpdatedTime: 5, maxLastUpdatedTime: 9, assetIds: [7] } })).toEqual({
      method: 'POST',
      path: '/timeseries/list',
      body: { limit: 1000, filter: { assetIds: [7], lastUpdatedTime: { min: 5, max: 9 } } },
    });
  });

  it('booleans, string lists and references: JSON of their own type in the body; bare ids and externalIds become references', () => {
    const request = firstRequest({
      resource: 'timeseries',
      filter: { isString: false, assetExternalIds: ['pump-1'], dataSetIds: [12, 'plant', { id: 3 }, { externalId: 'ds' }] },
    });
    expect(request).toEqual({
      method: 'POST',
      path: '/timeseries/list',
      body: {
        limit: 1000,
        filter: {
          isString: false,
          assetExternalIds: ['pump-1'],
          dataSetIds: [{ id: 12 }, { externalId: 'plant' }, { id: 3 }, { externalId: 'ds' }],
        },
      },
    });
  });

  it('files: rootAssetIds are an int64 array on GET and {id} references in the body', () => {
    expect(firstRequest({ resource: 'files', filter: { rootAssetIds: [4], uploaded: true } })).toMatchObject({
      method: 'GET',
      params: [
        ['limit', '1000'],
        ['rootAssetIds', '[4]'],
        ['uploaded', 'true'],
      ],
    });
    expect(firstRequest({ resource: 'files', filter: { rootAssetIds: [4], metadata: { a: 'b' } } })).toMatchObject({
      method: 'POST',
      body: { filter: { rootAssetIds: [{ id: 4 }], metadata: { a: 'b' } } },
    });
  });

  it('relationships: types, externalIds and a confidence range, all in the body (GET takes no filter)', () => {
    expect(
      firstRequest({
        resource: 'relationships',
        filter: { sourceTypes: ['asset'], targetExternalIds: ['TS-1'], minConfidence: 0.5, maxConfidence: 1 },
      }),
    ).toEqual({
      method: 'POST',
      path: '/relationships/list',
      body: {
        limit: 1000,
        filter: { sourceTypes: ['asset'], targetExternalIds: ['TS-1'], confidence: { min: 0.5, max: 1 } },
      },
    });
    expect(firstRequest({ resource: 'relationships' })).toEqual({ method: 'GET', path: '/relationships', params: [['limit', '1000']] });
  });

  it('sequences: every filter is sent by POST', () => {
    expect(firstRequest({ resource: 'sequences', filter: { externalIdPrefix: 'SQ' } })).toEqual({
      method: 'POST',
      path: '/sequences/list',
      body: { limit: 1000, filter: { externalIdPrefix: 'SQ' } },
    });
  });
});

describe('the platform bounds of the new filters, in the job file', () => {
  it.each([
    ['timeseries', { assetIds: [] }, ['filter', 'assetIds'], /at least one/],
    ['timeseries', { assetIds: Array.from({ length: 101 }, (_, i) => i + 1) }, ['filter', 'assetIds'], /at most 100 entries/],
    ['timeseries', { assetIds: [0] }, ['filter', 'assetIds', 0], /at least 1/],
    ['timeseries', { assetIds: [1.5] }, ['filter', 'assetIds', 0], /integer/],
    ['timeseries', { unit: 'x'.repeat(33) }, ['filter', 'unit'], /at most 32 characters/],
    ['timeseries', { isStep: 'yes' }, ['filter', 'isStep'], /boolean/],
    ['files', { directoryPrefix: 'd'.repeat(513) }, ['filter', 'directoryPrefix'], /at most 512 characters/],
    ['files', { dataSetIds: [{ name: 'x' }] }, ['filter', 'dataSetIds', 0], /an id \(a number\), an externalId/],
    ['relationships', { sourceTypes: ['assets'] }, ['filter', 'sourceTypes', 0], /one of asset, timeSeries, file, event, sequence/],
    ['relationships', { minConfidence: 1.5 }, ['filter', 'minConfidence'], /at most 1/],
    ['relationships', { metadata: { a: 'b' } }, ['filter'], /metadata/],
    ['sequences', { source: 'x' }, ['filter'], /source/],
  ])('%s: refuses %j, naming the key', (resource, filter, path, message) => {
    const parsed = streamSchema.safeParse({ resource, filter });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toMatch(message);
    expect(parsed.error?.issues[0]?.path).toEqual(path);
  });
});
