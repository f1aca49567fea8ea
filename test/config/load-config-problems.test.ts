import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';
import { configErrorOf } from '../support/config-error.js';

afterEach(removeTempDirs);

function write(lines: string[], dir = tempDir('bulk-extract-problems-')): string {
  const file = join(dir, 'job.yaml');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

const messageOf = (load: () => unknown): string => configErrorOf(load).message;

const OAUTH_JOB = [
  'source:',
  '  baseUrl: https://${CLUSTER}.example.com/api/v1/projects/${PROJECT}',
  '  auth:',
  '    type: oauth-client-credentials',
  '    tokenUrl: https://login.example.com/${TENANT_ID}/oauth2/v2.0/token',
  '    clientId: worker',
  '    clientSecret: ${CLIENT_SECRET}',
  'streams:',
  '  - resource: events',
  '    partitions: 11',
];

describe('loadConfig: every problem of a file in one error', () => {
  it('names every unset variable with its key, and the schema errors elsewhere, in one message', () => {
    const file = write(OAUTH_JOB);
    expect(messageOf(() => loadConfig(file, {}))).toBe(
      [
        `${file}: 5 problems:`,
        '  - source.baseUrl: environment variable CLUSTER is not set',
        '  - source.baseUrl: environment variable PROJECT is not set',
        '  - source.auth.tokenUrl: environment variable TENANT_ID is not set',
        '  - source.auth.clientSecret: environment variable CLIENT_SECRET is not set or empty',
        '  - streams.0.partitions: Too big: expected number to be <=10 (got 11)',
      ].join('\n'),
    );
  });

  it('a single unset variable is still one line', () => {
    const file = write(OAUTH_JOB.slice(0, -1));
    const env = { PROJECT: 'acme', TENANT_ID: 't', CLIENT_SECRET: 'env-secret-0001' };
    expect(messageOf(() => loadConfig(file, env))).toBe(`${file}: source.baseUrl: environment variable CLUSTER is not set`);
  });

  it('a variable unset in a key that is otherwise valid (output.dir) is reported too', () => {
    const file = write(['source:', '  baseUrl: https://a.example.com/api/v1/projects/p', '  auth:', '    type: token', '    token: ${T}', 'output:', '  dir: ${OUT_DIR}']);
    expect(messageOf(() => loadConfig(file, { T: 'env-token-0001' }))).toBe(`${file}: output.dir: environment variable OUT_DIR is not set`);
  });

  it('*File problems join the list, without a second line for the credential they did not give', () => {
    const dir = tempDir('bulk-extract-problems-');
    const file = write(
      ['source:', '  baseUrl: https://a.example.com/api/v1/projects/${PROJECT}', '  auth:', '    type: api-key', '    apiKeyFile: no-such-file', '  retry:', '    maxAttempts: 0'],
      dir,
    );
    let caught: unknown;
    try {
      loadConfig(file, {});
    } catch (error) {
      caught = error;
    }
    expect((caught as Error).message).toBe(
      [
        `${file}: 3 problems:`,
        '  - source.baseUrl: environment variable PROJECT is not set',
        `  - source.auth.apiKeyFile: cannot read ${join(dir, 'no-such-file')} (ENOENT)`,
        '  - source.retry.maxAttempts: Too small: expected number to be >=1 (got 0)',
      ].join('\n'),
    );
    expect((caught as Error).cause).toMatchObject({ code: 'ENOENT' });
  });

  it('a literal credential and an unknown key are listed without echoing either value', () => {
    const file = write([
      'source:',
      '  baseUrl: https://a.example.com/api/v1/projects/${PROJECT}',
      '  auth:',
      '    type: oauth-client-credentials',
      '    tokenUrl: https://login.example.com/token',
      '    clientId: worker',
      '    clientSecret: literal-secret-0001',
      '    client_secret: literal-secret-0002',
    ]);
    const message = messageOf(() => loadConfig(file, {}));
    expect(message).toMatch(/^.*job\.yaml: 3 problems:\n/);
    expect(message).toContain('  - source.auth.clientSecret: credentials are not written in the config file.');
    expect(message).toContain('  - source.auth: Unrecognized key: "client_secret"');
    expect(message).not.toContain('literal-secret-000');
  });
});

describe('loadConfig: an unknown key gets the closest known key at its place', () => {
  const SOURCE = ['source:', '  baseUrl: https://a.example.com/api/v1/projects/p', '  auth:', '    type: api-key', '    apiKey: ${K}'];
  const ENV = { K: 'env-api-key-0001' };

  it.each([
    ['a stream key', ['streams:', '  - resource: events', '    partitons: 4'], 'streams.0: Unrecognized key: "partitons" (did you mean "partitions"?)'],
    ['a top-level key', ['stream:', '  - resource: events'], '(root): Unrecognized key: "stream" (did you mean "streams"?)'],
    ['an event filter key', ['streams:', '  - resource: events', '    filter:', '      subtyp: x'], 'streams.0.filter: Unrecognized key: "subtyp" (did you mean "subtype"?)'],
    ['an event-only filter key on assets: which collection takes it', ['streams:', '  - resource: assets', '    filter:', '      type: x'], 'streams.0.filter: Unrecognized key: "type" (assets streams do not take it: it is an events filter)'],
    ['a key of the second stream', ['streams:', '  - resource: assets', '  - resource: events', '    Limt: 5'], 'streams.1: Unrecognized key: "Limt" (did you mean "limit"?)'],
    ['nothing close', ['output:', '  colour: red'], 'output: Unrecognized key: "colour"'],
    ['an output.s3 key', ['output:', '  dir: s3://b/p', '  s3:', '    regoin: eu-west-1'], 'output.s3: Unrecognized key: "regoin" (did you mean "region"?)'],
  ])('%s', (_, lines, line) => {
    const file = write([...SOURCE, ...lines]);
    expect(messageOf(() => loadConfig(file, ENV))).toBe(`${file}: ${line}`);
  });

  it.each([
    ['a resource in the wrong case', ['streams:', '  - resource: timeSeries'], 'streams.0.resource: Invalid discriminator value. Expected \'assets\' | \'events\' | \'timeseries\' | \'files\' | \'sequences\' | \'relationships\' | \'datapoints\' | \'instances\' (got "timeSeries"; did you mean "timeseries"?)'],
    ['a misspelled mode', ['streams:', '  - resource: events', '    mode: incremantal'], 'streams.0.mode: Invalid option: expected one of "full"|"incremental"|"snapshot" (got "incremantal"; did you mean "incremental"?)'],
    ['a time series filter on events', ['streams:', '  - resource: events', '    filter: {isString: true}'], 'streams.0.filter: Unrecognized key: "isString" (events streams do not take it: it is a timeseries filter)'],
    ['a filter several collections take, on relationships', ['streams:', '  - resource: relationships', '    filter: {metadata: {a: b}}'], 'streams.0.filter: Unrecognized key: "metadata" (relationships streams do not take it: it is a filter of assets, events, timeseries, files and sequences)'],
    ['a misspelled filter of another collection', ['streams:', '  - resource: events', '    filter: {isStrng: true}'], 'streams.0.filter: Unrecognized key: "isStrng" (did you mean "isString"? it is a timeseries filter, which events streams do not take)'],
    ['an events filter among the series filters of datapoints', ['streams:', '  - resource: datapoints', '    timeseries: {subtype: x}'], 'streams.0.timeseries: Unrecognized key: "subtype" (datapoints streams do not take it: it is an events filter)'],
    ['filter on a datapoints stream', ['streams:', '  - resource: datapoints', '    filter: {isString: false}'], 'streams.0: Unrecognized key: "filter" (a datapoints stream takes the time series filters under timeseries: {isString: false, ...})'],
    ['a datapoints key on events', ['streams:', '  - resource: events', '    granularity: 1h'], 'streams.0: Unrecognized key: "granularity" (events streams do not take it: it is a key of datapoints streams)'],
    ['a key every other stream takes, on instances', ['streams:', '  - resource: instances', '    view: {space: s, externalId: v, version: "1"}', '    partitions: 2'], 'streams.0: Unrecognized key: "partitions" (instances streams do not take it: it is a key of every other kind of stream)'],
  ])('a key or resource in the wrong collection: %s', (_, lines, line) => {
    const file = write([...SOURCE, ...lines]);
    expect(messageOf(() => loadConfig(file, ENV))).toBe(`${file}: ${line}`);
  });

  it("a metadata filter beyond the platform's limits is refused when the job file is read, naming the stream's key", () => {
    const keys = Array.from({ length: 257 }, (_, i) => `        k${i}: v`);
    const file = write([...SOURCE, 'streams:', '  - resource: assets', '    filter:', '      metadata:', ...keys]);
    expect(messageOf(() => loadConfig(file, ENV))).toBe(`${file}: streams.0.filter.metadata: 257 pairs; the platform takes at most 256 (got a mapping)`);
  });

  it('under auth, the keys of the type it names, *File forms included; a value under the key is never echoed', () => {
    const file = write([...SOURCE.slice(0, 4), '    apiKeyFlie: literal-api-key-0001', '    clientsecret: literal-secret-0003']);
    const message = messageOf(() => loadConfig(file, {}));
    expect(message).toContain('  - source.auth: Unrecognized key: "apiKeyFlie" (did you mean "apiKeyFile"?)');
    expect(message).toMatch(/^ {2}- source\.auth: Unrecognized key: "clientsecret"$/m);
    expect(message).not.toContain('literal-');
  });

  it('a misspelled secret key gets the right spelling, without its value', () => {
    const file = write([
      'source:',
      '  baseUrl: https://a.example.com/api/v1/projects/p',
      '  auth:',
      '    type: oauth-client-credentials',
      '    tokenUrl: https://login.example.com/token',
      '    clientId: worker',
      '    clientSecret: ${S}',
      '    client_secret: literal-secret-0004',
    ]);
    const message = messageOf(() => loadConfig(file, { S: 'env-secret-0005' }));
    expect(message).toBe(`${file}: source.auth: Unrecognized key: "client_secret" (did you mean "clientSecret"?)`);
  });
});
