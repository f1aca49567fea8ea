import { describe, expect, it } from 'vitest';
import { streamSchema } from '../../src/config/job-schema.js';
import { aggregateFilter } from '../../src/export/kinds/collections/chain-request.js';
import { EXTRA_COLUMN, type FilterSpec, filterKeys, RESOURCE_SPECS, RESOURCES, resourceSpec } from '../../src/resources/index.js';
import { parseAggregateBody } from '../../src/simulator/aggregate-query.js';
import { parseListBody } from '../../src/simulator/list-body.js';
import { parseListQuery } from '../../src/simulator/query.js';

/** A value each kind of filter takes, as the job file gives it. */
function sample(filter: FilterSpec): unknown {
  switch (filter.kind) {
    case 'time':
      return 1000;
    case 'number':
      return filter.maximum;
    case 'string':
      return 'x';
    case 'boolean':
      return true;
    case 'ids':
      return [7, 9];
    case 'strings':
      return [filter.values?.[0] ?? 'x'];
    case 'refs':
      return [{ id: 3 }, { externalId: 'x' }];
    case 'map':
      return { site: 'x' };
    case 'isNull':
      return { isNull: true };
    case 'labels':
      return { containsAny: ['x'] };
  }
}

/** The value as a chain's parameter carries it (`{isNull}` as its boolean, labels as the body's form). */
function sent(filter: FilterSpec): string {
  if (filter.kind === 'isNull') return 'true';
  if (filter.kind === 'labels') return JSON.stringify({ containsAny: [{ externalId: 'x' }] });
  const value = sample(filter);
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * Filter sets that set every filter at least once, each valid together: a range field's `{isNull}`
 * goes in a set without that field's `min`/`max` (the platform takes one or the other).
 */
function validSets(filters: readonly FilterSpec[]): FilterSpec[][] {
  const isNull = filters.filter((f) => f.kind === 'isNull');
  const withoutIsNull = filters.filter((f) => f.kind !== 'isNull');
  if (isNull.length === 0) return [withoutIsNull];
  const nulled = new Set(isNull.map((f) => f.field));
  return [withoutIsNull, [...filters.filter((f) => f.kind !== 'time' || !nulled.has(f.field))]];
}

/**
 * The resource registry (src/resources/): one file per collection, from which the job file's
 * filters, the request parameters, the count filter, the Parquet columns and the simulator's
 * validation all derive. These tests hold every spec to the rules those consumers rely on, and
 * check that each consumer follows the spec rather than a list of its own.
 */
describe.each(RESOURCE_SPECS.map((spec) => [spec.name, spec] as const))('the %s spec', (name, spec) => {
  it('lists its filters once each; times name the range field and the end they set', () => {
    const keys = spec.filters.map((filter) => filter.key);
    // A key of the job file is never also a range field's name, but for that field's {isNull}.
    const rangeFields = new Set<string>(
      spec.filters.filter((f) => f.kind === 'time' || f.kind === 'number').map((f) => f.field),
    );
    for (const filter of spec.filters as readonly FilterSpec[]) {
      if (rangeFields.has(filter.key)) expect(filter.kind, filter.key).toBe('isNull');
    }
    expect(new Set(keys).size).toBe(keys.length);
    for (const filter of spec.filters as readonly FilterSpec[]) {
      if (filter.kind === 'time' || filter.kind === 'number') expect(filter.bound, filter.key).toMatch(/^(min|max)$/);
      else expect('bound' in filter, filter.key).toBe(false);
      // Maps (metadata), references, {isNull} and labels have no GET parameter: only POST /list's body takes them.
      if (['map', 'refs', 'isNull', 'labels'].includes(filter.kind)) expect(filter.via, filter.key).toBe('body');
      // {isNull} is the other form of a range field's object: its key is that field.
      if (filter.kind === 'isNull') {
        expect(filter.key, filter.key).toBe(filter.field);
        expect(spec.filters.some((f) => f.kind === 'time' && f.field === filter.field), filter.key).toBe(true);
      }
    }
    expect(keys).toEqual(expect.arrayContaining(['minLastUpdatedTime', 'maxLastUpdatedTime']));
  });

  it('has the Parquet columns the profile needs: its required key first, unique names, `extra` last', () => {
    const names = spec.columns.map((column) => column.name);
    expect(new Set(names).size).toBe(names.length);
    expect(spec.columns[0]).toEqual({ name: spec.key, kind: spec.key === 'id' ? 'int64' : 'string', required: true });
    expect(spec.columns.filter((column) => column.required)).toHaveLength(1);
    expect(spec.columns.at(-1)).toEqual({ name: EXTRA_COLUMN, kind: 'unknown-fields', required: false });
  });

  it('is what the job file accepts as its filters, and nothing else', () => {
    for (const set of validSets(spec.filters)) {
      const filter = Object.fromEntries(set.map((f) => [f.key, sample(f)]));
      expect(streamSchema.safeParse({ resource: name, filter }).success).toBe(true);
    }
    expect(streamSchema.safeParse({ resource: name, filter: { notAFilter: 1 } }).success).toBe(false);
  });

  it('is what the simulator accepts: on GET the filters GET takes, in the list and count bodies every one', () => {
    const filters = spec.filters as readonly FilterSpec[];
    const onGet = filters.filter((f) => f.via !== 'body');
    const query = new URLSearchParams(onGet.map((f): [string, string] => [f.key, sent(f)]));
    expect(parseListQuery(name, query).ok).toBe(true);
    for (const f of filters.filter((spec) => spec.via === 'body')) {
      expect(parseListQuery(name, new URLSearchParams([[f.key, 'x']])).ok, `${f.key} on GET`).toBe(false);
    }
    for (const set of validSets(filters)) {
      const params = set.map((f): [string, string] => [f.key, sent(f)]);
      const body = { filter: aggregateFilter(name, params) };
      if (spec.countable) expect(parseAggregateBody(name, body)).toMatchObject({ ok: true });
      expect(parseListBody(name, body)).toMatchObject({ ok: true });
    }
  });
});

describe('the registry', () => {
  it('names every collection once; resourceSpec finds each; filterKeys keeps the spec order', () => {
    expect(RESOURCE_SPECS.map((spec) => spec.name)).toEqual([...RESOURCES]);
    for (const name of RESOURCES) {
      expect(resourceSpec(name).name).toBe(name);
      expect(filterKeys(name)).toEqual(resourceSpec(name).filters.map((f) => f.key));
    }
  });
});
