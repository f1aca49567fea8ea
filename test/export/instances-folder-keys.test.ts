import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJob } from '../../src/export/run/run-job.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { openDuck, type Duck } from '../support/export-duckdb.js';
import type { InstanceItem, ListAnswer } from '../support/instances.js';
import { type ProxiedJob, proxiedJob } from '../support/proxied-job.js';

/**
 * A view with properties named `part`, `run` and `Part`, the keys of the output's folders
 * (`run=<id>/part=<m>-of-<n>`): DuckDB's default read of a glob (the docs' own queries) turns on
 * hive partitioning and puts the folder's value in a column of that name, over the file's own.
 * The properties are written under other names (`property_part`, ...), so the default read gives
 * the property's values under its column and the folder's under its key.
 */
const KEY = 'folder-keys-api-key-01';
const VIEW = { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };
/** The properties added to the view, each with the value an instance gets (from its externalId). */
const ADDED = { part: 'p', run: 'r', Part: 'P' } as const;

let sim: Simulator;
let duck: Duck;

beforeAll(async () => {
  const instances = { assets: 60, activities: 0, timeseries: 0, edges: 0 };
  sim = await startSimulator({ seed: 8, apiKeys: [KEY], instances });
  duck = await openDuck();
});

afterAll(async () => {
  duck.close();
  await sim.close();
});

/** The simulator's answer, with the view's definition and its instances holding the ADDED properties. */
function withAddedProperties(path: string, body: string): string {
  if (path.startsWith('/models/views/byids')) {
    type Property = { containerPropertyIdentifier: string };
    const answer = JSON.parse(body) as { items: { properties: Record<string, Property> }[] };
    for (const view of answer.items) {
      // Text properties of the same container as `name`.
      const text = view.properties.name!;
      for (const property of Object.keys(ADDED)) {
        view.properties[property] = { ...text, containerPropertyIdentifier: property };
      }
    }
    return JSON.stringify(answer);
  }
  if (path.startsWith('/models/instances/list')) {
    const answer = JSON.parse(body) as ListAnswer;
    for (const item of answer.items) Object.assign(valuesOf(item), addedValues(item.externalId));
    return JSON.stringify(answer);
  }
  return body;
}

function valuesOf(item: InstanceItem): Record<string, unknown> {
  return item.properties[VIEW.space]![`${VIEW.externalId}/${VIEW.version}`]!;
}

function addedValues(externalId: string): Record<string, string> {
  return Object.fromEntries(Object.entries(ADDED).map(([property, prefix]) => [property, `${prefix}-${externalId}`]));
}

/** A job through a proxy that adds ADDED to the view and to each instance. */
function proxiedJobWithAddedProperties(mode: 'full' | 'snapshot'): Promise<ProxiedJob> {
  return proxiedJob({
    sim,
    key: KEY,
    answer: () => undefined,
    alter: withAddedProperties,
    streams: [{ resource: 'instances', name: 'assets', view: VIEW, limit: 25, mode }],
    output: { formats: ['parquet'] },
  });
}

/** What a default read gives for the folder keys: `part`, and `run` below a snapshot's folder. */
function folderValues(mode: 'full' | 'snapshot', out: string): Record<string, string> {
  if (mode === 'full') return { part: '1-of-1' };
  return { run: readFileSync(join(out, 'assets', '_LATEST'), 'utf8').trim().replace('run=', ''), part: '1-of-1' };
}

/** The column each ADDED property is written as. */
const RENAMED: Record<keyof typeof ADDED, string> = { part: 'property_part', run: 'property_run', Part: 'property_Part_2' };

describe('a property named like a folder key', () => {
  it.each([
    ['full', 'assets/*/*.parquet'],
    ['snapshot', 'assets/*/*/*.parquet'],
  ] as const)('%s: read_parquet of %s gives the property under its new name, the folder under its key', async (mode, glob) => {
    const job = await proxiedJobWithAddedProperties(mode);
    try {
      const result = await runJob({ config: job.config, logger: silentLogger });
      expect(result.state).toBe('complete');
      const rows = await duck.rows(`SELECT * FROM read_parquet('${join(job.out, glob)}') ORDER BY externalId`);
      expect(rows).toHaveLength(60);
      const folders = folderValues(mode, job.out);
      for (const row of rows) {
        const externalId = String(row.externalId);
        const values = addedValues(externalId);
        for (const [property, value] of Object.entries(values)) {
          expect(Object.values(row), `property ${property} of ${externalId} in a column of the default read`).toContain(value);
        }
        const renamed = Object.entries(RENAMED).map(([name, column]) => [column, String(values[name])] as const);
        const expected = { ...Object.fromEntries(renamed), ...folders };
        const got = Object.fromEntries(Object.keys(expected).map((column) => [column, row[column]]));
        expect(got, externalId).toEqual(expected);
      }
      // The manifest lists the columns as written: the properties renamed, no folder key among them.
      const manifest = JSON.parse(readFileSync(join(job.out, '_manifest.json'), 'utf8')) as {
        streams: Record<string, { columns: { name: string }[] }>;
      };
      const names = manifest.streams.assets!.columns.map((column) => column.name);
      expect(names).toEqual(expect.arrayContaining(Object.values(RENAMED)));
      expect(names.filter((name) => ['part', 'run'].includes(name.toLowerCase()))).toEqual([]);
    } finally {
      await job.close();
    }
  });
});
