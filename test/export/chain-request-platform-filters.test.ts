import { describe, expect, it } from 'vitest';
import { type ListedResource, streamSchema } from '../../src/config/job-schema.js';
import { aggregateFilter, chainRequest } from '../../src/export/kinds/collections/chain-request.js';
import { planPartitions } from '../../src/export/plan/partitions.js';
import { planStreams } from '../../src/export/plan/streams.js';

/** The requests of streams that set events' `endTime: {isNull}`, `labels`, or asset lists over 100. */
function firstRequest(input: Record<string, unknown>) {
  const streams = planStreams([streamSchema.parse(input)], ['parquet']);
  const [plan] = planPartitions(streams, () => ({ window: null, run: null }));
  if (plan === undefined) throw new Error('no plan');
  return { params: plan.params, request: chainRequest(plan.stream.resource as ListedResource, plan.params) };
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('events: endTime {isNull}', () => {
  it('is sent by POST as the body field endTime: {isNull}, and counted with it', () => {
    const { params, request } = firstRequest({
      resource: 'events',
      partitions: 1,
      filter: { endTime: { isNull: true }, type: 'alarm' },
    });
    expect(params).toContainEqual(['endTime', 'true']);
    expect(request).toEqual({ method: 'POST', path: '/events/list', body: { limit: 1000, filter: { type: 'alarm', endTime: { isNull: true } } } });
    expect(aggregateFilter('events', [['endTime', 'false']])).toEqual({ endTime: { isNull: false } });
  });
});

describe('labels', () => {
  it.each(['assets', 'files', 'relationships'])('%s: sent by POST in the platform form, the parameter its canonical JSON', (resource) => {
    const { params, request } = firstRequest({ resource, filter: { labels: { containsAll: ['pump', { externalId: 'critical' }] } } });
    const labels = { containsAll: [{ externalId: 'pump' }, { externalId: 'critical' }] };
    expect(params).toContainEqual(['labels', JSON.stringify(labels)]);
    expect(request).toMatchObject({ method: 'POST', path: `/${resource}/list`, body: { filter: { labels } } });
  });
});

describe('events: assetIds and assetExternalIds', () => {
  it('100 go in the query of GET, as before', () => {
    const { request } = firstRequest({ resource: 'events', filter: { assetIds: ids(100), assetExternalIds: ['a'] } });
    expect(request).toMatchObject({ method: 'GET', path: '/events' });
  });

  it('101 to 5000 move the request into the body of POST /events/list, with every other filter', () => {
    const { request } = firstRequest({ resource: 'events', partitions: 2, filter: { assetIds: ids(101), type: 'alarm' } });
    expect(request).toEqual({
      method: 'POST',
      path: '/events/list',
      body: { limit: 1000, partition: '1/2', filter: { type: 'alarm', assetIds: ids(101) } },
    });
    const externalIds = ids(5000).map((i) => `asset-${i}`);
    const many = firstRequest({ resource: 'events', filter: { assetExternalIds: externalIds } });
    expect(many.request).toMatchObject({ method: 'POST', body: { filter: { assetExternalIds: externalIds } } });
  });

  it('the time series\' assetIds stay on GET (their bound is 100 either way)', () => {
    expect(chainRequest('timeseries', [['limit', '1000'], ['assetIds', JSON.stringify(ids(100))]])).toMatchObject({ method: 'GET' });
  });
});
