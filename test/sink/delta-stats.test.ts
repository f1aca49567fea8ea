import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Bool,
  DateDay,
  Field,
  Float64,
  Int64,
  List,
  type RecordBatch,
  type Schema,
  Struct,
  Table,
  tableFromIPC,
  TimestampMillisecond,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import * as wasm from 'parquet-wasm';
import { describe, expect, it } from 'vitest';
import { toDeltaBatch } from '../../src/sink/delta/schema.js';
import { deltaStats, deltaStatsJson, maxPrefix, minPrefix } from '../../src/sink/delta/stats.js';
import { RowGroupBuilder } from '../../src/sink/collections/row-group.js';

/**
 * The per-file stats of an `add`, pinned as the exact JSON: numbers, strings (UTF-8 order, 32
 * characters, a max that stays an upper bound), timestamps as Spark writes them, booleans and
 * lists with a null count only, structs field by field, all-null columns without min or max; and
 * equal to what Spark wrote for the golden tables' data files.
 */

const NODE_REF = new Struct([new Field('space', new Utf8(), false), new Field('externalId', new Utf8(), false)]);

function batchOf(columns: Record<string, { type: ConstructorParameters<typeof Field>[1]; values: unknown[] }>) {
  const fields = Object.entries(columns).map(([name, { type }]) => new Field(name, type, true));
  const vectors = Object.fromEntries(
    Object.entries(columns).map(([name, { type, values }]) => [name, vectorFromArray(values, type)]),
  );
  const table = new Table(vectors);
  expect(table.schema.fields.map(String)).toEqual(fields.map(String));
  return { schema: table.schema, batches: table.batches };
}

const LONG = 'the quick brown fox jumps over the lazy dog';
const DAY = 86_400_000;

describe('deltaStats', () => {
  it('gives numbers, strings, times and dates their min and max, booleans and all-null columns a null count only', () => {
    const { schema, batches } = batchOf({
      id: { type: new Int64(), values: [3n, 2n ** 53n + 1n, -7n, 0n] },
      name: { type: new Utf8(), values: ['b', null, LONG, 'a'] },
      score: { type: new Float64(), values: [0.5, null, -1.25, 1e21] },
      ok: { type: new Bool(), values: [true, false, null, true] },
      time: { type: new TimestampMillisecond('UTC'), values: [1_700_000_000_123, null, -1, 0] },
      none: { type: new Utf8(), values: [null, null, null, null] },
      noTime: { type: new TimestampMillisecond('UTC'), values: [null, null, null, null] },
      day: { type: new DateDay(), values: [new Date(19_000 * DAY), null, new Date(-DAY), null] },
    });
    const stats = deltaStats(schema, batches);
    expect(deltaStatsJson(stats)).toBe(
      '{"numRecords":4,' +
      '"minValues":{"id":-7,"name":"a","score":-1.25,"time":"1969-12-31T23:59:59.999Z","day":"1969-12-31"},' +
      '"maxValues":{"id":9007199254740993,"name":"the quick brown fox jumps over t\u007f","score":1e+21,' +
      '"time":"2023-11-14T22:13:20.123Z","day":"2022-01-08"},' +
      '"nullCount":{"id":0,"name":1,"score":1,"ok":1,"time":1,"none":4,"noTime":4,"day":2}}',
    );
    // The tie-breaker U+007F after the 32 characters kept: JSON.stringify writes it as it is.
    expect(stats.maxValues.name).toBe('the quick brown fox jumps over t\u007f');
  });

  it('gives a struct\'s fields their own stats (null where the struct is), lists and maps a null count only', () => {
    const builder = new RowGroupBuilder('events', 4);
    builder.add([
      { id: 2, type: 'alarm', startTime: 5, assetIds: [1, 2], metadata: { a: 'b' }, createdTime: 10, lastUpdatedTime: 11 },
      { id: 1, startTime: -5, createdTime: 10, lastUpdatedTime: 12, flavour: 'extra' },
    ]);
    const batch = builder.batch();
    const stats = deltaStats(batch.schema, [batch]);
    expect(stats.nullCount).toMatchObject({ id: 0, type: 1, assetIds: 1, metadata: 1, endTime: 2, extra: 1 });
    expect(stats.minValues).toEqual({
      id: 1, type: 'alarm', startTime: '1969-12-31T23:59:59.995Z', createdTime: '1970-01-01T00:00:00.010Z',
      lastUpdatedTime: '1970-01-01T00:00:00.011Z', extra: '{"flavour":"extra"}',
    });
    // The Delta batch (microseconds) has the same stats: times are written in whole milliseconds.
    const delta = toDeltaBatch(batch);
    expect(deltaStatsJson(deltaStats(delta.schema, [delta]))).toBe(deltaStatsJson(stats));

    const refs = batchOf({
      ref: { type: NODE_REF, values: [{ space: 's', externalId: 'x' }, null, { space: 'r', externalId: 'y' }] },
      refs: { type: new List(new Field('item', NODE_REF, true)), values: [[{ space: 's', externalId: 'x' }], null, []] },
    });
    expect(deltaStatsJson(deltaStats(refs.schema, refs.batches))).toBe(
      '{"numRecords":3,"minValues":{"ref":{"space":"r","externalId":"x"}},' +
      '"maxValues":{"ref":{"space":"s","externalId":"y"}},"nullCount":{"ref":{"space":1,"externalId":1},"refs":1}}',
    );
  });

  it('adds up batches, writes an empty file as Spark does, and leaves out floats that are not finite', () => {
    const one = batchOf({ n: { type: new Int64(), values: [5n, null] }, x: { type: new Float64(), values: [1, NaN] } });
    const two = batchOf({ n: { type: new Int64(), values: [-9n] }, x: { type: new Float64(), values: [2] } });
    expect(deltaStatsJson(deltaStats(one.schema, [...one.batches, ...two.batches])))
      .toBe('{"numRecords":3,"minValues":{"n":-9},"maxValues":{"n":5},"nullCount":{"n":1,"x":0}}');
    expect(deltaStatsJson(deltaStats(one.schema, [])))
      .toBe('{"numRecords":0,"minValues":{},"maxValues":{},"nullCount":{"n":0,"x":0}}');
  });

  it('refuses a batch of another schema', () => {
    const one = batchOf({ n: { type: new Int64(), values: [5n] } });
    const other = batchOf({ n: { type: new Utf8(), values: ['5'] } });
    expect(() => deltaStats(one.schema, other.batches)).toThrow("a batch's column 0 is not n Int64");
  });
});

