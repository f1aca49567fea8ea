import { cpSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DeltaLogError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { createLocalStore, type OutputStore, readDeltaLog, type ReadDeltaLogOptions } from '../../src/output/index.js';
import { tempDir } from '../support/resume-harness.js';

/**
 * What the Delta log reader refuses, each on a copy of a golden table Spark wrote (see
 * test/fixtures/delta-golden/README.md) damaged in one way: the message names the log file and
 * what is wrong with it.
 */

const GOLDEN = fileURLToPath(new URL('../fixtures/delta-golden/', import.meta.url));

/** A copy of the golden table `name` in a temporary folder, and the path of its log folder. */
function copyOf(name: string): { dir: string; log: string } {
  const dir = tempDir('delta-log');
  cpSync(join(GOLDEN, name), join(dir, name), { recursive: true });
  return { dir, log: join(dir, name, '_delta_log') };
}

/** The folder store of `dir`, remembering the keys whose text it handed out. */
function storeOf(dir: string): { store: OutputStore; read: string[] } {
  const store = createLocalStore(dir, silentLogger);
  const read: string[] = [];
  return {
    store: {
      ...store,
      getText: (key) => {
        read.push(key);
        return store.getText(key);
      },
    },
    read,
  };
}

/** The DeltaLogError reading `table` in `dir` ends with; fails the test when it is not one. */
async function refusal(dir: string, table: string, options?: ReadDeltaLogOptions): Promise<string> {
  const error = await readDeltaLog(storeOf(dir).store, table, options).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(DeltaLogError);
  return (error as DeltaLogError).message;
}

/** Rewrites line `index` (0-based) of a commit. */
function rewriteLine(file: string, index: number, change: (line: string) => string): void {
  const lines = readFileSync(file, 'utf8').split('\n');
  lines[index] = change(lines[index] ?? '');
  writeFileSync(file, lines.join('\n'));
}

const CHECKPOINTED = 'basic-with-inserts-deletes-checkpoint';
const PLAIN = 'snapshot-data2-deleted';

describe('the Delta log reader refuses', () => {
  it('a version missing after the checkpoint, naming its file and the versions around it', async () => {
    const { dir, log } = copyOf(CHECKPOINTED);
    rmSync(join(log, '00000000000000000012.json'));
    expect(await refusal(dir, CHECKPOINTED)).toBe(
      `${join(log, '00000000000000000012.json')}: missing: version 12 of the log is absent ` +
      '(version 11 is the last before it, 13 the first after it)',
    );
  });

  it('version 0 missing when no checkpoint precedes the first commit left', async () => {
    const { dir, log } = copyOf(PLAIN);
    rmSync(join(log, '00000000000000000000.json'));
    expect(await refusal(dir, PLAIN)).toBe(
      `${join(log, '00000000000000000000.json')}: missing: version 0 of the log is absent (no version before it, 1 the first after it)`,
    );
  });

  it('a JSON line cut short (a torn write), naming the file and the line', async () => {
    const { dir, log } = copyOf(CHECKPOINTED);
    const file = join(log, '00000000000000000013.json');
    truncateSync(file, readFileSync(file).length - 100);
    expect(await refusal(dir, CHECKPOINTED)).toMatch(new RegExp(`^${file} line 4: not a JSON action \\(.+\\)$`));
  });

  it('an add without its size, naming the field', async () => {
    const { dir, log } = copyOf(PLAIN);
    rewriteLine(join(log, '00000000000000000003.json'), 1, (line) => line.replace(/"size":\d+,/, ''));
    expect(await refusal(dir, PLAIN)).toBe(`${join(log, '00000000000000000003.json')} line 2: add.size is missing`);
  });

  it('a file path that leaves the table', async () => {
    const { dir, log } = copyOf(PLAIN);
    rewriteLine(join(log, '00000000000000000003.json'), 1, (line) => line.replace('"path":"', '"path":"../'));
    expect(await refusal(dir, PLAIN)).toMatch(/03\.json line 2: path \.\.\/part-\S+ leaves the table/);
  });

  it('a reader version above 3, naming it and the line that asks for it', async () => {
    const { dir, log } = copyOf(PLAIN);
    const protocol = '{"protocol":{"minReaderVersion":4,"minWriterVersion":7}}';
    rewriteLine(join(log, '00000000000000000000.json'), 1, () => protocol);
    expect(await refusal(dir, PLAIN)).toBe(
      `${join(log, '00000000000000000000.json')} line 2: ` +
      'the table needs a reader of version 4 (minReaderVersion); this reader supports up to 3',
    );
  });

  it('a reader feature that changes the replay (deletion vectors), and column mapping as reader version 2', async () => {
    const { dir, log } = copyOf(PLAIN);
    const file = join(log, '00000000000000000000.json');
    const protocol = '{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"]}}';
    rewriteLine(file, 1, () => protocol);
    expect(await refusal(dir, PLAIN)).toBe(
      `${file} line 2: the table needs the reader feature deletionVectors, which this reader does not support ` +
      '(it supports timestampNtz, vacuumProtocolCheck)',
    );
    rewriteLine(file, 1, () => '{"protocol":{"minReaderVersion":2,"minWriterVersion":5}}');
    expect(await refusal(dir, PLAIN)).toMatch(/line 2: the table needs the reader feature columnMapping, /);
  });

  it('a commit larger than the limit, unread: its size is asked first', async () => {
    const { dir, log } = copyOf(CHECKPOINTED);
    const { store, read } = storeOf(dir);
    const error = await readDeltaLog(store, CHECKPOINTED, { maxCommitBytes: 1000 }).catch((caught: unknown) => caught);
    expect((error as Error).message).toBe(
      `${join(log, '00000000000000000013.json')}: 1226 bytes, more than the 1000 a log file may have here; not read`,
    );
    expect(read).not.toContain(`${CHECKPOINTED}/_delta_log/00000000000000000013.json`);
    expect(read).toContain(`${CHECKPOINTED}/_delta_log/00000000000000000012.json`);
  });

  it('a checkpoint that _last_checkpoint names but the log folder lacks', async () => {
    const { dir, log } = copyOf(CHECKPOINTED);
    rmSync(join(log, '00000000000000000010.checkpoint.parquet'));
    expect(await refusal(dir, CHECKPOINTED)).toBe(
      `${join(log, '_last_checkpoint')}: names the checkpoint 00000000000000000010.checkpoint.parquet, which is missing or incomplete`,
    );
  });

  it('a _last_checkpoint that is not JSON', async () => {
    const { dir, log } = copyOf(CHECKPOINTED);
    writeFileSync(join(log, '_last_checkpoint'), '{"version":1');
    expect(await refusal(dir, CHECKPOINTED)).toMatch(new RegExp(`^${join(log, '_last_checkpoint')}: not JSON \\(.+\\)$`));
  });

  it('a checkpoint whose Parquet is damaged', async () => {
    const { dir, log } = copyOf(CHECKPOINTED);
    writeFileSync(join(log, '00000000000000000010.checkpoint.parquet'), 'PAR1 not a checkpoint');
    expect(await refusal(dir, CHECKPOINTED)).toMatch(
      new RegExp(`^${join(log, '00000000000000000010.checkpoint.parquet')}: not a readable Parquet checkpoint \\(.+\\)$`),
    );
  });

  it('a folder without a log', async () => {
    const dir = tempDir('delta-log');
    const message = 'not a Delta table: no commit and no checkpoint in its log folder';
    expect(await refusal(dir, 'events')).toBe(`${join(dir, 'events', '_delta_log')}: ${message}`);
  });
});

describe('the Delta log reader passes over', () => {
  it('a multi-part checkpoint missing a part, as the protocol asks, replaying the JSON commits instead', async () => {
    const name = 'multi-part-checkpoint';
    const { dir, log } = copyOf(name);
    rmSync(join(log, '00000000000000000001.checkpoint.0000000002.0000000002.parquet'));
    rmSync(join(log, '_last_checkpoint'));
    const snapshot = await readDeltaLog(storeOf(dir).store, name);
    const whole = await readDeltaLog(createLocalStore(GOLDEN, silentLogger), name);
    expect([snapshot.version, snapshot.checkpoint]).toEqual([1, undefined]);
    expect(snapshot.files.map((file) => file.path)).toEqual(whole.files.map((file) => file.path));
  });
});

describe('the Delta log reader reconciles, on commits added to a golden table', () => {
  it('the latest txn of each appId, the latest metaData, and a remove cancelling the add of its path', async () => {
    const { dir, log } = copyOf(PLAIN);
    const before = await readDeltaLog(storeOf(dir).store, PLAIN);
    const [first, ...rest] = before.files;
    const metaData = { ...before.metaData, schema: undefined, configuration: { 'delta.appendOnly': 'false' } };
    const commits = [
      [{ txn: { appId: 'events', version: 1 } }, { txn: { appId: 'assets', version: 7 } }],
      [
        { txn: { appId: 'events', version: 2, lastUpdated: 5 } },
        { metaData },
        { remove: { path: first?.path, deletionTimestamp: 6, dataChange: true } },
      ],
    ];
    for (const [index, actions] of commits.entries()) {
      const name = `${String(5 + index).padStart(20, '0')}.json`;
      writeFileSync(join(log, name), actions.map((action) => JSON.stringify(action)).join('\n') + '\n');
    }
    const after = await readDeltaLog(storeOf(dir).store, PLAIN);
    expect(after.version).toBe(6);
    expect([...after.txns.values()]).toEqual([
      { appId: 'events', version: 2, lastUpdated: 5 },
      { appId: 'assets', version: 7 },
    ]);
    expect(after.metaData.configuration).toEqual({ 'delta.appendOnly': 'false' });
    expect(after.files.map((file) => file.path)).toEqual(rest.map((file) => file.path));
    expect((await readDeltaLog(storeOf(dir).store, PLAIN, { asOf: 5 })).files).toEqual(before.files);
  });
});
