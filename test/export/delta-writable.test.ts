import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { assertTablesWritable } from '../../src/export/state/index.js';
import { type Checkpoint, newCheckpoint } from '../../src/export/state/checkpoint.js';
import type { StreamState } from '../../src/export/state/checkpoint-schema.js';
import { silentLogger } from '../../src/log.js';
import { createLocalStore } from '../../src/output/index.js';
import { removeTempDirs, tempDir } from '../support/export-harness.js';

/**
 * A Delta table stream that could not be committed is refused before the run writes anything: its
 * folder holds a table bulk-extract did not write, or its columns are ones Delta cannot hold
 * (instanceColumns already renames a property whose name folds onto another's, so this guards names
 * that reach the schema another way; the states here are made by hand).
 */
const NOW = '2026-11-29T12:00:00.000Z';
const GOLDEN = fileURLToPath(new URL('../fixtures/delta-golden/', import.meta.url));
const out = tempDir();
const store = createLocalStore(out, silentLogger);

afterAll(removeTempDirs);

function withInstances(names: string[], table: 'delta' | undefined, done = false): Checkpoint {
  const columns = names.map((name) => ({
    name,
    kind: 'string' as const,
    list: false,
    required: false,
    from: { property: name, type: 'text' },
  }));
  const state = {
    resource: 'instances',
    mode: 'full',
    params: [],
    window: null,
    run: '20261129T120000.000Z',
    watermark: null,
    partitions: 1,
    formats: ['parquet'],
    parts: { 1: { cursor: null, nextSeq: 0, rows: 0, done, updatedAt: NOW } },
    instances: { columns },
    ...(table === undefined ? {} : { table }),
  } as unknown as StreamState;
  return { ...newCheckpoint('https://x.example/api/v1/projects/p', [], NOW), streams: { people: state } };
}

describe('assertTablesWritable', () => {
  it('refuses columns Delta cannot hold, naming the stream and the columns', async () => {
    const error = await assertTablesWritable(store, ['people'], withInstances(['space', 'Name', 'name'], 'delta')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      "stream 'people' is a Delta table, and columns 'Name' and 'name': Delta compares column names without case; give it table: files, or leave such columns out",
    );
    await expect(assertTablesWritable(store, ['people'], withInstances(['full name'], 'delta'))).rejects.toThrow(
      "stream 'people' is a Delta table, and column 'full name': Delta refuses a name holding a space",
    );
  });

  it('passes a files stream, a complete stream, and columns Delta takes', async () => {
    await expect(assertTablesWritable(store, ['people'], withInstances(['Name', 'name'], undefined))).resolves.toBeUndefined();
    await expect(assertTablesWritable(store, ['people'], withInstances(['Name', 'name'], 'delta', true))).resolves.toBeUndefined();
    await expect(assertTablesWritable(store, ['people'], withInstances(['space', 'externalId', 'name'], 'delta'))).resolves.toBeUndefined();
  });

  it('refuses a stream folder that holds a Delta table bulk-extract did not write (Spark wrote this one)', async () => {
    const other = tempDir();
    cpSync(join(GOLDEN, 'snapshot-data2-deleted'), join(other, 'people'), { recursive: true });
    const theirs = createLocalStore(other, silentLogger);
    const error = await assertTablesWritable(theirs, ['people'], withInstances(['space', 'name'], 'delta')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      `${join(other, 'people')} holds a Delta table that bulk-extract did not write (no bulk-extract transaction in its log, version 4); give the stream another name or output.dir`,
    );
  });
});
