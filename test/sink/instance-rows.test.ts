import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Table, tableToIPC } from 'apache-arrow';
import * as wasm from 'parquet-wasm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PageItems, scanPage } from '../../src/page/index.js';
import { InstanceRowBuilder } from '../../src/sink/instances/instance-rows.js';
import { ParquetShardWriter } from '../../src/sink/parquet/parquet-writer.js';
import { newParquetDeps } from '../support/parquet-deps.js';
import type { InstanceColumn, InstanceColumnKind } from '../../src/resources/index.js';
import { type Duck, openDuck } from '../support/export-duckdb.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';

/**
 * Instances of one view into typed Parquet columns (InstanceRowBuilder), read back by DuckDB: each
 * property in its column, and everything no column takes in `extra`, in the instance's shape.
 */
let duck: Duck;

beforeAll(async () => {
  duck = await openDuck();
});

const parquet = newParquetDeps();

afterAll(async () => {
  duck.close();
  await parquet.encoders.close();
});
afterEach(removeTempDirs);

const VIEW = { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };
const KEY = 'CogniteAsset/v1';

const field = (name: string, kind: InstanceColumnKind, required = false): InstanceColumn => ({
  name,
  kind,
  list: false,
  from: { field: name },
  required,
});
const prop = (name: string, kind: InstanceColumnKind, list = false, column = name): InstanceColumn => ({
  name: column,
  kind,
  list,
  from: { property: name, type: kind },
  required: false,
});

const SPECS: InstanceColumn[] = [
  field('space', 'string', true),
  field('externalId', 'string', true),
  field('instanceType', 'string', true),
  field('version', 'int64', true),
  field('type', 'node-ref'),
  field('createdTime', 'timestamp', true),
  field('lastUpdatedTime', 'timestamp', true),
  field('deletedTime', 'timestamp'),
  prop('name', 'string'),
  prop('tags', 'string', true),
  prop('parent', 'node-ref'),
  prop('assets', 'node-ref', true),
  prop('serial', 'int64'),
  prop('ratio', 'float'),
  prop('commissioned', 'date'),
  prop('lastSeen', 'timestamp'),
  prop('spec', 'json'),
  prop('type', 'node-ref', false, 'property_type'),
  { name: 'extra', kind: 'extra-json', list: false, required: false, from: { extra: true } },
];

function node(externalId: string, props: Record<string, unknown>, more: Record<string, unknown> = {}) {
  return {
    instanceType: 'node',
    space: 'site_a',
    externalId,
    version: 3,
    createdTime: 1_700_000_000_000,
    lastUpdatedTime: 1_700_000_100_000,
    properties: { cdf_cdm: { [KEY]: props } },
    ...more,
  };
}

/** The page's bytes as the platform sends them, scanned as the export scans a page. */
function page(items: readonly unknown[], text?: string): PageItems {
  const body = Buffer.from(text ?? JSON.stringify({ items }));
  return PageItems.scanned(body, scanPage(body)!);
}

async function rowsOf(builder: InstanceRowBuilder): Promise<Record<string, unknown>[]> {
  const table = wasm.Table.fromIPCStream(tableToIPC(new Table([builder.batch()]), 'stream'));
  const path = join(tempDir('instance-rows-'), 'instances.parquet');
  writeFileSync(path, wasm.writeParquet(table));
  const rows = await duck.rows(
    `SELECT externalId, version::VARCHAR AS version, to_json(type)::VARCHAR AS type, epoch_ms(createdTime) AS created,
       deletedTime, name, to_json(tags)::VARCHAR AS tags, to_json(parent)::VARCHAR AS parent,
       to_json(assets)::VARCHAR AS assets, serial::VARCHAR AS serial, ratio, commissioned::VARCHAR AS commissioned,
       epoch_ms(lastSeen) AS lastSeen, spec, to_json(property_type)::VARCHAR AS property_type, extra
     FROM read_parquet('${path}')`,
  );
  return rows.map((row) => ({
    ...row,
    created: Number(row.created),
    lastSeen: row.lastSeen === null ? null : Number(row.lastSeen),
  }));
}

