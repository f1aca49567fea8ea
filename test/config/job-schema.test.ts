import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { jobSchema } from '../../src/config/job-schema.js';
import { type ConfigOverrides, loadConfig } from '../../src/config/load-config.js';
import { Secret } from '../../src/util/secret.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';
import { configErrorOf } from '../support/config-error.js';
import { filterOf } from '../support/streams.js';

const ENV = { API_KEY: 'env-api-key-value-0001' };
const SOURCE = {
  baseUrl: 'https://acme.platform.example/api/v1/projects/acme',
  auth: { type: 'api-key', apiKey: '${API_KEY}' },
};

afterEach(removeTempDirs);

/** Writes `job` (with a valid source unless it has one) as block YAML and loads it. */
function load(job: Record<string, unknown>, overrides: ConfigOverrides = {}) {
  const file = join(tempDir('bulk-extract-job-'), 'job.yaml');
  writeFileSync(file, stringify({ source: SOURCE, ...job }));
  return loadConfig(file, ENV, overrides);
}

const configError = (job: Record<string, unknown>, overrides: ConfigOverrides = {}) =>
  configErrorOf(() => load(job, overrides)).message;

const withStream = (stream: Record<string, unknown>) => ({ streams: [{ resource: 'events', ...stream }] });

describe('streams: valid files', () => {
  it('fills in the defaults of a stream and of output', () => {
    const config = load({ streams: [{ resource: 'events' }, { resource: 'assets', name: 'trees', partitions: 2 }] });
    expect(config.streams).toEqual([
      { resource: 'events', filter: {}, partitions: 10, limit: 1000, mode: 'full', safetyLag: 300_000 },
      { resource: 'assets', name: 'trees', filter: {}, partitions: 2, limit: 1000, mode: 'full', safetyLag: 300_000 },
    ]);
    expect(config.output).toEqual({
      dir: './out',
      formats: ['parquet'],
      table: 'files',
      parquet: { compression: 'zstd', rowGroupRows: 100_000 },
      ndjson: { compression: 'none' },
      shard: { maxRows: 1_000_000, maxBytes: 256 * 1024 * 1024 },
    });
    expect(config.checkpoint).toBeUndefined();
  });

  it('time filters take epoch ms or ISO 8601 with a zone, both as epoch ms', () => {
    const config = load(
      withStream({
        filter: {
          minLastUpdatedTime: '2024-01-01T00:00:00Z',
          maxLastUpdatedTime: '2024-01-01T02:00:00.250+01:00',
          minStartTime: 0,
          maxStartTime: 1_700_000_000_000,
        },
      }),
    );
    expect(filterOf(config.streams[0])).toEqual({
      minLastUpdatedTime: Date.UTC(2024, 0, 1),
      maxLastUpdatedTime: Date.UTC(2024, 0, 1, 1, 0, 0, 250),
      minStartTime: 0,
      maxStartTime: 1_700_000_000_000,
    });
  });

  it('accepts the bounds: partitions 1 and 10, limit 1 and 1000', () => {
    expect(load(withStream({ partitions: 1, limit: 1 })).streams[0]).toMatchObject({ partitions: 1, limit: 1 });
    expect(load(withStream({ partitions: 10, limit: 1000 })).streams[0]).toMatchObject({ partitions: 10, limit: 1000 });
  });

  it('the same resource twice under different names is fine', () => {
    const config = load({ streams: [{ resource: 'events' }, { resource: 'events', name: 'alarms', filter: { type: 'alarm' } }] });
    expect(config.streams.map((s) => s.name ?? s.resource)).toEqual(['events', 'alarms']);
  });
});

