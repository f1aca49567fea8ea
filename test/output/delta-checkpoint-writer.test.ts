import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Field, Int64, Schema, Utf8 } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import {
  addAction,
  commitInfoAction,
  createLocalStore,
  type DeltaSnapshot,
  metaDataAction,
  type OutputStore,
  protocolAction,
  readDeltaLog,
  removeAction,
  txnAction,
  writeCheckpoint,
  writeCommit,
} from '../../src/output/index.js';
import { type Duck, openDuck } from '../support/export-duckdb.js';
import { deltaSchemaString } from '../../src/sink/delta/index.js';
import { tempDir } from '../support/resume-harness.js';

/**
 * The checkpoint writer: a checkpoint of a table our commits wrote reads back (with the branch's
 * reader) to the state the JSON commits replay to, and DuckDB sees it with the top-level columns
 * of a checkpoint Spark wrote (the golden table basic-with-inserts-deletes-checkpoint).
 */

const GOLDEN = fileURLToPath(new URL('../fixtures/delta-golden/', import.meta.url));
const SPARK_CHECKPOINT = join(GOLDEN, 'basic-with-inserts-deletes-checkpoint', '_delta_log', '00000000000000000010.checkpoint.parquet');
const T0 = Date.UTC(2026, 10, 29, 12, 0, 0);
const SCHEMA = new Schema([new Field('key', new Utf8(), false), new Field('id', new Int64(), true)]);
const SCHEMA_STRING = deltaSchemaString(SCHEMA);

let duck: Duck;
beforeAll(async () => {
  duck = await openDuck();
});
afterAll(() => duck.close());

/** A table of 12 versions: a create, appends with a txn each, an overwrite at 7; paths with spaces and %. */
async function twelveVersions(): Promise<{ dir: string; store: OutputStore }> {
  const dir = tempDir('delta-checkpoint');
  const store = createLocalStore(dir, silentLogger);
  const file = (name: string) => {
    const path = join(dir, 't', name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, name);
    return name.length;
  };
  const add = (name: string, rows: number, at: number) => addAction({
    path: name,
    size: file(name),
    modificationTime: at,
    stats: JSON.stringify({ numRecords: rows, minValues: { key: 'a', id: 1 }, maxValues: { key: 'z', id: rows }, nullCount: { key: 0, id: 0 } }),
  });
  await writeCommit(store, 't', 0, [
    commitInfoAction({ timestamp: T0, operation: 'CREATE TABLE' }),
    protocolAction(),
    metaDataAction({ schemaString: SCHEMA_STRING, createdTime: T0, id: '0c0c0c0c-0000-4000-8000-000000000000' }),
    add('run 0/a b.parquet', 3, T0),
  ]);
  for (let version = 1; version < 12; version++) {
    const at = T0 + version * 1000;
    const actions = [
      commitInfoAction({ timestamp: at, operation: 'WRITE', operationParameters: { mode: 'Append' } }),
      txnAction('bulk-extract:t', version, at),
      add(`run ${version}/100% ${version}.parquet`, version, at),
    ];
    if (version === 7) {
      const before = await readDeltaLog(store, 't');
      for (const each of before.files) {
        actions.push(removeAction({ path: decodeURIComponent(each.path), size: each.size, deletionTimestamp: at }));
      }
    }
    expect(await writeCommit(store, 't', version, actions)).toBe(true);
  }
  return { dir, store };
}

/**
 * What a snapshot holds but the commits replayed and the version that added each file, which a
 * checkpoint does not keep (the reader gives a checkpoint's files the checkpoint's version).
 */
function stateOf(snapshot: DeltaSnapshot) {
  const { commits: _commits, checkpoint: _checkpoint, ...rest } = snapshot;
  return { ...rest, files: rest.files.map(({ version: _version, ...file }) => file), txns: [...rest.txns.values()] };
}

