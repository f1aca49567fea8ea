import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { jobKeys, jobProblems } from '../../src/config/job-schema.js';
import { meantKey } from '../../src/config/key-hints.js';
import { loadConfig } from '../../src/config/load-config.js';
import { whatParsedProblems } from '../../src/config/what-parsed.js';
import { Secret } from '../../src/util/secret.js';
import { configErrorOf } from '../support/config-error.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';

afterEach(removeTempDirs);

const SOURCE = ['source:', '  baseUrl: https://a.example.com/api/v1/projects/p', '  auth:', '    type: token', '    token: ${T}'];
const ENV = { T: 'what-parsed-token-0001' };
const VIEW = '    view: {space: cdf_cdm, externalId: CogniteAsset, version: v1}';

function messageOf(lines: string[]): { file: string; message: string } {
  const file = join(tempDir('bulk-extract-what-parsed-'), 'job.yaml');
  writeFileSync(file, `${[...SOURCE, ...lines].join('\n')}\n`);
  return { file, message: configErrorOf(() => loadConfig(file, ENV)).message };
}

describe('loadConfig: the rules over several keys run on what parsed', () => {
  it('a job file with six mistakes, three of them keys that disagree, gives one message with all six', () => {
    const { file, message } = messageOf([
      'output:',
      '  dir: ./out',
      '  s3: {region: eu-west-1}',
      'streams:',
      '  - resource: instances',
      VIEW,
      '    spaces: sim_site_a',
      '    mode: incremental',
      '    keep: 3',
      '  - resource: datapoints',
      '    mode: incremental',
      '    aggregates: [average]',
      '    granularty: 1h',
      '  - resource: events',
      '    partitions: 11',
    ]);
    expect(message).toBe(
      [
        `${file}: 6 problems:`,
        '  - streams.0.spaces: Invalid input: expected array, received string (got "sim_site_a")',
        '  - streams.1: Unrecognized key: "granularty" (did you mean "granularity"?)',
        '  - streams.2.partitions: Too big: expected number to be <=10 (got 11)',
        '  - output.s3: S3 settings, but output.dir is not an s3:// URL; remove them or set output.dir: s3://bucket/prefix (got a mapping)',
        "  - streams.0.keep: keep applies to mode: snapshot (completed snapshots to keep); this stream's mode is incremental (got 3)",
        "  - streams.1.mode: aggregates are exported with mode: full or snapshot (an incremental run's window would end " +
        'inside a bucket that the next run reads again); use mode: snapshot with a relative start (30d-ago) for a new ' +
        'window each run, or export raw points incrementally and aggregate them downstream (got "incremental")',
      ].join('\n'),
    );
  });

  it('a typo granularty is the one problem: not also "aggregates need a granularity"', () => {
    const { file, message } = messageOf(['streams:', '  - resource: datapoints', '    aggregates: [average]', '    granularty: 1h']);
    expect(message).toBe(`${file}: streams.0: Unrecognized key: "granularty" (did you mean "granularity"?)`);
  });

  it('a rule that reads a key that did not parse is left out: spaces as a string says nothing of split: space', () => {
    const { file, message } = messageOf(['streams:', '  - resource: instances', VIEW, '    spaces: sim_site_a', '    split: space']);
    expect(message).toBe(`${file}: streams.0.spaces: Invalid input: expected array, received string (got "sim_site_a")`);
  });

  it('a subscription that did not parse leaves its stream unjudged as either kind', () => {
    const { file, message } = messageOf(['streams:', '  - resource: datapoints', '    subscription: ""', '    initializeCursors: now']);
    expect(message).toBe(`${file}: streams.0.subscription: Too small: expected string to have >=1 characters (got "")`);
  });

  it('a stream that cannot be parsed keeps its place: a name used twice around it is still told, at its index', () => {
    const { file, message } = messageOf(['streams:', '  - resource: events', '  - resource: widgets', '  - resource: events']);
    expect(message).toBe(
      [
        `${file}: 2 problems:`,
        "  - streams.1.resource: Invalid discriminator value. Expected 'assets' | 'events' | 'timeseries' | 'files' | " +
        "'sequences' | 'relationships' | 'datapoints' | 'instances' (got \"widgets\")",
        "  - streams.2.name: stream name 'events' is used twice; give each stream of the same resource its own name",
      ].join('\n'),
    );
  });
});

