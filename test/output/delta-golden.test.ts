import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeltaLogError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { createLocalStore, type DeltaSnapshot, readDeltaLog } from '../../src/output/index.js';
import { type Duck, openDuck } from '../support/export-duckdb.js';

/**
 * The Delta log reader against tables Spark wrote (delta-io/delta's golden tables, see
 * test/fixtures/delta-golden/README.md). What each table must hold is what its generator in
 * GoldenTables.scala wrote; DuckDB counts the rows of exactly the files the replay names, and the
 * writers' stats.numRecords must agree where Spark collected them.
 */

const GOLDEN = fileURLToPath(new URL('../fixtures/delta-golden/', import.meta.url));
const store = createLocalStore(GOLDEN, silentLogger);

let duck: Duck;
beforeAll(async () => {
  duck = await openDuck();
});
afterAll(() => duck.close());

function read(table: string, asOf?: number): Promise<DeltaSnapshot> {
  return readDeltaLog(store, table, asOf === undefined ? {} : { asOf });
}

/** The files of a snapshot as a DuckDB list of local paths. */
function filesOf(snapshot: DeltaSnapshot): string {
  return `[${snapshot.files.map((file) => `'${join(GOLDEN, file.key).replaceAll("'", "''")}'`).join(', ')}]`;
}

async function rowCount(snapshot: DeltaSnapshot): Promise<number> {
  const row = await duck.one(`SELECT count(*) AS n FROM read_parquet(${filesOf(snapshot)}, hive_partitioning = false)`);
  return Number(row.n);
}

/** The values of one column over the snapshot's files, sorted. */
async function columnOf(snapshot: DeltaSnapshot, column: string): Promise<unknown[]> {
  const rows = await duck.rows(`SELECT ${column} AS v FROM read_parquet(${filesOf(snapshot)}) ORDER BY v`);
  return rows.map((row) => (typeof row.v === 'bigint' ? Number(row.v) : row.v));
}

function statsRecords(snapshot: DeltaSnapshot): number {
  return snapshot.files.reduce((sum, file) => sum + (file.stats?.numRecords ?? Number.NaN), 0);
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, index) => from + index);
}

