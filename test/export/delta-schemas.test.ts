import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { assertTableSchemas } from '../../src/export/state/index.js';
import { type Checkpoint, newCheckpoint } from '../../src/export/state/checkpoint.js';
import type { StreamState } from '../../src/export/state/checkpoint-schema.js';

/**
 * A Delta table stream whose columns Delta cannot hold is refused before the run writes anything.
 * instanceColumns already renames a property whose name folds onto another's, so this guards names
 * that reach the schema another way; the states here are made by hand.
 */
const NOW = '2026-11-29T12:00:00.000Z';

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

describe('assertTableSchemas', () => {
  it('refuses columns Delta cannot hold, naming the stream and the columns', async () => {
    const error = await assertTableSchemas(['people'], withInstances(['space', 'Name', 'name'], 'delta')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      "stream 'people' is a Delta table, and columns 'Name' and 'name': Delta compares column names without case; give it table: files, or leave such columns out",
    );
    await expect(assertTableSchemas(['people'], withInstances(['full name'], 'delta'))).rejects.toThrow(
      "stream 'people' is a Delta table, and column 'full name': Delta refuses a name holding a space",
    );
  });

  it('passes a files stream, a complete stream, and columns Delta takes', async () => {
    await expect(assertTableSchemas(['people'], withInstances(['Name', 'name'], undefined))).resolves.toBeUndefined();
    await expect(assertTableSchemas(['people'], withInstances(['Name', 'name'], 'delta', true))).resolves.toBeUndefined();
    await expect(assertTableSchemas(['people'], withInstances(['space', 'externalId', 'name'], 'delta'))).resolves.toBeUndefined();
  });
});
