import { describe, expect, it } from 'vitest';
import { streamSchema, type StreamConfig } from '../../src/config/job-schema.js';
import { ConfigError } from '../../src/errors.js';
import { chainParams, planPartitions } from '../../src/export/plan/partitions.js';
import { planStreams, streamName } from '../../src/export/plan/streams.js';

const stream = (input: Record<string, unknown>): StreamConfig => streamSchema.parse(input);

describe('planStreams', () => {
  it('sends limit first, then the filters in a fixed order, whatever the order in the config', () => {
    const [plan] = planStreams(
      [
        stream({
          resource: 'events',
          limit: 250,
          filter: {
            maxStartTime: 9,
            minStartTime: 8,
            maxLastUpdatedTime: 7,
            minLastUpdatedTime: 6,
            source: 'SAP',
            subtype: 'high',
            type: 'alarm',
          },
        }),
      ],
      ['parquet'],
    );
    expect(plan?.params).toEqual([
      ['limit', '250'],
      ['type', 'alarm'],
      ['subtype', 'high'],
      ['source', 'SAP'],
      ['minLastUpdatedTime', '6'],
      ['maxLastUpdatedTime', '7'],
      ['minStartTime', '8'],
      ['maxStartTime', '9'],
    ]);
  });

  it('leaves out filters that are not set; an asset stream sends limit and its time bounds only', () => {
    const [events, assets] = planStreams(
      [
        stream({ resource: 'events', filter: { source: 'SAP' } }),
        stream({ resource: 'assets', limit: 10, filter: { maxLastUpdatedTime: 5 } }),
      ],
      ['parquet'],
    );
    expect(events?.params).toEqual([
      ['limit', '1000'],
      ['source', 'SAP'],
    ]);
    expect(assets?.params).toEqual([
      ['limit', '10'],
      ['maxLastUpdatedTime', '5'],
    ]);
  });

  it('sends an ISO time as the epoch milliseconds it stands for, the same as the number', () => {
    const iso = planStreams([stream({ resource: 'events', filter: { minStartTime: '2024-01-01T01:00:00+01:00' } })], [
      'parquet',
    ]);
    const ms = planStreams([stream({ resource: 'events', filter: { minStartTime: 1704067200000 } })], ['parquet']);
    expect(iso[0]?.params).toEqual([
      ['limit', '1000'],
      ['minStartTime', '1704067200000'],
    ]);
    expect(iso[0]?.params).toEqual(ms[0]?.params);
  });

  it('names a stream after its resource by default, else by its name', () => {
    const plans = planStreams(
      [stream({ resource: 'events' }), stream({ resource: 'events', name: 'alarms', filter: { type: 'alarm' } })],
      ['parquet'],
    );
    expect(plans.map((p) => p.name)).toEqual(['events', 'alarms']);
    expect(streamName(stream({ resource: 'assets' }))).toBe('assets');
  });

  it('takes the job formats unless the stream has its own, without repeats', () => {
    const plans = planStreams(
      [stream({ resource: 'events' }), stream({ resource: 'assets', formats: ['ndjson', 'ndjson', 'parquet'] })],
      ['parquet'],
    );
    expect(plans.map((p) => p.formats)).toEqual([['parquet'], ['ndjson', 'parquet']]);
    expect(plans.map((p) => p.partitions)).toEqual([10, 10]);
  });

  it('--stream picks one stream by name', () => {
    const plans = planStreams(
      [stream({ resource: 'events' }), stream({ resource: 'events', name: 'alarms' }), stream({ resource: 'assets' })],
      ['parquet'],
      'alarms',
    );
    expect(plans.map((p) => p.name)).toEqual(['alarms']);
  });

  it('--stream with an unknown name is a ConfigError that lists the streams of the job', () => {
    const run = () =>
      planStreams([stream({ resource: 'events' }), stream({ resource: 'assets', name: 'trees' })], ['parquet'], 'nope');
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(/--stream nope: no such stream; the job has events, trees/);
  });

  it('a job without streams is a ConfigError that says how to add one', () => {
    expect(() => planStreams([], ['parquet'])).toThrow(ConfigError);
    expect(() => planStreams([], ['parquet'])).toThrow(/streams: .*add at least one/);
  });
});