describe('streams: every wrong value is an error naming its key path', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['resource of the wrong type', { streams: [{ resource: 5 }] }, 'streams.0.resource'],
    ['an unknown resource', { streams: [{ resource: 'widgets' }] }, 'streams.0.resource'],
    ['a missing resource', { streams: [{ limit: 5 }] }, 'streams.0.resource'],
    ['name of the wrong type', withStream({ name: 5 }), 'streams.0.name'],
    ['name with capitals and spaces', withStream({ name: 'My Stream' }), 'streams.0.name'],
    ['name with a slash', withStream({ name: '../up' }), 'streams.0.name'],
    ['partitions of the wrong type', withStream({ partitions: 'many' }), 'streams.0.partitions'],
    ['partitions 0', withStream({ partitions: 0 }), 'streams.0.partitions'],
    ['partitions 11', withStream({ partitions: 11 }), 'streams.0.partitions'],
    ['partitions 2.5', withStream({ partitions: 2.5 }), 'streams.0.partitions'],
    ['limit of the wrong type', withStream({ limit: '100' }), 'streams.0.limit'],
    ['limit 0', withStream({ limit: 0 }), 'streams.0.limit'],
    ['limit 5000', withStream({ limit: 5000 }), 'streams.0.limit'],
    ['formats of the wrong type', withStream({ formats: 'parquet' }), 'streams.0.formats'],
    ['formats []', withStream({ formats: [] }), 'streams.0.formats'],
    ['formats [csv]', withStream({ formats: ['csv'] }), 'streams.0.formats.0'],
    ['filter of the wrong type', withStream({ filter: 'type=alarm' }), 'streams.0.filter'],
    ['filter.type of the wrong type', withStream({ filter: { type: 5 } }), 'streams.0.filter.type'],
    ['filter.type empty', withStream({ filter: { type: '' } }), 'streams.0.filter.type'],
    ['filter.subtype of the wrong type', withStream({ filter: { subtype: ['a'] } }), 'streams.0.filter.subtype'],
    ['filter.source of the wrong type', withStream({ filter: { source: true } }), 'streams.0.filter.source'],
    ['a time filter of the wrong type', withStream({ filter: { minStartTime: true } }), 'streams.0.filter.minStartTime'],
    ['a negative time', withStream({ filter: { maxStartTime: -1 } }), 'streams.0.filter.maxStartTime'],
    ['an ISO date without time', withStream({ filter: { minLastUpdatedTime: '2024-01-01' } }), 'streams.0.filter.minLastUpdatedTime'],
    ['an ISO time without zone', withStream({ filter: { minLastUpdatedTime: '2024-01-01T00:00:00' } }), 'streams.0.filter.minLastUpdatedTime'],
    ['a time that is not a date', withStream({ filter: { maxLastUpdatedTime: 'yesterday' } }), 'streams.0.filter.maxLastUpdatedTime'],
    ['an unknown filter key', withStream({ filter: { color: 'red' } }), 'streams.0.filter'],
    ['an event-only filter on assets', { streams: [{ resource: 'assets', filter: { type: 'alarm' } }] }, 'streams.0.filter'],
    ['an unknown stream key', withStream({ partition: 3 }), 'streams.0'],
    ['streams not a list', { streams: { resource: 'events' } }, 'streams'],
  ];

  it.each(cases)('%s', (_, job, path) => {
    const message = configError(job);
    expect(message).toContain(`${path}: `);
    expect(message).toContain('job.yaml');
  });

  it('string filters are held to the platform\'s lengths (type and subtype 64, source 128), naming the key and the bound', () => {
    expect(filterOf(load(withStream({ filter: { type: 'x'.repeat(64), source: 's'.repeat(128) } })).streams[0])).toEqual({
      type: 'x'.repeat(64),
      source: 's'.repeat(128),
    });
    expect(configError(withStream({ filter: { type: 'x'.repeat(65) } }))).toMatch(/streams\.0\.filter\.type: at most 64 characters/);
    expect(configError(withStream({ filter: { subtype: 'x'.repeat(65) } }))).toMatch(/streams\.0\.filter\.subtype: at most 64/);
    expect(configError(withStream({ filter: { source: 's'.repeat(129) } }))).toMatch(/streams\.0\.filter\.source: at most 128/);
  });

  it('an unknown filter key is named', () => {
    expect(configError(withStream({ filter: { color: 'red' } }))).toMatch(/streams\.0\.filter: .*color/);
    expect(configError({ streams: [{ resource: 'assets', filter: { type: 'alarm' } }] })).toMatch(
      /streams\.0\.filter: .*"type"/,
    );
  });

  it('the error names the index of the bad stream, not the first one', () => {
    expect(configError({ streams: [{ resource: 'events' }, { resource: 'assets', limit: 0 }] })).toContain('streams.1.limit: ');
  });

  it('a wrong value is echoed back', () => {
    expect(configError(withStream({ partitions: 11 }))).toMatch(/streams\.0\.partitions: .*\(got 11\)/);
    expect(configError(withStream({ limit: 5000 }))).toMatch(/streams\.0\.limit: .*\(got 5000\)/);
  });

  it('a bad time says what is expected (ISO 8601 with a zone, or epoch ms), not just "Invalid input"', () => {
    const message = configError(withStream({ filter: { minLastUpdatedTime: '2024-01-01' } }));
    expect(message).toContain('streams.0.filter.minLastUpdatedTime: ');
    expect(message).toContain('(got "2024-01-01")');
    expect(message).toMatch(/ISO 8601|epoch/);
  });

  it.each([
    ['month 13', '2024-13-01T00:00:00Z'],
    ['hour 25', '2024-01-01T25:00:00Z'],
    ['February 30 (V8 would roll it over to March 1)', '2024-02-30T00:00:00Z'],
    ['minute 61', '2024-01-01T00:61:00Z'],
  ])('an ISO time with %s is refused (it is not a point in time)', (_, text) => {
    expect(configError(withStream({ filter: { minStartTime: text } }))).toContain('streams.0.filter.minStartTime: ');
  });

  it('two streams with the same name (default names included) name the second one', () => {
    const message = configError({ streams: [{ resource: 'events' }, { resource: 'events' }] });
    expect(message).toContain('streams.1.name: ');
    expect(message).toContain('\'events\' is used twice');
    expect(configError({ streams: [{ resource: 'events', name: 'x' }, { resource: 'assets', name: 'x' }] })).toContain(
      'streams.1.name: ',
    );
    expect(configError({ streams: [{ resource: 'assets' }, { resource: 'events', name: 'assets' }] })).toContain(
      'streams.1.name: ',
    );
  });
});

