import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadConfig } from '../../src/config/load-config.js';
import { MIN_POINT_TIME, resolvePointTime } from '../../src/resources/index.js';
import type { DatapointsStreamConfig } from '../../src/config/job-schema.js';
import { planStreams } from '../../src/export/plan/index.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';
import { configErrorOf } from '../support/config-error.js';

const ENV = { API_KEY: 'env-api-key-value-0001' };
const CTS_VIEW = { space: 'cdf_cdm', externalId: 'CogniteTimeSeries', version: 'v1' };
const SOURCE = {
  baseUrl: 'https://acme.platform.example/api/v1/projects/acme',
  auth: { type: 'api-key', apiKey: '${API_KEY}' },
};

afterEach(removeTempDirs);

function load(stream: Record<string, unknown>) {
  const file = join(tempDir('bulk-extract-points-'), 'job.yaml');
  writeFileSync(file, stringify({ source: SOURCE, streams: [{ resource: 'datapoints', ...stream }] }));
  return loadConfig(file, ENV);
}

function points(stream: Record<string, unknown>): DatapointsStreamConfig {
  const loaded = load(stream).streams[0];
  if (loaded?.resource !== 'datapoints') throw new Error('not a datapoints stream');
  return loaded;
}

const problem = (stream: Record<string, unknown>) => configErrorOf(() => load(stream)).message;

