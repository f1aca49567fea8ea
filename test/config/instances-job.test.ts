import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';
import { configErrorOf } from '../support/config-error.js';

/** A `resource: instances` stream in a whole job file, read as `run` reads it. */
afterEach(removeTempDirs);

const HEAD = ['source:', '  baseUrl: https://api.example.com/api/v1/projects/acme', '  auth:', '    type: api-key', '    apiKey: ${KEY}', 'streams:'];

function load(stream: string[]) {
  const file = join(tempDir('bulk-extract-instances-job-'), 'job.yaml');
  writeFileSync(file, `${[...HEAD, ...stream].join('\n')}\n`);
  return { file, load: () => loadConfig(file, { KEY: 'instances-job-key-01' }) };
}

const messageOf = (load: () => unknown): string => configErrorOf(load).message;

const ASSETS = ['  - resource: instances', '    view: {space: cdf_cdm, externalId: CogniteAsset, version: v1}'];

describe('a job file with an instances stream', () => {
  it('is read with its defaults: nodes, mode full, pages of 1000', () => {
    const [stream] = load(ASSETS).load().streams;
    expect(stream).toMatchObject({ resource: 'instances', instanceType: 'node', mode: 'full', limit: 1000 });
  });

  it('takes mode incremental (split by space, by externalId or not) and snapshot with keep', () => {
    const incremental = load([...ASSETS, '    mode: incremental', '    spaces: [a, b]', '    split: space']).load().streams[0];
    expect(incremental).toMatchObject({ mode: 'incremental', split: 'space', allowExpiredCursorsAndAcceptMissedDeletes: false });
    const byId = load([...ASSETS, '    mode: incremental', '    split: {property: externalId, at: [m]}']).load().streams[0];
    expect(byId).toMatchObject({ mode: 'incremental', split: { property: 'externalId', at: ['m'] } });
    const accepting = load([...ASSETS, '    mode: incremental', '    allowExpiredCursorsAndAcceptMissedDeletes: true']).load().streams[0];
    expect(accepting).toMatchObject({ allowExpiredCursorsAndAcceptMissedDeletes: true });
    expect(load([...ASSETS, '    mode: snapshot', '    keep: 3']).load().streams[0]).toMatchObject({ mode: 'snapshot', keep: 3 });
  });

  it('refuses a split by a property of the view, in one line, and the expired-cursor option outside incremental', () => {
    const split = load([...ASSETS, '    split: {property: criticality, at: [2, 4]}']);
    expect(messageOf(split.load)).toBe(
      `${split.file}: streams.0.split.property: criticality is a property of the view, which may change while a run reads: an instance whose value moves from one query's range to another's would be read twice or not at all; split by what never changes: split: {property: externalId, at: [...]}, or split: space with spaces (got "criticality")`,
    );
    const option = load([...ASSETS, '    allowExpiredCursorsAndAcceptMissedDeletes: true']);
    expect(messageOf(option.load)).toBe(
      `${option.file}: streams.0.allowExpiredCursorsAndAcceptMissedDeletes: applies to mode: incremental (the sync feed's cursors); this stream's mode is full (got true)`,
    );
  });

  it('refuses a key of collections (partitions) and a misspelt one, naming them', () => {
    const { load: read } = load([...ASSETS, '    partitions: 4', '    instanceTyp: edge']);
    const message = messageOf(read);
    expect(message).toMatch(/streams\.0: .*partitions/);
    expect(message).toMatch(/instanceTyp.*instanceType/);
  });

  it('refuses a filter problem at its path inside the filter', () => {
    const { load: read } = load([...ASSETS, '    filter: {and: [{equals: {property: [node, externalId], value: a}}, {range: {property: [node, createdTime]}}]}']);
    expect(messageOf(read)).toMatch(/streams\.0\.filter\.and\.1\.range: /);
  });
});
