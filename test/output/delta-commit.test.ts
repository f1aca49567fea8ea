import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Field, Int64, Schema, TimestampMillisecond, Utf8 } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import {
  addAction,
  commitInfoAction,
  commitText,
  createLocalStore,
  deltaPath,
  ENGINE_INFO,
  metaDataAction,
  type OutputStore,
  protocolAction,
  readDeltaLog,
  removeAction,
  txnAction,
  type WriteAction,
  writeCommit,
} from '../../src/output/index.js';
import { deltaSchemaString } from '../../src/sink/delta/index.js';
import { tempDir } from '../support/resume-harness.js';

/**
 * The Delta commit writer: what each action builder writes (the lines as Spark writes them, its
 * golden tables as the reference for the members and their order), commits the branch's log
 * reader replays to the files, stats and txn written, put-if-absent versions, and data file paths
 * URI-encoded in the log and decoded back to the store's keys.
 */

const GOLDEN = fileURLToPath(new URL('../fixtures/delta-golden/', import.meta.url));
const T0 = Date.UTC(2026, 10, 29, 12, 0, 0);

const SCHEMA = new Schema([
  new Field('key', new Utf8(), false),
  new Field('id', new Int64(), true),
  new Field('lastUpdatedTime', new TimestampMillisecond('UTC'), true),
]);
const SCHEMA_STRING = deltaSchemaString(SCHEMA);

function statsOf(rows: number, from: number): string {
  return JSON.stringify({
    numRecords: rows,
    minValues: { key: `k${from}`, id: from },
    maxValues: { key: `k${from + rows - 1}`, id: from + rows - 1 },
    nullCount: { key: 0, id: 0, lastUpdatedTime: 0 },
  });
}

/** A table folder in a fresh temp folder, and a data file of `bytes` bytes at each key asked. */
function newTable(): { dir: string; store: OutputStore; file: (key: string, bytes: number) => number } {
  const dir = tempDir('delta-commit');
  const store = createLocalStore(dir, silentLogger);
  const file = (key: string, bytes: number) => {
    const path = join(dir, key);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, 'x'.repeat(bytes));
    return bytes;
  };
  return { dir, store, file };
}

function firstLine(action: WriteAction): string {
  return commitText(1, [action]).trimEnd();
}

/** The member names of each action in a golden table's commit, as Spark ordered them. */
function goldenMembers(table: string, version: string): Record<string, string[]> {
  const text = readFileSync(join(GOLDEN, table, '_delta_log', `${version}.json`), 'utf8');
  const members: Record<string, string[]> = {};
  for (const line of text.trimEnd().split('\n')) {
    const action = JSON.parse(line) as Record<string, Record<string, unknown>>;
    const [kind] = Object.keys(action) as [string];
    members[kind] = Object.keys(action[kind]!);
  }
  return members;
}

function membersOf(action: WriteAction): string[] {
  return Object.keys(Object.values(action)[0] as Record<string, unknown>);
}