describe('InstanceRowBuilder', () => {
  it('puts each property in its typed column and nothing else in extra', async () => {
    const builder = new InstanceRowBuilder(VIEW, SPECS, 4);
    const items = [
      node(
        'pump-1',
        {
          name: 'Pump 1',
          tags: ['east', 'west'],
          parent: { space: 'site_a', externalId: 'plant' },
          assets: [{ space: 'site_b', externalId: 'motor-7' }],
          serial: 42,
          ratio: 0.25,
          commissioned: '2024-02-29',
          lastSeen: '2024-03-01T12:00:00.250+01:00',
          spec: { rated: [1, 2], unit: 'kW' },
          type: { space: 'cdf_cdm', externalId: 'pumpClass' },
        },
        { type: { space: 'types', externalId: 'Pump' } },
      ),
      node('bare', {}),
    ];
    builder.add(page(items));
    expect(await rowsOf(builder)).toEqual([
      {
        externalId: 'pump-1',
        version: '3',
        type: '{"space":"types","externalId":"Pump"}',
        created: 1_700_000_000_000,
        deletedTime: null,
        name: 'Pump 1',
        tags: '["east","west"]',
        parent: '{"space":"site_a","externalId":"plant"}',
        assets: '[{"space":"site_b","externalId":"motor-7"}]',
        serial: '42',
        ratio: 0.25,
        commissioned: '2024-02-29',
        lastSeen: Date.UTC(2024, 2, 1, 11, 0, 0, 250),
        spec: '{"rated":[1,2],"unit":"kW"}',
        property_type: '{"space":"cdf_cdm","externalId":"pumpClass"}',
        extra: null,
      },
      {
        externalId: 'bare',
        version: '3',
        type: null,
        created: 1_700_000_000_000,
        deletedTime: null,
        name: null,
        tags: null,
        parent: null,
        assets: null,
        serial: null,
        ratio: null,
        commissioned: null,
        lastSeen: null,
        spec: null,
        property_type: null,
        extra: null,
      },
    ]);
  });

  it('keeps in extra, in the instance shape, what no column takes, and leaves those columns null', async () => {
    const builder = new InstanceRowBuilder(VIEW, SPECS, 4);
    const item = node(
      'odd',
      { name: 7, commissioned: '2024-02-30', lastSeen: 'yesterday', assets: [{ space: 's' }], addedLater: true },
      { existingVersion: 2 },
    );
    const withOther = { ...item, properties: { ...item.properties, other: { 'Thing/v2': { size: 3 } } } };
    builder.add(page([withOther]));
    const [row] = await rowsOf(builder);
    expect(row).toMatchObject({ name: null, commissioned: null, lastSeen: null, assets: null });
    expect(JSON.parse(row!.extra as string)).toEqual({
      existingVersion: 2,
      properties: {
        cdf_cdm: {
          [KEY]: { name: 7, commissioned: '2024-02-30', lastSeen: 'yesterday', assets: [{ space: 's' }], addedLater: true },
        },
        other: { 'Thing/v2': { size: 3 } },
      },
    });
  });

  it('reads an int64 beyond 2^53 exactly, in its column and in extra', async () => {
    const builder = new InstanceRowBuilder(VIEW, SPECS, 4);
    const text =
      '{"items":[{"instanceType":"node","space":"site_a","externalId":"big","version":1,"createdTime":1,' +
      '"lastUpdatedTime":2,"properties":{"cdf_cdm":{"CogniteAsset/v1":{"serial":9007199254740993,' +
      '"spec":{"id":-9223372036854775808},"unknown":12345678901234567890}}}}]}';
    builder.add(page([], text));
    const [row] = await rowsOf(builder);
    expect(row).toMatchObject({ serial: '9007199254740993', spec: '{"id":-9223372036854775808}' });
    expect(row!.extra).toBe('{"properties":{"cdf_cdm":{"CogniteAsset/v1":{"unknown":12345678901234567890}}}}');
  });

  it('refuses an instance without its space or externalId', () => {
    const builder = new InstanceRowBuilder(VIEW, SPECS, 4);
    const { externalId: _gone, ...missing } = node('x', {});
    expect(() => builder.addOne(missing)).toThrow(/An instance has no valid 'externalId'/);
    expect(() => builder.addOne([1])).toThrow(/not an object/);
  });
});

describe('an instance shard through the Parquet writer (spill file, encoder thread)', () => {
  it('writes every instance once, in row groups, with its typed columns', async () => {
    const path = join(tempDir('instance-shard-'), '000000.parquet');
    const table = { instances: { name: 'assets', view: VIEW, columns: SPECS } };
    const writer = await ParquetShardWriter.create(path, table, { compression: 'zstd', rowGroupRows: 1000 }, parquet);
    const all = Array.from({ length: 5000 }, (_, i) =>
      node(`a-${i}`, { name: `Asset ${i}`, serial: i * 1000, tags: i % 2 === 0 ? ['even'] : [], commissioned: '2020-01-01' }),
    );
    for (let i = 0; i < all.length; i += 1000) await writer.append(page(all.slice(i, i + 1000)));
    const committed = await writer.commit();
    expect(committed).toMatchObject({ format: 'parquet', rows: 5000 });
    const summary = await duck.one(
      `SELECT count(*)::INTEGER AS rows, count(DISTINCT externalId)::INTEGER AS ids, sum(serial)::VARCHAR AS serials,
         count(*) FILTER (WHERE len(tags) = 1)::INTEGER AS even, min(commissioned)::VARCHAR AS day,
         count(extra)::INTEGER AS extras
       FROM read_parquet('${path}')`,
    );
    expect(summary).toEqual({ rows: 5000, ids: 5000, serials: String(1000 * (4999 * 5000) / 2), even: 2500, day: '2020-01-01', extras: 0 });
    const groups = await duck.one(`SELECT count(DISTINCT row_group_id)::INTEGER AS n FROM parquet_metadata('${path}')`);
    expect(groups.n).toBe(5);
  });
});