/** A checkpoint of version 1: no window, so the chains send the config's parameters only. */
const NO_WINDOW = () => ({ window: null, run: null });

describe('planPartitions', () => {
  it('n = 1: one chain, no partition parameter, referring to its stream\'s plan', () => {
    const streams = planStreams([stream({ resource: 'events', partitions: 1, limit: 5 })], ['ndjson']);
    const plans = planPartitions(streams, NO_WINDOW);
    expect(plans).toEqual([{ stream: streams[0], m: 1, n: 1, params: [['limit', '5']], run: null, dir: 'events/part=1-of-1' }]);
    // The stream's settings (collection, formats, metadata columns) are its plan's, not copies.
    expect(plans[0]?.stream).toBe(streams[0]);
    expect(plans[0]?.stream).toMatchObject({ name: 'events', resource: 'events', formats: ['ndjson'] });
  });

  it('n > 1: chains 1..n, each with partition=m/n last', () => {
    const plans = planPartitions(
      planStreams([stream({ resource: 'assets', partitions: 3, limit: 7, filter: { minLastUpdatedTime: 1 } })], [
        'parquet',
      ]),
      NO_WINDOW,
    );
    expect(plans.map((p) => [p.m, p.n])).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    for (const plan of plans) {
      expect(plan.params).toEqual([
        ['limit', '7'],
        ['minLastUpdatedTime', '1'],
        ['partition', `${plan.m}/3`],
      ]);
    }
  });

  it('streams x partitions, and the stream plan is left unchanged', () => {
    const streams = planStreams(
      [stream({ resource: 'events', partitions: 2 }), stream({ resource: 'assets', partitions: 4 })],
      ['parquet'],
    );
    const before = structuredClone(streams);
    const plans = planPartitions(streams, NO_WINDOW);
    expect(plans.map((p) => `${p.stream.name}:${p.m}/${p.n}`)).toEqual([
      'events:1/2',
      'events:2/2',
      'assets:1/4',
      'assets:2/4',
      'assets:3/4',
      'assets:4/4',
    ]);
    expect(streams).toEqual(before);
  });

  it('every partition of a stream has the same params but for partition', () => {
    const plans = planPartitions(
      planStreams([stream({ resource: 'events', partitions: 10, filter: { type: 'x' } })], ['parquet']),
      NO_WINDOW,
    );
    const rest = plans.map((p) => p.params.filter(([key]) => key !== 'partition'));
    for (const params of rest) expect(params).toEqual(rest[0]);
    expect(new Set(plans.map((p) => p.params.find(([key]) => key === 'partition')?.[1])).size).toBe(10);
  });
});

describe('chainParams', () => {
  it('the run\'s window replaces the config\'s lastUpdatedTime bounds, in the fixed filter order', () => {
    const [plan] = planStreams(
      [stream({ resource: 'events', limit: 10, filter: { type: 'alarm', minLastUpdatedTime: 5, minStartTime: 1 } })],
      ['parquet'],
    );
    if (plan === undefined) throw new Error('no plan');
    expect(chainParams(plan, { window: { from: 7, until: 100 } })).toEqual([
      ['limit', '10'],
      ['type', 'alarm'],
      ['minLastUpdatedTime', '7'],
      ['maxLastUpdatedTime', '99'],
      ['minStartTime', '1'],
    ]);
    expect(chainParams(plan, { window: { from: null, until: 100 } })).toEqual([
      ['limit', '10'],
      ['type', 'alarm'],
      ['maxLastUpdatedTime', '99'],
      ['minStartTime', '1'],
    ]);
    expect(chainParams(plan, { window: null })).toEqual(plan.params);
  });

  it('an incremental run\'s partitions live in its run folder', () => {
    const streams = planStreams([stream({ resource: 'events', partitions: 2, mode: 'incremental' })], ['ndjson']);
    const plans = planPartitions(streams, () => ({ window: { from: 1, until: 2 }, run: '20260101T000000.000Z' }));
    expect(plans.map((p) => [p.dir, p.run])).toEqual([
      ['events/run=20260101T000000.000Z/part=1-of-2', '20260101T000000.000Z'],
      ['events/run=20260101T000000.000Z/part=2-of-2', '20260101T000000.000Z'],
    ]);
  });
});