describe('the action builders', () => {
  it('write each action as one exact line', () => {
    expect(firstLine(protocolAction())).toBe('{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}');
    expect(firstLine(metaDataAction({ schemaString: SCHEMA_STRING, createdTime: T0, id: 'a7d1f1b4-0000-4000-8000-000000000001' })))
      .toBe(
        '{"metaData":{"id":"a7d1f1b4-0000-4000-8000-000000000001","format":{"provider":"parquet","options":{}},' +
        String.raw`"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"key\",\"type\":\"string\",\"nullable\":false,\"metadata\":{}},` +
        String.raw`{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},` +
        String.raw`{\"name\":\"lastUpdatedTime\",\"type\":\"timestamp\",\"nullable\":true,\"metadata\":{}}]}",` +
        `"partitionColumns":[],"configuration":{},"createdTime":${T0}}}`,
      );
    expect(firstLine(addAction({ path: 'part=1-of-2/000000.parquet', size: 539, modificationTime: T0, stats: statsOf(2, 0) })))
      .toBe(
        `{"add":{"path":"part=1-of-2/000000.parquet","partitionValues":{},"size":539,"modificationTime":${T0},` +
        String.raw`"dataChange":true,"stats":"{\"numRecords\":2,\"minValues\":{\"key\":\"k0\",\"id\":0},` +
        String.raw`\"maxValues\":{\"key\":\"k1\",\"id\":1},\"nullCount\":{\"key\":0,\"id\":0,\"lastUpdatedTime\":0}}"}}`,
      );
    expect(firstLine(removeAction({ path: 'part=1-of-2/000000.parquet', size: 539, deletionTimestamp: T0 })))
      .toBe(
        `{"remove":{"path":"part=1-of-2/000000.parquet","deletionTimestamp":${T0},"dataChange":true,` +
        '"extendedFileMetadata":true,"partitionValues":{},"size":539}}',
      );
    expect(firstLine(txnAction('bulk-extract:events', 7, T0)))
      .toBe(`{"txn":{"appId":"bulk-extract:events","version":7,"lastUpdated":${T0}}}`);
    const info = commitInfoAction({
      timestamp: T0,
      operation: 'WRITE',
      operationParameters: { mode: 'Append', partitionBy: '[]' },
      own: { mode: 'incremental', window: { from: '2026-11-29T11:00:00Z', to: '2026-11-29T12:00:00Z' } },
    });
    expect(firstLine(info)).toBe(
      `{"commitInfo":{"timestamp":${T0},"operation":"WRITE","operationParameters":{"mode":"Append","partitionBy":"[]"},` +
      `"engineInfo":"${ENGINE_INFO}","bulkExtract":{"mode":"incremental",` +
      '"window":{"from":"2026-11-29T11:00:00Z","to":"2026-11-29T12:00:00Z"}}}}',
    );
    expect(ENGINE_INFO).toMatch(/^bulk-extract\/\d+\.\d+\.\d+/);
  });

  it('write the members Spark writes, in its order (golden table basic-with-inserts-deletes-checkpoint)', () => {
    const v0 = goldenMembers('basic-with-inserts-deletes-checkpoint', '00000000000000000000');
    const v5 = goldenMembers('basic-with-inserts-deletes-checkpoint', '00000000000000000005');
    expect(membersOf(protocolAction())).toEqual(v0.protocol);
    expect(membersOf(metaDataAction({ schemaString: SCHEMA_STRING, createdTime: T0 }))).toEqual(v0.metaData);
    expect(membersOf(addAction({ path: 'a.parquet', size: 1, modificationTime: T0, stats: statsOf(1, 0) }))).toEqual(v0.add);
    expect(membersOf(removeAction({ path: 'a.parquet', size: 1, deletionTimestamp: T0 }))).toEqual(v5.remove);
  });

  it('give every table a fresh UUID unless told its id', () => {
    const newId = () => {
      const action = metaDataAction({ schemaString: SCHEMA_STRING, createdTime: T0 });
      return 'metaData' in action ? action.metaData.id : '';
    };
    const [a, b] = [newId(), newId()];
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a).not.toBe(b);
  });

  it('encode paths as URIs relative to the table, each segment alone, = kept as Spark keeps it', () => {
    expect(deltaPath('part=1-of-2/000000.parquet')).toBe('part=1-of-2/000000.parquet');
    expect(deltaPath('a b/100%.parquet')).toBe('a%20b/100%25.parquet');
    expect(deltaPath('zoë/日本/x.parquet')).toBe('zo%C3%AB/%E6%97%A5%E6%9C%AC/x.parquet');
    expect(deltaPath('c:/d#e?f.parquet')).toBe('c%3A/d%23e%3Ff.parquet');
    for (const bad of ['', '/abs.parquet', 'a//b.parquet', 'a/../b.parquet', './b.parquet', 'a/']) {
      expect(() => deltaPath(bad), bad).toThrow(/not a path inside the table/);
    }
  });

  it('refuse a commit a valid version cannot be', () => {
    const add = (path: string) => addAction({ path, size: 1, modificationTime: T0 });
    const meta = metaDataAction({ schemaString: SCHEMA_STRING, createdTime: T0 });
    expect(() => commitText(0, [meta, add('a')])).toThrow(/version 0 needs a protocol and a metaData/);
    expect(() => commitText(0, [protocolAction(), add('a')])).toThrow(/version 0 needs a protocol and a metaData/);
    expect(() => commitText(3, [meta, meta])).toThrow(/has 2 metaData actions/);
    expect(() => commitText(3, [add('a'), add('b'), add('a')])).toThrow(/the add path a twice/);
    const remove = removeAction({ path: 'a', size: 1, deletionTimestamp: T0 });
    expect(() => commitText(3, [remove, remove])).toThrow(/the remove path a twice/);
    expect(() => commitText(3, [txnAction('x', 1, T0), txnAction('x', 2, T0)])).toThrow(/the txn appId x twice/);
    expect(() => commitText(-1, [add('a')])).toThrow(/version is -1/);
    expect(() => commitText(1.5, [add('a')])).toThrow(/version is 1.5/);
    expect(() => addAction({ path: 'a', size: -1, modificationTime: T0 })).toThrow(/size is -1/);
    // An add and a remove of one path in one version is legal (a rewrite of the file's metadata).
    expect(commitText(3, [add('a'), remove]).split('\n')).toHaveLength(3);
  });
});

