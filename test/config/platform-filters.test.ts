import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadConfig } from '../../src/config/load-config.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';
import { configErrorOf } from '../support/config-error.js';
import { filterOf } from '../support/streams.js';

/**
 * The job file's forms of three platform filters: events' `endTime: {isNull}`, `labels` on assets,
 * files and relationships, and events' asset lists up to 5000 (the body's bound; GET takes 100).
 */
const SOURCE = { baseUrl: 'https://acme.platform.example/api/v1/projects/acme', auth: { type: 'api-key', apiKey: '${K}' } };

afterEach(removeTempDirs);

function load(stream: Record<string, unknown>) {
  const file = join(tempDir('bulk-extract-filters-'), 'job.yaml');
  writeFileSync(file, stringify({ source: SOURCE, streams: [stream] }));
  return loadConfig(file, { K: 'key-value-0001' });
}

const refusal = (stream: Record<string, unknown>) => configErrorOf(() => load(stream)).message;

const ids = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('events: endTime {isNull}', () => {
  it('takes {isNull: true} and {isNull: false}, held as the boolean the chain parameter carries', () => {
    expect(filterOf(load({ resource: 'events', filter: { endTime: { isNull: true } } }).streams[0])).toEqual({ endTime: true });
    expect(filterOf(load({ resource: 'events', filter: { endTime: { isNull: false } } }).streams[0])).toEqual({ endTime: false });
  });

  it('a range under endTime points to minEndTime and maxEndTime', () => {
    const message = refusal({ resource: 'events', filter: { endTime: { min: 1 } } });
    expect(message).toContain('streams.0.filter.endTime: ');
    expect(message).toMatch(/\{isNull: true\}.*minEndTime and maxEndTime/);
    expect(refusal({ resource: 'events', filter: { endTime: { isNull: 'yes' } } })).toMatch(/streams\.0\.filter\.endTime: expected \{isNull/);
    expect(refusal({ resource: 'events', filter: { endTime: true } })).toContain('streams.0.filter.endTime: ');
  });

  it('is refused with minEndTime or maxEndTime, naming both: the platform takes a range or isNull', () => {
    const message = refusal({ resource: 'events', filter: { endTime: { isNull: true }, maxEndTime: 5, minStartTime: 1 } });
    expect(message).toMatch(/endTime: \{isNull\} cannot be combined with maxEndTime/);
    expect(message).not.toContain('minStartTime');
  });

  it('is an events filter: relationships have an endTime range but no isNull', () => {
    expect(refusal({ resource: 'relationships', filter: { endTime: { isNull: true } } })).toMatch(/endTime/);
  });
});

describe('labels (assets, files, relationships)', () => {
  it.each(['assets', 'files', 'relationships'])('%s: containsAny and containsAll, a label as its externalId or {externalId}', (resource) => {
    const any = load({ resource, filter: { labels: { containsAny: ['pump', { externalId: 'critical' }] } } });
    expect(filterOf(any.streams[0])).toEqual({ labels: { containsAny: [{ externalId: 'pump' }, { externalId: 'critical' }] } });
    const all = load({ resource, filter: { labels: { containsAll: ['pump'] } } });
    expect(filterOf(all.streams[0])).toEqual({ labels: { containsAll: [{ externalId: 'pump' }] } });
  });

  it.each([
    ['both forms', { containsAny: ['a'], containsAll: ['b'] }, /give one of containsAny .* or containsAll/],
    ['neither', {}, /give one of containsAny/],
    ['an empty list', { containsAny: [] }, /at least one/],
    ['101 labels', { containsAny: Array.from({ length: 101 }, (_, i) => `l${i}`) }, /at most 100 entries/],
    ['an externalId of 256 characters', { containsAll: ['x'.repeat(256)] }, /containsAll\.0: .*255/],
    ['a number', { containsAny: [5] }, /containsAny\.0: expected a label's externalId/],
    ['a string for the list', { containsAll: 'pump' }, /containsAll: expected a list of labels, e\.g\. containsAll: \[pump, critical\]/],
    ['another key', { containsNone: ['a'] }, /containsNone|containsAny/],
    ['a bare list', ['a'], /expected \{containsAny: \[label, \.\.\.\]\} or \{containsAll/],
  ])('refuses %s, naming the key', (_, labels, pattern) => {
    const message = refusal({ resource: 'assets', filter: { labels } });
    expect(message).toContain('streams.0.filter.labels');
    expect(message).toMatch(pattern);
  });

  it('a misspelt containsAny is named once, with its did-you-mean', () => {
    const message = refusal({ resource: 'files', filter: { labels: { containsany: ['pump'] } } });
    expect(message).toContain('streams.0.filter.labels: Unrecognized key: "containsany" (did you mean "containsAny"?)');
    expect(message).not.toMatch(/problems|give one of/);
  });

  it('events and time series have no labels filter', () => {
    expect(refusal({ resource: 'events', filter: { labels: { containsAny: ['a'] } } })).toMatch(/labels/);
    expect(refusal({ resource: 'timeseries', filter: { labels: { containsAny: ['a'] } } })).toMatch(/labels/);
  });
});

describe('events: assetIds and assetExternalIds up to 5000', () => {
  it('takes 5000 of each and refuses 5001, naming the bound', () => {
    const externalIds = ids(5000).map((i) => `asset-${i}`);
    const job = load({ resource: 'events', filter: { assetIds: ids(5000), assetExternalIds: externalIds } });
    expect(filterOf(job.streams[0])).toEqual({ assetIds: ids(5000), assetExternalIds: externalIds });
    expect(refusal({ resource: 'events', filter: { assetIds: ids(5001) } })).toMatch(/streams\.0\.filter\.assetIds: at most 5000 entries/);
    expect(refusal({ resource: 'events', filter: { assetExternalIds: ids(5001).map(String) } })).toMatch(/at most 5000 entries/);
  });

  it('other collections keep their bound of 100', () => {
    expect(refusal({ resource: 'timeseries', filter: { assetIds: ids(101) } })).toMatch(/assetIds: at most 100 entries/);
    expect(refusal({ resource: 'files', filter: { assetIds: ids(101) } })).toMatch(/assetIds: at most 100 entries/);
  });
});
