import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type RecordBatch, Table, tableToIPC } from 'apache-arrow';
import * as wasm from 'parquet-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PageItems, scanPage, scanSyncPage } from '../../src/page/index.js';
import { instanceColumns, type InstanceColumn, type InstanceType, type ViewDefinition } from '../../src/resources/index.js';
import { type InstanceKind, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { type Duck, openDuck } from '../support/export-duckdb.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';
import { post, viewRef } from '../support/instances.js';
import { bothWays } from '../support/instance-walk.js';

/**
 * The simulator's own instances, as its list and sync routes send them (every node kind, edges,
 * deleted instances), built with the walk on and forced off: the same batches, the same Parquet
 * read back by DuckDB, and every one of them taken by the walk, none left to the parse.
 */
const AUTH = { 'api-key': 'walk-test-key-0001' };
const VIEWS: { name: string; view: ReturnType<typeof viewRef>; type: InstanceType; kind: InstanceKind }[] = [
  { name: 'assets', view: viewRef('CogniteAsset'), type: 'node', kind: 'asset' },
  { name: 'activities', view: viewRef('CogniteActivity'), type: 'node', kind: 'activity' },
  { name: 'time series', view: viewRef('CogniteTimeSeries'), type: 'node', kind: 'timeseries' },
  { name: 'edges', view: viewRef('ActivityLink', 'sim_model'), type: 'edge', kind: 'edge' },
];

let sim: Simulator;
let duck: Duck;

beforeAll(async () => {
  const instances = { assets: 400, activities: 300, timeseries: 200, edges: 200 };
  sim = await startSimulator({ seed: 29, apiKeys: [AUTH['api-key']], instances });
  duck = await openDuck();
});

afterAll(async () => {
  duck.close();
  await sim.close();
  removeTempDirs();
});

async function answer(path: string, body: Record<string, unknown>): Promise<Buffer> {
  const reply = await post(sim, path, body, AUTH);
  expect(reply.status, reply.text).toBe(200);
  return Buffer.from(reply.text);
}

/** The view's columns, from its definition as the export reads it. */
async function columnsOf(view: ReturnType<typeof viewRef>, type: InstanceType): Promise<InstanceColumn[]> {
  const { type: _view, ...id } = view;
  const body = await answer('/models/views/byids', { items: [id], includeInheritedProperties: true });
  const [definition] = (JSON.parse(body.toString()) as { items: ViewDefinition[] }).items;
  return [...instanceColumns(definition!, type).columns];
}

/** Every page of the view's list chain, scanned as the export scans them. */
async function listPages(view: ReturnType<typeof viewRef>, type: InstanceType): Promise<PageItems[]> {
  const pages: PageItems[] = [];
  let cursor: string | undefined;
  do {
    const body = await answer('/models/instances/list', {
      instanceType: type,
      sources: [{ source: view }],
      limit: 150,
      ...(cursor === undefined ? {} : { cursor }),
    });
    const scan = scanPage(body);
    expect(scan).toBeDefined();
    pages.push(PageItems.scanned(body, scan!));
    cursor = scan!.nextCursor;
  } while (cursor !== undefined);
  return pages;
}

/** The view's sync feed from the start, soft-deleted instances shown, scanned as the export scans it. */
async function syncPages(view: ReturnType<typeof viewRef>, type: InstanceType): Promise<PageItems[]> {
  const filter = { hasData: [view] };
  const pages: PageItems[] = [];
  let cursors: Record<string, string> | undefined;
  for (;;) {
    const body = await answer('/models/instances/sync', {
      with: { set: { [type === 'edge' ? 'edges' : 'nodes']: { filter }, limit: 150, skipAlreadyDeleted: false } },
      select: { set: { sources: [{ source: view, properties: ['*'] }] } },
      ...(cursors === undefined ? {} : { cursors }),
    });
    const scan = scanSyncPage(body, 'set');
    expect(scan).toBeDefined();
    pages.push(PageItems.scanned(body, scan!));
    cursors = { set: scan!.nextCursor! };
    // Caught up: a page shorter than its limit.
    if (scan!.bounds.length / 2 < 150) return pages;
  }
}

describe('InstanceWalk on the simulator\'s instances', () => {
  beforeAll(() => {
    // Soft-deleted instances of each kind: the sync feed shows them with their deletedTime.
    for (const { kind } of VIEWS) {
      const refs = Array.from({ length: 10 }, (_, i) => sim.instances.instance(kind, i * 7));
      sim.deleteInstances(refs.map(({ instanceType, space, externalId }) => ({ instanceType, space, externalId })));
    }
  });

  it.each(VIEWS)('$name: every instance walked, rows equal to the parse, Parquet read back the same', async ({ view, type, kind }) => {
    const specs = await columnsOf(view, type);
    const pages = [...(await listPages(view, type)), ...(await syncPages(view, type))];
    let rows = 0;
    let taken = 0;
    let deleted = 0;
    for (const [n, page] of pages.entries()) {
      const both = bothWays(view, specs, page);
      expect(both.walked).toEqual(both.parsed);
      expect(both.parsed.error).toBeUndefined();
      rows += page.length;
      taken += both.taken;
      const [walkedBatch, parsedBatch] = both.batches as [RecordBatch, RecordBatch];
      deleted += page.length - parsedBatch.getChild('deletedTime')!.nullCount;
      if (n % 3 === 0) expect(await readBack(walkedBatch, `${kind}-${n}-w`)).toEqual(await readBack(parsedBatch, `${kind}-${n}-p`));
    }
    const live = sim.instances.count(kind) - 10;
    expect({ rows, taken }).toEqual({ rows: 2 * live + 10, taken: rows });
    expect(deleted).toBe(10);
  });
});

/** A batch as a Parquet file, read back by DuckDB, every column as JSON text. */
async function readBack(batch: RecordBatch, name: string): Promise<unknown[]> {
  const path = join(tempDir('instance-walk-sim-'), `${name}.parquet`);
  writeFileSync(path, wasm.writeParquet(wasm.Table.fromIPCStream(tableToIPC(new Table([batch]), 'stream'))));
  const columns = batch.schema.fields.map((field) => `to_json("${field.name}")::VARCHAR AS "${field.name}"`);
  return duck.rows(`SELECT ${columns.join(', ')} FROM read_parquet('${path}')`);
}
