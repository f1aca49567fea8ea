import { describe, expect, it } from 'vitest';
import { streamSchema, type StreamConfig } from '../../src/config/job-schema.js';
import { chainRequest } from '../../src/export/chain-request.js';
import { planPartitions } from '../../src/export/plan.js';
import { planStreams } from '../../src/export/streams.js';

const stream = (input: Record<string, unknown>): StreamConfig => streamSchema.parse(input);
const noWindow = () => ({ window: null, run: null });

describe('chainRequest', () => {
  it('a stream whose filters GET takes is listed by GET, its parameters as the query', () => {
    const [plan] = planPartitions(planStreams([stream({ resource: 'events', partitions: 2, filter: { type: 'alarm' } })], ['parquet']), noWindow);
    if (plan === undefined) throw new Error('no plan');
    expect(chainRequest(plan.resource, plan.params)).toEqual({
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
    expect(chainRequest(plan.resource, plan.params)).toEqual({
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
    ['a value that is not a string', { site: 5 }, /expected string/i],
    ['an empty key', { '': 'x' }, /a metadata key must not be empty/],
    ['an event value over 128000 characters', { site: 'x'.repeat(128_001) }, /at most 128000 characters/],
  ])('refuses %s, naming the key', (_, metadata, message) => {
    const parsed = streamSchema.safeParse({ resource: 'events', filter: { metadata } });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toMatch(message);
    expect(parsed.error?.issues[0]?.path.slice(0, 2)).toEqual(['filter', 'metadata']);
  });

  it('holds asset values to 10240 characters, as the platform does', () => {
    expect(streamSchema.safeParse({ resource: 'assets', filter: { metadata: { site: 'x'.repeat(10_240) } } }).success).toBe(true);
    expect(streamSchema.safeParse({ resource: 'assets', filter: { metadata: { site: 'x'.repeat(10_241) } } }).success).toBe(false);
  });
});