/** Values a key of a job file may hold: valid ones of several keys, and junk of every shape. */
const value: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom('incremental', 'snapshot', 'full', 'space', '1h', 'average', './out', 's3://b/p', 'abfss://c@a.dfs.core.windows.net/p'),
  fc.constantFrom(1, 3, 11, 0, -1, true, null),
  fc.constantFrom(['average'], ['parquet'], ['ndjson'], ['a', 'b'], [1], { property: 'externalId', at: ['m'] }),
  fc.constantFrom({ space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' }, { isString: true }, { at: 5 }),
  fc.anything({ maxDepth: 2 }),
);

const STREAM_KEYS = [
  'resource', 'name', 'mode', 'keep', 'formats', 'table', 'partitions', 'limit', 'metadataColumns', 'filter', 'view',
  'spaces', 'split', 'instanceType', 'aggregates', 'granularity', 'granularty', 'timeZone', 'timeseries', 'start', 'end',
  'subscription', 'initializeCursors', 'targetUnit', 'targetUnitSystem', 'allowExpiredCursorsAndAcceptMissedDeletes',
];

const stream = fc.oneof(
  fc.record({ resource: fc.constantFrom('events', 'assets', 'datapoints', 'instances', 'widgets') }).chain((base) =>
    fc.dictionary(fc.constantFrom(...STREAM_KEYS), value, { maxKeys: 6 }).map((keys) => ({ ...base, ...keys })),
  ),
  value,
);

/** A job file's shape after interpolation: a valid source, then anything at the other keys. */
const job = fc.record(
  {
    source: fc.constantFrom({ baseUrl: 'https://a.example.com/api/v1/projects/p', auth: { type: 'token', token: new Secret('t') } }, 5),
    streams: fc.oneof(fc.array(stream, { maxLength: 4 }), value),
    output: fc.oneof(fc.dictionary(fc.constantFrom('dir', 's3', 'azure', 'formats', 'table', 'dri'), value, { maxKeys: 3 }), value),
    checkpoint: value,
    metrics: value,
  },
  { requiredKeys: [] },
);

const maybe = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });
const common = {
  name: maybe(fc.constantFrom('a', 'b')),
  mode: maybe(fc.constantFrom('full', 'incremental', 'snapshot')),
  keep: maybe(fc.constantFrom(1, 3)),
  formats: maybe(fc.constantFrom(['parquet'], ['ndjson'])),
  table: maybe(fc.constantFrom('delta', 'files')),
};
/** Streams whose keys each parse, and may disagree. */
const validStream = fc.oneof(
  fc.record({ resource: fc.constant('events'), ...common, filter: maybe(fc.constant({ maxLastUpdatedTime: 5 })) }),
  fc.record({
    resource: fc.constant('datapoints'),
    ...common,
    aggregates: maybe(fc.constant(['average'])),
    granularity: maybe(fc.constant('1h')),
    end: maybe(fc.constant('now')),
    subscription: maybe(fc.constant('sub-1')),
    initializeCursors: maybe(fc.constant('now')),
  }),
  fc.record({
    resource: fc.constant('instances'),
    ...common,
    view: fc.constant({ space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' }),
    spaces: maybe(fc.constantFrom(['a'], ['a', 'b'])),
    split: maybe(fc.constant('space')),
  }),
).map((stream) => Object.fromEntries(Object.entries(stream).filter(([, v]) => v !== undefined)));
const validJob = fc.record({
  source: fc.constant({ baseUrl: 'https://a.example.com/api/v1/projects/p', auth: { type: 'token', token: new Secret('t') } }),
  streams: fc.array(validStream, { maxLength: 4 }),
  output: fc.record(
    {
      dir: fc.constantFrom('./out', 's3://b/p', 'abfss://c@acct.dfs.core.windows.net/p'),
      s3: fc.constant({ region: 'eu-west-1' }),
      table: fc.constantFrom('delta', 'files'),
      formats: fc.constantFrom(['parquet'], ['ndjson']),
    },
    { requiredKeys: ['dir'] },
  ),
  checkpoint: maybe(fc.constant('./cp.json')),
});

describe('whatParsedProblems on any shape', () => {
  it('never throws, and gives problems with a path and a message', () => {
    fc.assert(
      fc.property(fc.oneof(job, fc.anything()), (input) => {
        const problems = whatParsedProblems(input, (path, key) => meantKey(input, path, key));
        for (const problem of problems) {
          expect(Array.isArray(problem.path)).toBe(true);
          expect(typeof problem.message).toBe('string');
        }
      }),
      { numRuns: 300 },
    );
  });

  it('on a file whose keys all parse, gives the problems of every rule, as jobProblems does', () => {
    fc.assert(
      fc.property(validJob, (input) => {
        const parsed = jobKeys.safeParse(input);
        expect(parsed.success).toBe(true);
        if (!parsed.success) return;
        expect(whatParsedProblems(input, () => undefined)).toEqual(jobProblems(parsed.data));
      }),
      { numRuns: 300 },
    );
  });
});