describe('streams: mode and safetyLag', () => {
  it.each([
    ['90s', 90_000],
    ['5m', 300_000],
    ['2h', 7_200_000],
    ['1d', 86_400_000],
    ['250ms', 250],
    [0, 0],
    [45_000, 45_000],
  ])('safetyLag %s is %i ms', (lag, ms) => {
    expect(load(withStream({ mode: 'incremental', safetyLag: lag })).streams[0]).toMatchObject({
      mode: 'incremental',
      safetyLag: ms,
    });
  });

  it.each([['5 minutes'], ['-1m'], ['1.5h'], ['m'], [-5], ['8d']])('safetyLag %s is refused, naming the key', (lag) => {
    const message = configError(withStream({ mode: 'incremental', safetyLag: lag }));
    expect(message).toContain('streams.0.safetyLag: ');
  });

  it('an unknown mode is named', () => {
    expect(configError(withStream({ mode: 'delta' }))).toContain('streams.0.mode: ');
  });

  it('an incremental stream may set minLastUpdatedTime (the first run starts there) but not maxLastUpdatedTime', () => {
    const since = '2024-01-01T00:00:00Z';
    expect(filterOf(load(withStream({ mode: 'incremental', filter: { minLastUpdatedTime: since } })).streams[0])).toEqual({
      minLastUpdatedTime: Date.parse(since),
    });
    const message = configError(withStream({ mode: 'incremental', filter: { maxLastUpdatedTime: since } }));
    expect(message).toContain('streams.0.filter.maxLastUpdatedTime: ');
    expect(message).toContain('safetyLag');
  });
});