describe('writeCheckpoint', () => {
  it('reads back to the state the JSON commits replay to, and later commits apply on top', async () => {
    const { dir, store } = await twelveVersions();
    const at10 = await readDeltaLog(store, 't', { asOf: 10 });
    const last = await writeCheckpoint(store, 't', 10, at10);
    expect(last).toEqual({ version: 10, size: 2 + 1 + 4, sizeInBytes: expect.any(Number), numOfAddFiles: 4 });
    const lastText = await store.getText('t/_delta_log/_last_checkpoint');
    expect(JSON.parse(lastText ?? '')).toEqual(last);
    expect(await store.size('t/_delta_log/00000000000000000010.checkpoint.parquet')).toBe(last.sizeInBytes);

    // Without the JSON commits up to 10, only the checkpoint can give version 10.
    const onlyCheckpoint = createLocalStore(dir, silentLogger);
    for (let version = 0; version <= 10; version++) {
      await onlyCheckpoint.remove([`t/_delta_log/${String(version).padStart(20, '0')}.json`]);
    }
    const fromCheckpoint = await readDeltaLog(onlyCheckpoint, 't', { asOf: 10 });
    expect(fromCheckpoint.checkpoint).toBe(10);
    expect(stateOf(fromCheckpoint)).toEqual(stateOf(at10));
    expect(fromCheckpoint.files.map((each) => each.key)).toEqual([
      't/run 10/100% 10.parquet', 't/run 7/100% 7.parquet', 't/run 8/100% 8.parquet', 't/run 9/100% 9.parquet',
    ]);

    const latest = await readDeltaLog(onlyCheckpoint, 't');
    expect(latest.version).toBe(11);
    expect(latest.commits.map((each) => each.version)).toEqual([11]);
    expect(latest.files).toHaveLength(5);
    expect([...latest.txns.values()]).toEqual([{ appId: 'bulk-extract:t', version: 11, lastUpdated: T0 + 11_000 }]);
  });

  it('writes each stats string as the log held it: a long beyond 2^53 stays exact', async () => {
    const dir = tempDir('delta-checkpoint');
    const store = createLocalStore(dir, silentLogger);
    mkdirSync(join(dir, 'big'), { recursive: true });
    writeFileSync(join(dir, 'big', 'a.parquet'), 'a');
    const stats = '{"numRecords":2,"minValues":{"id":9007199254740993},"maxValues":{"id":9223372036854775807},"nullCount":{"id":0}}';
    await writeCommit(store, 'big', 0, [
      protocolAction(),
      metaDataAction({ schemaString: SCHEMA_STRING, createdTime: T0 }),
      addAction({ path: 'a.parquet', size: 1, modificationTime: T0, stats }),
    ]);
    await writeCheckpoint(store, 'big', 0, await readDeltaLog(store, 'big'));
    await store.remove(['big/_delta_log/00000000000000000000.json']);
    const fromCheckpoint = await readDeltaLog(store, 'big');
    expect(fromCheckpoint.checkpoint).toBe(0);
    expect(fromCheckpoint.files[0]?.statsText).toBe(stats);
  });

  it('has the top-level columns of a Spark checkpoint but domainMetadata, as DuckDB sees them', async () => {
    const { dir, store } = await twelveVersions();
    await writeCheckpoint(store, 't', 10, await readDeltaLog(store, 't', { asOf: 10 }));
    const columns = async (path: string) =>
      (await duck.rows(`DESCRIBE SELECT * FROM read_parquet('${path.replaceAll("'", "''")}')`)).map((row) => row.column_name);
    const ours = await columns(join(dir, 't', '_delta_log', '00000000000000000010.checkpoint.parquet'));
    const spark = await columns(SPARK_CHECKPOINT);
    expect(ours).toEqual(['txn', 'add', 'remove', 'metaData', 'protocol']);
    expect(spark.filter((name) => name !== 'domainMetadata')).toEqual(ours);
    const row = await duck.one(
      'SELECT count(add) AS adds, count(txn) AS txns, count(metaData) AS metas, count(protocol) AS protocols, ' +
      'count(remove) AS removes, ' +
      `max(protocol.minWriterVersion) AS writer FROM read_parquet('${join(dir, 't', '_delta_log', '00000000000000000010.checkpoint.parquet')}')`,
    );
    expect(Object.fromEntries(Object.entries(row).map(([name, value]) => [name, Number(value)])))
      .toEqual({ adds: 4, txns: 1, metas: 1, protocols: 1, removes: 0, writer: 2 });
  });
});