describe('writeCommit and the log reader', () => {
  it('replays versions 0 (create), 1 (add and remove) and 2 (txn) to the files, stats and txn written', async () => {
    const { dir, store, file } = newTable();
    const table = 'events';
    const meta = metaDataAction({ schemaString: SCHEMA_STRING, createdTime: T0, id: 'f00d0000-0000-4000-8000-000000000000' });
    const v0: WriteAction[] = [
      addAction({ path: '000000.parquet', size: file(`${table}/000000.parquet`, 100), modificationTime: T0, stats: statsOf(2, 0) }),
      addAction({ path: '000001.parquet', size: file(`${table}/000001.parquet`, 110), modificationTime: T0, stats: statsOf(3, 2) }),
      meta,
      protocolAction(),
      commitInfoAction({ timestamp: T0, operation: 'CREATE TABLE', operationParameters: { mode: 'ErrorIfExists' } }),
    ];
    expect(await writeCommit(store, table, 0, v0)).toBe(true);
    const text0 = readFileSync(join(dir, table, '_delta_log', '00000000000000000000.json'), 'utf8');
    expect(text0.endsWith('}\n')).toBe(true);
    expect(text0.trimEnd().split('\n').map((line) => Object.keys(JSON.parse(line) as object)[0]))
      .toEqual(['commitInfo', 'protocol', 'metaData', 'add', 'add']);

    const T1 = T0 + 60_000;
    expect(await writeCommit(store, table, 1, [
      commitInfoAction({ timestamp: T1, operation: 'WRITE', operationParameters: { mode: 'Overwrite' } }),
      addAction({ path: '000002.parquet', size: file(`${table}/000002.parquet`, 120), modificationTime: T1, stats: statsOf(4, 5) }),
      removeAction({ path: '000000.parquet', size: 100, deletionTimestamp: T1 }),
    ])).toBe(true);

    const T2 = T1 + 60_000;
    expect(await writeCommit(store, table, 2, [
      commitInfoAction({ timestamp: T2, operation: 'WRITE', operationParameters: { mode: 'Append' }, own: { window: 'w3' } }),
      txnAction('bulk-extract:events', 3, T2),
    ])).toBe(true);

    const latest = await readDeltaLog(store, table);
    expect(latest.version).toBe(2);
    expect(latest.protocol).toEqual({ minReaderVersion: 1, minWriterVersion: 2 });
    expect(latest.metaData.id).toBe('f00d0000-0000-4000-8000-000000000000');
    expect(latest.metaData.schemaString).toBe('metaData' in meta ? meta.metaData.schemaString : '');
    expect(latest.files.map((each) => [each.key, each.size, each.version, each.stats?.numRecords])).toEqual([
      ['events/000001.parquet', 110, 0, 3],
      ['events/000002.parquet', 120, 1, 4],
    ]);
    expect(latest.files[1]!.stats).toEqual(JSON.parse(statsOf(4, 5)));
    for (const each of latest.files) expect(await store.size(each.key)).toBe(each.size);
    expect([...latest.txns.values()]).toEqual([{ appId: 'bulk-extract:events', version: 3, lastUpdated: T2 }]);
    expect(latest.commits.map((each) => [each.version, each.info.operation, each.info.engineInfo])).toEqual([
      [0, 'CREATE TABLE', ENGINE_INFO],
      [1, 'WRITE', ENGINE_INFO],
      [2, 'WRITE', ENGINE_INFO],
    ]);
    expect(latest.commits[2]!.info.bulkExtract).toEqual({ window: 'w3' });

    const first = await readDeltaLog(store, table, { asOf: 0 });
    expect(first.files.map((each) => each.key)).toEqual(['events/000000.parquet', 'events/000001.parquet']);
    expect(first.txns.size).toBe(0);
    const second = await readDeltaLog(store, table, { asOf: 1 });
    expect(second.files.map((each) => each.key)).toEqual(['events/000001.parquet', 'events/000002.parquet']);
  });

  it('commits a table at the store root too', async () => {
    const { store, file } = newTable();
    expect(await writeCommit(store, '', 0, [
      protocolAction(),
      metaDataAction({ schemaString: SCHEMA_STRING, createdTime: T0 }),
      addAction({ path: 'a.parquet', size: file('a.parquet', 5), modificationTime: T0 }),
    ])).toBe(true);
    expect((await readDeltaLog(store, '')).files.map((each) => [each.key, each.stats])).toEqual([['a.parquet', undefined]]);
  });

  it('answers false for a version another writer took, leaving its file as it was', async () => {
    const { dir, store } = newTable();
    const create = (id: string) => [
      protocolAction(),
      metaDataAction({ schemaString: SCHEMA_STRING, createdTime: T0, id }),
    ];
    expect(await writeCommit(store, 't', 0, create('11111111-0000-4000-8000-000000000000'))).toBe(true);
    const path = join(dir, 't', '_delta_log', '00000000000000000000.json');
    const before = readFileSync(path);
    expect(await writeCommit(store, 't', 0, create('22222222-0000-4000-8000-000000000000'))).toBe(false);
    expect(readFileSync(path)).toEqual(before);
    expect((await readDeltaLog(store, 't')).metaData.id).toBe('11111111-0000-4000-8000-000000000000');
    const racers = await Promise.all(
      ['a', 'b', 'c', 'd'].map((name) => writeCommit(store, 't', 1, [addAction({ path: name, size: 0, modificationTime: T0 })])),
    );
    expect(racers.filter(Boolean)).toHaveLength(1);
    expect((await readDeltaLog(store, 't')).files).toHaveLength(1);
  });

  it('round-trips paths with spaces, percent signs, colons, hashes and non-ASCII: encoded in the log, decoded to keys', async () => {
    const { dir, store, file } = newTable();
    const names = ['run 1/a b.parquet', 'x%41y/100%.parquet', 'zoë/日本語 😀.parquet', 'c:d/#1?.parquet', 'part=2-of-3/p+q.parquet'];
    const adds = names.map((name) => addAction({ path: name, size: file(`tbl/${name}`, name.length), modificationTime: T0 }));
    expect(await writeCommit(store, 'tbl', 0, [protocolAction(), metaDataAction({ schemaString: SCHEMA_STRING, createdTime: T0 }), ...adds]))
      .toBe(true);
    const logged = readFileSync(join(dir, 'tbl', '_delta_log', '00000000000000000000.json'), 'utf8')
      .trimEnd().split('\n').map((line) => JSON.parse(line) as { add?: { path: string } })
      .flatMap((action) => (action.add === undefined ? [] : [action.add.path]));
    expect(logged).toEqual([
      'run%201/a%20b.parquet',
      'x%2541y/100%25.parquet',
      'zo%C3%AB/%E6%97%A5%E6%9C%AC%E8%AA%9E%20%F0%9F%98%80.parquet',
      'c%3Ad/%231%3F.parquet',
      'part=2-of-3/p%2Bq.parquet',
    ]);
    const snapshot = await readDeltaLog(store, 'tbl');
    expect(snapshot.files.map((each) => each.key).sort()).toEqual(names.map((name) => `tbl/${name}`).sort());
    for (const each of snapshot.files) expect(await store.size(each.key)).toBe(each.size);

    await writeCommit(store, 'tbl', 1, [removeAction({ path: 'x%41y/100%.parquet', size: 10, deletionTimestamp: T0 })]);
    expect((await readDeltaLog(store, 'tbl')).files.map((each) => each.key)).not.toContain('tbl/x%41y/100%.parquet');
    expect((await readDeltaLog(store, 'tbl')).files).toHaveLength(4);
  });
});