describe('snapshot-data2-deleted: append, append, overwrite, append, delete (JSON commits only)', () => {
  it('reads the latest version: the 20 rows of the last append, the overwritten ones deleted', async () => {
    const snapshot = await read('snapshot-data2-deleted');
    expect(snapshot.version).toBe(4);
    expect(snapshot.checkpoint).toBeUndefined();
    expect(snapshot.protocol).toEqual({ minReaderVersion: 1, minWriterVersion: 2 });
    expect(snapshot.metaData.schema).toMatchObject({ type: 'struct', fields: [{ name: 'col1' }, { name: 'col2' }] });
    // The delete removed the overwrite's two files and, as Spark does, added one file of no rows.
    expect(snapshot.files.map((file) => file.version)).toEqual([3, 4, 3]);
    expect(snapshot.files.find((file) => file.version === 4)?.size).toBe(348);
    expect(await rowCount(snapshot)).toBe(20);
    expect(await columnOf(snapshot, 'col2')).toEqual(range(0, 20).map((x) => `data-3-${x}`).sort());
    expect(snapshot.commits.map((commit) => [commit.version, commit.info.operation])).toEqual([
      [0, 'WRITE'], [1, 'WRITE'], [2, 'WRITE'], [3, 'WRITE'], [4, 'DELETE'],
    ]);
  });

  it('travels to each earlier version: 10, 20, 10 and 30 rows', async () => {
    const counts = [];
    for (const version of [0, 1, 2, 3]) {
      const snapshot = await read('snapshot-data2-deleted', version);
      expect(snapshot.version).toBe(version);
      counts.push(await rowCount(snapshot));
    }
    expect(counts).toEqual([10, 20, 10, 30]);
  });

  it('refuses a version after the latest, naming the last one', async () => {
    await expect(read('snapshot-data2-deleted', 5)).rejects.toThrow(/version 5 cannot be read: the table's versions end at 4/);
  });
});

describe('basic-with-inserts-deletes-checkpoint: 8 appends, 6 deletes, a checkpoint at version 10', () => {
  it('starts from the checkpoint _last_checkpoint names and replays versions 11 to 13', async () => {
    const snapshot = await read('basic-with-inserts-deletes-checkpoint');
    expect(snapshot.version).toBe(13);
    expect(snapshot.checkpoint).toBe(10);
    expect(snapshot.commits.map((commit) => commit.version)).toEqual([11, 12, 13]);
    const ids = [0, 10, 20, 30, 40].flatMap((from) => range(from, from + 5)).concat(range(50, 66));
    expect(await columnOf(snapshot, 'id')).toEqual(ids);
    expect(statsRecords(snapshot)).toBe(41);
    const sizes = await Promise.all(snapshot.files.map(async (file) => store.size(file.key)));
    expect(snapshot.files.map((file) => file.size)).toEqual(sizes);
  });

  it('reads the checkpoint version itself without a commit after it, and one before it from the JSON commits', async () => {
    const atCheckpoint = await read('basic-with-inserts-deletes-checkpoint', 10);
    expect([atCheckpoint.checkpoint, atCheckpoint.commits]).toEqual([10, []]);
    expect(await rowCount(atCheckpoint)).toBe(35);
    const before = await read('basic-with-inserts-deletes-checkpoint', 9);
    expect(before.checkpoint).toBeUndefined();
    expect(await rowCount(before)).toBe(25);
    expect(statsRecords(before)).toBe(25);
  });
});

describe('multi-part-checkpoint: a checkpoint of two parts at version 1', () => {
  it('reads both parts: the 1 row and the 30 rows in 9 files', async () => {
    const snapshot = await read('multi-part-checkpoint');
    expect([snapshot.version, snapshot.checkpoint, snapshot.files.length]).toEqual([1, 1, 10]);
    expect(await columnOf(snapshot, 'id')).toEqual([0, ...range(0, 30)]);
    expect(statsRecords(snapshot)).toBe(31);
  });
});

describe('basic-with-inserts-overwrite-restore: 100 rows, 100 more, overwrite with 500, restore to version 1', () => {
  it('reads the restored table from the checkpoint of its last version', async () => {
    const snapshot = await read('basic-with-inserts-overwrite-restore');
    expect([snapshot.version, snapshot.checkpoint]).toEqual([3, 3]);
    expect(await columnOf(snapshot, 'id')).toEqual(range(0, 200));
    expect(statsRecords(snapshot)).toBe(200);
  });

  it('reads the overwritten version 2 from the JSON commits: 500 rows', async () => {
    const snapshot = await read('basic-with-inserts-overwrite-restore', 2);
    expect(await columnOf(snapshot, 'id')).toEqual(range(500, 1000));
    expect(statsRecords(snapshot)).toBe(500);
  });
});

describe('data-reader-partition-values: 3 rows in 3 partitions of 12 columns', () => {
  it('decodes the URI paths to the files and keeps each partition value, null ones as null', async () => {
    const snapshot = await read('data-reader-partition-values');
    expect(snapshot.metaData.partitionColumns).toHaveLength(12);
    expect(snapshot.files.map((file) => file.partitionValues.as_int)).toEqual(['0', '1', null]);
    expect(snapshot.files[0]?.key).toContain('/as_timestamp=2021-09-08 11%3A11%3A11/');
    expect(snapshot.files[0]?.path).toContain('/as_timestamp=2021-09-08%2011%253A11%253A11/');
    expect(await rowCount(snapshot)).toBe(3);
    expect(await columnOf(snapshot, 'value')).toEqual(['0', '1', '2']);
  });
});

describe('basic-with-vacuum-protocol-check-feature: reader version 3 with a feature that leaves the log as it is', () => {
  it('reads its 100 rows', async () => {
    const snapshot = await read('basic-with-vacuum-protocol-check-feature');
    expect(snapshot.protocol).toMatchObject({ minReaderVersion: 3, readerFeatures: ['vacuumProtocolCheck'] });
    expect(await columnOf(snapshot, 'id')).toEqual(range(0, 100));
    expect(statsRecords(snapshot)).toBe(100);
  });
});

describe('the golden tables a reader must refuse', () => {
  it('versions-not-contiguous: version 1 is missing, named with the versions around it', async () => {
    const error = await read('versions-not-contiguous').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DeltaLogError);
    expect((error as Error).message).toBe(
      `${join(GOLDEN, 'versions-not-contiguous/_delta_log/00000000000000000001.json')}: missing: ` +
      'version 1 of the log is absent (version 0 is the last before it, 2 the first after it)',
    );
  });

  it('deltalog-invalid-protocol-version: a reader of version 99', async () => {
    const needs = 'the table needs a reader of version 99 (minReaderVersion); this reader supports up to 3';
    await expect(read('deltalog-invalid-protocol-version')).rejects.toThrow(
      `deltalog-invalid-protocol-version/_delta_log/00000000000000000000.json line 1: ${needs}`,
    );
  });
});
