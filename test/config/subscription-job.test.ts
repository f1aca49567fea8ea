import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { planStream } from '../../src/export/kinds/index.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';
import { configErrorOf } from '../support/config-error.js';

/** A datapoints stream with `subscription:` in a whole job file, read as `run` reads it, and planned. */
afterEach(removeTempDirs);

const HEAD = ['source:', '  baseUrl: https://api.example.com/api/v1/projects/acme', '  auth:', '    type: api-key', '    apiKey: ${KEY}'];
const STREAM = ['streams:', '  - resource: datapoints', '    name: changes', '    subscription: pt-all'];

function load(lines: string[]) {
  const file = join(tempDir('bulk-extract-subscription-job-'), 'job.yaml');
  writeFileSync(file, `${[...HEAD, ...lines].join('\n')}\n`);
  return { file, load: () => loadConfig(file, { KEY: 'subscription-job-key-01' }) };
}

const messageOf = (load: () => unknown): string => configErrorOf(load).message;

describe('a datapoints stream that follows a subscription', () => {
  it('is incremental when its mode is left out, and plans as a subscription stream that reads bad points', () => {
    const [stream] = load([...STREAM, '    includeStatus: true', '    initializeCursors: 2d-ago']).load().streams;
    expect(stream).toMatchObject({ resource: 'datapoints', mode: 'incremental', subscription: 'pt-all', initializeCursors: '2d-ago' });
    const plan = planStream(stream!, ['parquet']);
    expect(plan).toMatchObject({
      resource: 'datapoint-subscription',
      mode: 'incremental',
      partitions: 10,
      subscription: { externalId: 'pt-all', initializeCursors: '2d-ago', includeStatus: true, ignoreBadDataPoints: false, treatUncertainAsBad: true },
      changes: { includeStatus: true },
    });
    // Where a first run starts is no drift: a later run places no partition with it.
    expect(plan.params.map(([key]) => key)).toEqual(['subscription', 'limit', 'includeStatus', 'ignoreBadDataPoints', 'treatUncertainAsBad']);
  });

  it.each([
    ['mode: full', ['    mode: full'], 'streams.0.mode: a stream that follows a subscription reads every point written or deleted'],
    ['a selection of series', ['    timeseries: {externalIdPrefix: PT-}'], 'streams.0.timeseries: a stream that follows a subscription'],
    ['a start', ['    start: 30d-ago'], 'streams.0.start: a stream that follows a subscription reads every point written or deleted in the subscription\'s series, whatever their times: remove start'],
    ['an end', ['    end: now'], 'streams.0.end: '],
    ['aggregates', ['    aggregates: [average]', '    granularity: 1h'], 'streams.0.aggregates: '],
    ['a target unit', ['    targetUnit: temperature:deg_c'], 'streams.0.targetUnit: '],
  ])('refuses %s beside it, naming the key', (_, extra, expected) => {
    expect(messageOf(load([...STREAM, ...extra]).load)).toContain(expected);
  });

  it('refuses a Delta table, and initializeCursors without a subscription or in another form', () => {
    expect(messageOf(load([...STREAM, '    table: delta', '    formats: [parquet]']).load))
      .toContain("streams.0.table: stream 'changes' follows a subscription: its change rows are written as plain files");
    const window = ['streams:', '  - resource: datapoints', '    initializeCursors: now'];
    expect(messageOf(load(window).load)).toContain('streams.0.initializeCursors: initializeCursors applies to a stream that follows a subscription');
    expect(messageOf(load([...STREAM, '    initializeCursors: yesterday']).load)).toContain("expected 'now' or 'N[w|d|h|m]-ago'");
  });
});