describe('a datapoints stream in the job file', () => {
  it('defaults: every series, from 1900 (the platform\'s first time) to the run\'s start, raw points, 10 partitions', () => {
    const stream = points({});
    expect(stream).toMatchObject({ timeseries: {}, start: { at: MIN_POINT_TIME }, partitions: 10, mode: 'full' });
    expect(stream.end).toBeUndefined();
    expect(stream.aggregates).toBeUndefined();
    expect(stream.safetyLag).toBe(3_600_000);
  });

  it('takes start and end as epoch ms (negative before 1970), ISO 8601, now and N[w|d|h|m|s]-ago', () => {
    const stream = points({ start: '2d-ago', end: 'now' });
    expect(resolvePointTime(stream.start, 1_000_000_000_000)).toBe(1_000_000_000_000 - 2 * 86_400_000);
    expect(resolvePointTime(stream.end!, 1_000_000_000_000)).toBe(1_000_000_000_000);
    expect(points({ start: -1000, end: '2024-01-01T00:00:00+01:00' })).toMatchObject({
      start: { at: -1000 },
      end: { at: Date.UTC(2023, 11, 31, 23) },
    });
    expect(points({ start: '3w-ago' }).start).toEqual({ agoMs: 3 * 604_800_000 });
  });

  it.each([
    [{ start: 'yesterday' }, /start: expected epoch milliseconds.* \(got "yesterday"\)/],
    [{ start: 1.5 }, /start: expected epoch milliseconds/],
    [{ end: -3_000_000_000_000 }, /end: outside the platform's time range.* \(got -3000000000000\)/],
    [{ start: 2000, end: 1000 }, /end: end must come after start/],
    [{ aggregates: ['average'] }, /granularity: aggregates need a granularity/],
    [{ granularity: '1h' }, /granularity: a granularity applies to aggregates/],
    [{ aggregates: ['average'], granularity: '121m' }, /granularity: expected a number and a unit.* \(got "121m"\)/],
    [{ aggregates: ['average'], granularity: '1y' }, /granularity: .* \(got "1y"\)/],
    [
      { aggregates: ['avg'], granularity: '1h' },
      /aggregates\.0: not an aggregate; one of average, min, max, sum.* \(got "avg"\)/,
    ],
    [{ aggregates: ['maxDatapoint'], granularity: '1h' }, /aggregates\.0: maxDatapoint is not exported/],
    [{ aggregates: ['count', 'count'], granularity: '1h' }, /an aggregate is listed twice/],
    [
      { aggregates: ['sum'], granularity: '1d', timeseries: { isString: true } },
      /aggregates exist for numeric series only/,
    ],
    [{ timeZone: 'Europe/Oslo' }, /timeZone: a timeZone applies to aggregates/],
    [
      { aggregates: ['sum'], granularity: '1d', timeZone: 'Mars/Olympus' },
      /timeZone: not a time zone.* \(got "Mars\/Olympus"\)/,
    ],
    [{ targetUnit: 'temperature:deg_c', targetUnitSystem: 'SI' }, /give targetUnit or targetUnitSystem, not both/],
    [{ keep: 2 }, /keep: keep applies to mode: snapshot .*this stream's mode is full/],
    [{ mode: 'incremental', end: 'now' }, /end: an incremental stream ends each run's window itself/],
    [{ mode: 'incremental', aggregates: ['sum'], granularity: '1h' }, /mode: aggregates are exported with mode: full or snapshot/],
    [
      { timeseries: { ids: [1], externalIds: ['a'] } },
      /timeseries\.externalIds: give one of the lists ids, externalIds, instanceIds or a view; got ids and externalIds/,
    ],
    [
      { timeseries: { externalIds: ['a'], instanceIds: [{ space: 's', externalId: 'a' }] } },
      /timeseries\.instanceIds: give one of the lists ids, externalIds, instanceIds or a view; got externalIds and/,
    ],
    [
      { timeseries: { instanceIds: [{ space: 's', externalId: 'a' }], isStep: true } },
      /explicit instanceIds list selects the series/,
    ],
    [
      { timeseries: { ids: [1], view: CTS_VIEW } },
      /timeseries\.view: give one of the lists .* or a view; got ids and view/,
    ],
    [
      { timeseries: { view: CTS_VIEW, isStep: true } },
      /timeseries\.isStep: a view selects the series itself; remove the timeseries/,
    ],
    [
      { timeseries: { filter: { equals: { property: ['node', 'space'], value: 's' } } } },
      /timeseries\.filter: a filter of nodes needs/,
    ],
    [
      { timeseries: { view: CTS_VIEW, filter: { equals: { property: ['node', 'space'] } } } },
      /timeseries\.filter\.equals/,
    ],
    [{ timeseries: { view: { space: 'cdf_cdm', externalId: 'CogniteTimeSeries' } } }, /timeseries\.view\.version/],
    [
      { timeseries: { instanceIds: [{ space: 's', externalId: 'a' }, { space: 't', externalId: 'a' }, { space: 's', externalId: 'a' }] } },
      /timeseries\.instanceIds\.2: \{"space":"s","externalId":"a"\} is listed twice/,
    ],
    [
      { timeseries: { instanceIds: ['s:a'] } },
      /timeseries\.instanceIds\.0: expected \{space, externalId\}, the key of a data-model time series/,
    ],
    [{ timeseries: { instanceIds: [{ space: 's' }] } }, /timeseries\.instanceIds\.0\.externalId/],
    [
      { timeseries: { instanceIds: [{ space: 's', externalId: 'a', version: 1 }] } },
      /timeseries\.instanceIds\.0.*version/,
    ],
    [
      { timeseries: { instanceIds: [{ space: 'x'.repeat(44), externalId: 'a' }] } },
      /timeseries\.instanceIds\.0\.space: at most 43 characters/,
    ],
    [
      { timeseries: { ids: [1], isStep: true } },
      /explicit ids list selects the series itself; remove the timeseries filter isStep/,
    ],
    [{ timeseries: { ids: [1, 2, 1] } }, /timeseries\.ids\.2: 1 is listed twice/],
    [{ timeseries: { ids: [] } }, /give at least one/],
    [{ timeseries: { minStartTime: 0 } }, /minStartTime/],
    [{ metadataColumns: ['site'] }, /metadataColumns/],
  ])('refuses %j, naming the key and what is wrong', (stream, message) => {
    expect(problem(stream)).toMatch(message);
  });

  it('takes mode: snapshot with keep, aggregates and a relative window', () => {
    const stream = points({ mode: 'snapshot', keep: 2, start: '30d-ago', end: 'now', aggregates: ['average'], granularity: '1h' });
    expect(stream).toMatchObject({ mode: 'snapshot', keep: 2, start: { agoMs: 30 * 86_400_000 }, end: { agoMs: 0 } });
  });

  it('takes the timeseries filters of a timeseries stream, and explicit ids or externalIds', () => {
    const filtered = points({ timeseries: { isString: false, externalIdPrefix: 'TS-', metadata: { site: 'a' } } });
    expect(filtered.timeseries).toEqual({
      isString: false,
      externalIdPrefix: 'TS-',
      metadata: { site: 'a' },
    });
    expect(points({ timeseries: { externalIds: ['a', 'b'] } }).timeseries).toEqual({ externalIds: ['a', 'b'] });
    const instanceIds = [{ space: 'sp', externalId: 'a' }, { space: 'sq', externalId: 'a' }];
    expect(points({ timeseries: { instanceIds } }).timeseries).toEqual({ instanceIds });
    const filter = { equals: { property: ['node', 'space'], value: 'sp' } };
    expect(points({ timeseries: { view: CTS_VIEW, filter } }).timeseries).toEqual({ view: CTS_VIEW, filter });
  });
});

describe('the plan of a datapoints stream', () => {
  const plan = (stream: Record<string, unknown>) => planStreams(load(stream).streams, ['parquet'])[0]!;

  it('lists the series with the timeseries filters; aggregates list numeric series only', () => {
    expect(plan({ limit: 500, timeseries: { externalIdPrefix: 'TS-' } }).params.slice(0, 2)).toEqual([
      ['limit', '500'],
      ['externalIdPrefix', 'TS-'],
    ]);
    expect(plan({ aggregates: ['average'], granularity: '1h' }).params).toContainEqual(['isString', 'false']);
    const numeric = plan({ aggregates: ['average'], granularity: '1h', timeseries: { isString: false } });
    expect(numeric.params.filter(([key]) => key === 'isString')).toHaveLength(1);
  });

  it('records what a resume must not change: the window as given, aggregates, granularity and the query options', () => {
    const { params } = plan({ start: '30d-ago', aggregates: ['average', 'count'], granularity: '1h', includeStatus: true });
    expect(params).toEqual(
      expect.arrayContaining([
        ['start', `${30 * 86_400_000}ms-ago`],
        ['aggregates', 'average,count'],
        ['granularity', '1h'],
        ['includeStatus', 'true'],
      ]),
    );
  });

  it('explicit series send no listing parameters', () => {
    const { params } = plan({ timeseries: { ids: [3, 4] } });
    expect(params.find(([key]) => key === 'limit')).toBeUndefined();
    expect(params).toContainEqual(['ids', '[3,4]']);
  });
});

describe('a timeZone whose offset at the window\'s start is not whole quarter hours (the platform\'s 400 mid-run)', () => {
  const hourly = { aggregates: ['average'], granularity: '1h' };

  it('is refused when the job file is read, naming the stream, the key, the offset and a start the platform takes', () => {
    const message = problem({ name: 'monrovia', ...hourly, timeZone: 'Africa/Monrovia' });
    expect(message).toContain('monrovia');
    expect(message).toContain('timeZone: Africa/Monrovia is -00:43:08 off UTC at 1900-01-01T00:00:00.000Z, ');
    expect(message).toContain('the start of the window of stream \'monrovia\' (start defaults to 1900-01-01)');
    expect(message).toContain('refuses the query (HTTP 400)');
    // Liberia kept -00:43:08, then -00:44:30, until it took GMT on 1972-01-07 (00:44:30 UTC).
    const later = /set start to (\S+) or later/.exec(message)?.[1];
    expect(later).toBe('1972-01-08T00:00:00.000Z');
  });

  it('a start the refusal names is taken; so is a zone fine at 1900, a start after the zone\'s change, and a relative start', () => {
    expect(points({ ...hourly, timeZone: 'Africa/Monrovia', start: '1972-01-08T00:00:00Z' }).timeZone).toBe('Africa/Monrovia');
    expect(points({ ...hourly, timeZone: 'Europe/Oslo' }).timeZone).toBe('Europe/Oslo');
    expect(points({ ...hourly, timeZone: 'Asia/Kolkata', start: '1960-01-01T00:00:00Z' }).timeZone).toBe('Asia/Kolkata');
    expect(points({ ...hourly, timeZone: 'Africa/Monrovia', start: '30d-ago' }).timeZone).toBe('Africa/Monrovia');
    expect(points({ ...hourly, timeZone: 'UTC+05:45' }).timeZone).toBe('UTC+05:45');
  });

  it('Asia/Kolkata from 1900 (+05:21:10, Madras time until 1906): refused, with the start of its +05:30', () => {
    const message = problem({ ...hourly, timeZone: 'Asia/Kolkata' });
    expect(message).toMatch(/timeZone: Asia\/Kolkata is \+05:21:10 off UTC at 1900-01-01T00:00:00.000Z/);
    expect(message).toMatch(/set start to 1906-01-0\dT00:00:00.000Z or later/);
  });

  it('a window with a fixed end: the search for a later start stays within it', () => {
    const message = problem({ ...hourly, timeZone: 'Africa/Monrovia', end: '1950-01-01T00:00:00Z' });
    expect(message).toMatch(/Africa\/Monrovia is -00:43:08 off UTC at 1900-01-01T00:00:00.000Z/);
    expect(message).toContain('use a zone or offset of whole quarter hours');
  });

  it('a fixed offset that is not whole quarter hours: refused, pointing to one that is', () => {
    const message = problem({ ...hourly, timeZone: 'UTC+05:20', start: '2024-01-01T00:00:00Z' });
    expect(message).toContain('timeZone: UTC+05:20 is +05:20 off UTC at 2024-01-01T00:00:00.000Z, ');
    expect(message).toContain('the start of the window of stream \'datapoints\': ');
    expect(message).toContain('use a zone or offset of whole quarter hours');
  });
});
