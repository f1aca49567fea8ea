import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type RecordBatch, Table, tableToIPC } from 'apache-arrow';
import fc from 'fast-check';
import * as wasm from 'parquet-wasm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Duck, openDuck } from '../support/export-duckdb.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';
import { instance, type Style, style, write } from '../support/instance-arbitraries.js';
import { bothWays, EVERY_KIND_REF, everyKindColumns, scannedPage } from '../support/instance-walk.js';

/**
 * The oracle of InstanceWalk: generated pages of instances of a view with a column of every kind
 * (instance-arbitraries.ts), built with the walk on and forced off, give the same Arrow batch
 * (every value, every buffer) or the same error; a sample of them, written to Parquet, reads back
 * the same in DuckDB.
 */
const SPECS = { node: everyKindColumns('node'), edge: everyKindColumns('edge') };

/** A page: its instance type, its instances (each plain or not), how they are written. */
const page = fc.boolean().chain((edge) =>
  fc.record({
    edge: fc.constant(edge),
    instances: fc.array(
      fc.oneof({ arbitrary: instance(false, edge), weight: 3 }, { arbitrary: instance(true, edge), weight: 1 }),
      { minLength: 1, maxLength: 4 },
    ),
    styles: fc.array(style, { minLength: 4, maxLength: 4 }),
  }));

function texts({ instances, styles }: { instances: readonly Parameters<typeof write>[0][]; styles: readonly Style[] }) {
  return instances.map((raw, i) => write(raw, styles[i]!));
}

let duck: Duck;
beforeAll(async () => {
  duck = await openDuck();
});
afterAll(() => duck.close());
afterEach(removeTempDirs);

describe('InstanceWalk against the parse (fast-check, seeded)', () => {
  it('gives the same batch or error as the parse, for plain and odd instances alike', () => {
    const seen = { instances: 0, walked: 0, errors: 0 };
    fc.assert(
      fc.property(page, (generated) => {
        const specs = generated.edge ? SPECS.edge : SPECS.node;
        const { walked, parsed, taken } = bothWays(EVERY_KIND_REF, specs, scannedPage(texts(generated)));
        expect(walked).toEqual(parsed);
        seen.instances += generated.instances.length;
        seen.walked += taken;
        if (parsed.error !== undefined) seen.errors++;
      }),
      { seed: 2029, numRuns: 300 },
    );
    // Not vacuous: the walk took many of them, and left many others to the parse.
    expect(seen.walked / seen.instances).toBeGreaterThan(0.3);
    expect(seen.walked / seen.instances).toBeLessThan(0.9);
    expect(seen.errors).toBeGreaterThan(0);
  }, 120_000);

  it('gives the same row or error as the parse for an instance with one oddity, whatever it is', () => {
    let walked = 0;
    const odd = fc.boolean().chain((edge) => fc.tuple(fc.constant(edge), instance(true, edge), style));
    fc.assert(
      fc.property(odd, ([edge, raw, how]) => {
        const text = write(raw, { ...how, keyEscapes: 0 });
        const { walked: walkedWay, parsed, taken } = bothWays(EVERY_KIND_REF, SPECS[edge ? 'edge' : 'node'], scannedPage([text]));
        expect(walkedWay).toEqual(parsed);
        walked += taken;
      }),
      { seed: 2032, numRuns: 1500 },
    );
    // Some oddities are still the plain case (a value at the edge of its range, a field set to another valid value).
    expect(walked).toBeGreaterThan(100);
  }, 120_000);

  it('a sample written to Parquet reads back the same in DuckDB either way', async () => {
    const sample = fc.sample(page, { seed: 2030, numRuns: 25 });
    let rows = 0;
    for (const [n, generated] of sample.entries()) {
      const specs = generated.edge ? SPECS.edge : SPECS.node;
      const { batches, parsed } = bothWays(EVERY_KIND_REF, specs, scannedPage(texts(generated)));
      if (parsed.error !== undefined) continue;
      const [walkedRows, parsedRows] = await Promise.all(batches.map((batch, way) => readBack(batch!, `${n}-${way}`)));
      expect(walkedRows).toEqual(parsedRows);
      rows += parsedRows!.length;
    }
    expect(rows).toBeGreaterThan(25);
  });
});

const dir = () => tempDir('instance-walk-');

/** The batch as a Parquet file, read back by DuckDB: every column, lists and structs as JSON text. */
async function readBack(batch: RecordBatch, name: string): Promise<unknown[]> {
  const path = join(dir(), `${name}.parquet`);
  const table = wasm.Table.fromIPCStream(tableToIPC(new Table([batch]), 'stream'));
  writeFileSync(path, wasm.writeParquet(table));
  const columns = batch.schema.fields.map((field) => `to_json("${field.name}")::VARCHAR AS "${field.name}"`);
  return duck.rows(`SELECT ${columns.join(', ')} FROM read_parquet('${path}')`);
}