describe('strings', () => {
  it('are compared as UTF-8 bytes, as Parquet and Spark do, not as UTF-16 units', () => {
    // U+FFFD sorts after U+1F600's high surrogate in UTF-16, before it in UTF-8.
    const { schema, batches } = batchOf({ s: { type: new Utf8(), values: ['\uFFFD', '😀', 'z'] } });
    const stats = deltaStats(schema, batches);
    expect([stats.minValues.s, stats.maxValues.s]).toEqual(['z', '😀']);
  });

  it('keep 32 characters of a min; a longer max gets a tie-breaker that keeps it an upper bound', () => {
    const a32 = 'a'.repeat(32);
    expect(minPrefix(`${a32}bcd`)).toBe(a32);
    expect(minPrefix(`${'😀'.repeat(40)}`)).toBe('😀'.repeat(32));
    expect(maxPrefix(a32)).toBe(a32);
    expect(maxPrefix(`${a32}b`)).toBe(`${a32}\u007f`);
    expect(maxPrefix(`${a32}é`)).toBe(`${a32}\u{10FFFF}`);
    expect(maxPrefix(`${a32}\u{10FFFF}\u{10FFFF}b`)).toBe(`${a32}\u{10FFFF}\u{10FFFF}\u007f`);
    expect(maxPrefix(`${a32}\u{10FFFF}x`.slice(0, 34))).toBe(`${a32}\u{10FFFF}`);
    expect(maxPrefix(`${a32}${'\u{10FFFF}'.repeat(33)}b`)).toBeUndefined();
    for (const text of [`${a32}b`, `${a32}é`, `${a32}\u{10FFFF}\u{10FFFF}b`]) {
      expect(Buffer.compare(Buffer.from(maxPrefix(text)!), Buffer.from(text))).toBe(1);
    }
  });
});

const GOLDEN = fileURLToPath(new URL('../fixtures/delta-golden/', import.meta.url));

/** Every add with stats of a golden table's JSON commits: its file and the stats Spark wrote. */
function goldenAdds(table: string): { path: string; stats: string }[] {
  const log = join(GOLDEN, table, '_delta_log');
  return readdirSync(log).filter((name) => name.endsWith('.json')).flatMap((name) =>
    readFileSync(join(log, name), 'utf8').split('\n').filter((line) => line.startsWith('{"add"'))
      .map((line) => (JSON.parse(line) as { add: { path: string; stats?: string } }).add)
      .filter((add): add is { path: string; stats: string } => add.stats !== undefined));
}

function parquetBatches(path: string): { schema: Schema; batches: RecordBatch[] } {
  const table = tableFromIPC(wasm.readParquet(readFileSync(path)).intoIPCStream());
  return { schema: table.schema, batches: table.batches };
}

describe('the golden tables\' data files', () => {
  it('have the stats Spark wrote for them', () => {
    let files = 0;
    for (const table of ['basic-with-inserts-deletes-checkpoint', 'basic-with-vacuum-protocol-check-feature']) {
      for (const add of goldenAdds(table)) {
        const { schema, batches } = parquetBatches(join(GOLDEN, table, decodeURIComponent(add.path)));
        expect(JSON.parse(deltaStatsJson(deltaStats(schema, batches)))).toEqual(JSON.parse(add.stats));
        files++;
      }
    }
    expect(files).toBeGreaterThan(10);
  });
});