describe('output: every wrong value is an error naming its key path', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['formats []', { formats: [] }, 'output.formats'],
    ['formats [csv]', { formats: ['csv'] }, 'output.formats.0'],
    ['formats not a list', { formats: 'parquet' }, 'output.formats'],
    ['shard.maxBytes 10', { shard: { maxBytes: 10 } }, 'output.shard.maxBytes'],
    ['shard.maxRows 0', { shard: { maxRows: 0 } }, 'output.shard.maxRows'],
    ['an unknown output key', { color: 'red' }, 'output'],
    ['an unknown shard key', { shard: { maxFiles: 3 } }, 'output.shard'],
    ['dir empty', { dir: '' }, 'output.dir'],
    ['dir of the wrong type', { dir: 5 }, 'output.dir'],
    ['parquet.compression unknown', { parquet: { compression: 'lz4' } }, 'output.parquet.compression'],
    ['parquet.rowGroupRows too small', { parquet: { rowGroupRows: 10 } }, 'output.parquet.rowGroupRows'],
    ['ndjson.compression unknown', { ndjson: { compression: 'zstd' } }, 'output.ndjson.compression'],
    ['s3 settings without an s3:// dir', { dir: './out', s3: { region: 'eu-west-1' } }, 'output.s3'],
    ['s3.partSizeMiB below S3\'s 5', { dir: 's3://b/p', s3: { partSizeMiB: 4 } }, 'output.s3.partSizeMiB'],
    ['s3.endpoint not http(s)', { dir: 's3://b/p', s3: { endpoint: 'ftp://x' } }, 'output.s3.endpoint'],
    ['an unknown s3 key', { dir: 's3://b/p', s3: { bucket: 'b' } }, 'output.s3'],
    ['azure settings without an Azure dir', { dir: 's3://b/p', azure: { account: 'acct1' } }, 'output.azure'],
    ['azure.account not an account name', { dir: 'az://lake/p', azure: { account: 'My_Account' } }, 'output.azure.account'],
    ['azure.endpoint not http(s)', { dir: 'az://lake/p', azure: { endpoint: 'ftp://x' } }, 'output.azure.endpoint'],
    ['azure.blockSizeMiB past Azure\'s 4000', { dir: 'az://lake/p', azure: { blockSizeMiB: 4001 } }, 'output.azure.blockSizeMiB'],
    ['a credential under azure', { dir: 'az://lake/p', azure: { accountKey: 'c2VjcmV0LWtleQ==' } }, 'output.azure'],
  ];

  it.each(cases)('%s', (_, output, path) => {
    expect(configError({ output })).toContain(`${path}: `);
  });

  it('an unknown output key is named', () => {
    expect(configError({ output: { color: 'red' } })).toMatch(/output: .*"color"/);
  });

  it('checkpoint must be a non-empty path', () => {
    expect(configError({ checkpoint: '' })).toContain('checkpoint: ');
    expect(load({ checkpoint: 'state/cp.json' }).checkpoint).toBe('state/cp.json');
  });

  it('an unknown top-level key is named', () => {
    expect(configError({ stream: [] })).toMatch(/\(root\): .*"stream"/);
  });

  it('an s3:// dir keeps its checkpoint in the bucket: a checkpoint key is refused, naming it', () => {
    expect(configError({ output: { dir: 's3://lake/x' }, checkpoint: 'cp.json' })).toContain('checkpoint: with an s3:// output.dir');
    const job = load({ output: { dir: 's3://lake/x', s3: { endpoint: 'http://127.0.0.1:9000' } } });
    expect(job.output.s3).toEqual({ endpoint: 'http://127.0.0.1:9000', partSizeMiB: 8 });
  });

  it('an Azure dir keeps its checkpoint in the container; it gets the default Azure settings; a credential key is refused unrepeated', () => {
    for (const dir of ['az://lake/x', 'abfss://lake@acct1.dfs.core.windows.net/x', 'https://acct1.blob.core.windows.net/lake/x']) {
      expect(configError({ output: { dir }, checkpoint: 'cp.json' })).toContain('checkpoint: with an Azure output.dir');
      const retry = { maxAttempts: 6, baseDelayMs: 500, maxDelayMs: 30_000 };
      expect(load({ output: { dir } }).output.azure).toEqual({ blockSizeMiB: 8, retry });
    }
    expect(load({ output: { dir: './out' } }).output.azure).toBeUndefined();
    const refused = configError({ output: { dir: 'az://lake/x', azure: { sasToken: 'sv=2024&sig=c2VjcmV0LXNpZw' } } });
    expect(refused).toMatch(/output\.azure: .*"sasToken"/);
    expect(refused).not.toContain('c2VjcmV0LXNpZw');
  });

  it('an s3:// dir without S3 settings gets their defaults; a local dir gets none', () => {
    expect(load({ output: { dir: 's3://lake/x' } }).output.s3).toEqual({ partSizeMiB: 8 });
    expect(load({ output: { dir: './out' } }).output.s3).toBeUndefined();
  });

  it('an s3:// output takes its region from AWS_REGION of the environment, unless output.s3.region says', () => {
    const file = (output: Record<string, unknown>) => {
      const path = join(tempDir('bulk-extract-job-'), 'job.yaml');
      writeFileSync(path, stringify({ source: SOURCE, output }));
      return path;
    };
    const env = { ...ENV, AWS_REGION: 'eu-north-1' };
    expect(loadConfig(file({ dir: 's3://lake/x' }), env).output.s3).toEqual({ region: 'eu-north-1', partSizeMiB: 8 });
    expect(loadConfig(file({ dir: 's3://lake/x', s3: { region: 'eu-west-1' } }), env).output.s3?.region).toBe('eu-west-1');
    expect(loadConfig(file({ dir: 's3://lake/x' }), ENV).output.s3).toEqual({ partSizeMiB: 8 });
    expect(loadConfig(file({ dir: './out' }), env).output.s3).toBeUndefined();
  });
});

describe('CLI overrides', () => {
  const job = {
    streams: [{ resource: 'events' }],
    output: { dir: './from-file', formats: ['ndjson'] },
  };

  it('out, concurrency and formats replace the file\'s values', () => {
    const file = load({ ...job, source: { ...SOURCE, concurrency: 3 } });
    expect(file.output.dir).toBe('./from-file');
    expect(file.output.formats).toEqual(['ndjson']);
    expect(file.source.concurrency).toBe(3);
    const config = load(
      { ...job, source: { ...SOURCE, concurrency: 3 } },
      { out: '/tmp/elsewhere', concurrency: 12, formats: ['parquet', 'ndjson'] },
    );
    expect(config.output.dir).toBe('/tmp/elsewhere');
    expect(config.output.formats).toEqual(['parquet', 'ndjson']);
    expect(config.source.concurrency).toBe(12);
    expect(config.output.parquet.compression).toBe('zstd');
  });

  it('they apply when the file has no output section', () => {
    const config = load({ streams: [{ resource: 'events' }] }, { out: 'x', formats: ['ndjson'] });
    expect(config.output).toMatchObject({ dir: 'x', formats: ['ndjson'] });
  });

  it('undefined overrides leave the file alone', () => {
    const config = load(job, { out: undefined, concurrency: undefined, formats: undefined });
    expect(config.output.dir).toBe('./from-file');
    expect(config.source.concurrency).toBe(8);
  });

  it('are validated like the file: concurrency 0, 65 and 1.5 are errors naming source.concurrency', () => {
    for (const concurrency of [0, 65, 1.5]) {
      expect(configError(job, { concurrency })).toContain('source.concurrency: ');
    }
  });

  it('are validated like the file: formats [csv] and [], out ""', () => {
    expect(configError(job, { formats: ['csv'] })).toContain('output.formats.0: ');
    expect(configError(job, { formats: [] })).toContain('output.formats: ');
    expect(configError(job, { out: '' })).toContain('output.dir: ');
  });
});

describe('jobSchema', () => {
  it('parses a config object directly with the same defaults as loadConfig', () => {
    const source = { baseUrl: SOURCE.baseUrl, auth: { type: 'api-key', apiKey: new Secret('k-0123456789') } };
    const job = jobSchema.parse({ source, streams: [{ resource: 'assets', limit: 10 }] });
    expect(job.streams).toEqual([
      { resource: 'assets', filter: {}, partitions: 10, limit: 10, mode: 'full', safetyLag: 300_000 },
    ]);
    expect(job.output).toEqual(load({}).output);
  });

  it('refuses a literal credential: only loadConfig turns ${ENV} into a Secret', () => {
    const parsed = jobSchema.safeParse({ source: { baseUrl: SOURCE.baseUrl, auth: { type: 'token', token: 'x' } } });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(['source', 'auth', 'token']);
  });
});

describe('table: delta', () => {
  it('is output-wide or a stream\'s own; a stream says files to stay out of it', () => {
    const config = load({
      output: { table: 'delta' },
      streams: [{ resource: 'events' }, { resource: 'assets', table: 'files', formats: ['ndjson'] }],
    });
    expect(config.output.table).toBe('delta');
    expect(config.streams.map((stream) => stream.table)).toEqual([undefined, 'files']);
  });

  it('refuses a Delta stream with NDJSON, where the formats are set', () => {
    const outputWide = configError({ output: { table: 'delta', formats: ['parquet', 'ndjson'] }, ...withStream({}) });
    expect(outputWide).toContain('output.formats: ');
    expect(outputWide).toContain("stream 'events' is a Delta table (table: delta), whose data files are Parquet only; set formats: [parquet] (or give the stream table: files)");
    const own = configError(withStream({ table: 'delta', formats: ['ndjson'] }));
    expect(own).toContain('streams.0.formats: ');
    expect(own).toContain('set formats: [parquet]');
    expect(own).not.toContain('table: files');
  });

  it('names the kinds it knows for a wrong one', () => {
    expect(configError({ output: { table: 'lake' } })).toMatch(/output\.table: .*'files'.*'delta'|output\.table: .*files.*delta/);
    expect(configError(withStream({ table: 'Delta' }))).toContain('streams.0.table: ');
  });
});
