import { copyFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { createAzureStore } from '../../src/output/azure-store.js';
import { createLocalStore, type DeltaSnapshot, type OutputStore, readDeltaLog, writeCheckpoint } from '../../src/output/index.js';
import { createS3Store } from '../../src/output/s3-store.js';
import { type AzureProxy, startAzureProxy, startAzurite } from '../support/azurite.js';
import { S3RVER_ACCESS, type S3TestServer, startS3Server } from '../support/s3-server.js';

/**
 * The Delta log reader works through any OutputStore: golden tables Spark wrote, uploaded to a
 * bucket prefix (s3rver) and an Azure container prefix (Azurite), replay to what the folder gives,
 * their checkpoints read from local copies and their URI-encoded partition paths found as keys.
 */

const GOLDEN = fileURLToPath(new URL('../fixtures/delta-golden/', import.meta.url));
const TABLES = ['basic-with-inserts-deletes-checkpoint', 'multi-part-checkpoint', 'data-reader-partition-values'];

let server: S3TestServer;
let azure: AzureProxy;
let azureEnv: Record<string, string> = {};
const stores: OutputStore[] = [];

beforeAll(async () => {
  server = await startS3Server({ bucket: 'delta' });
  const azurite = await startAzurite();
  await azurite.container('delta');
  azure = await startAzureProxy(azurite);
  azureEnv = azurite.env;
});
afterAll(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
  await server.close();
});

const kinds: [string, () => OutputStore][] = [
  ['a bucket prefix', () => createS3Store({ url: 's3://delta/tables', endpoint: server.endpoint, logger: silentLogger, ...S3RVER_ACCESS })],
  [
    'an Azure container prefix',
    () => createAzureStore({
      url: 'abfss://delta@devstoreaccount1.dfs.core.windows.net/tables',
      endpoint: azure.endpoint,
      env: azureEnv,
      logger: silentLogger,
    }),
  ],
];

/** Every file of the golden table `name`, uploaded under the same keys (or those of the folder `as`). */
async function upload(store: OutputStore, name: string, as = name): Promise<void> {
  const entries = readdirSync(join(GOLDEN, name), { recursive: true, withFileTypes: true });
  for (const file of entries.filter((each) => each.isFile())) {
    const key = as + join(file.parentPath, file.name).slice(GOLDEN.length + name.length);
    copyFileSync(join(file.parentPath, file.name), await store.stage(key));
    await store.publish(key);
  }
}

/** What a replay decides, without the store's own keys' place. */
function decided(snapshot: DeltaSnapshot): unknown {
  const files = snapshot.files.map(({ key, path, size, version, stats, partitionValues }) => ({
    key, path, size, version, stats, partitionValues,
  }));
  return { version: snapshot.version, checkpoint: snapshot.checkpoint, protocol: snapshot.protocol, files };
}

describe.each(kinds)('the Delta log reader through %s', (_kind, open) => {
  it('replays each uploaded golden table to what the folder gives, and finds every file it names', async () => {
    const store = open();
    stores.push(store);
    await store.prepare();
    const folder = createLocalStore(GOLDEN, silentLogger);
    for (const name of TABLES) {
      await upload(store, name);
      const snapshot = await readDeltaLog(store, name);
      expect(decided(snapshot)).toEqual(decided(await readDeltaLog(folder, name)));
      const sizes = await Promise.all(snapshot.files.map((file) => store.size(file.key)));
      expect(sizes).toEqual(snapshot.files.map((file) => file.size));
    }
  });

  it('writes a checkpoint there that replays to the table it was made from', async () => {
    const store = open();
    stores.push(store);
    await store.prepare();
    await upload(store, 'snapshot-data2-deleted', 'checkpointed');
    const before = await readDeltaLog(store, 'checkpointed');
    expect(before.checkpoint).toBeUndefined();
    await writeCheckpoint(store, 'checkpointed', before.version, before);
    const after = await readDeltaLog(store, 'checkpointed');
    expect(after.checkpoint).toBe(before.version);
    // Files read from a checkpoint count as added by its version: it does not say which added them.
    const addedAt = (snapshot: DeltaSnapshot, version: number) => ({
      ...snapshot,
      files: snapshot.files.map((file) => ({ ...file, version })),
    });
    const expected = { ...(decided(addedAt(before, before.version)) as object), checkpoint: before.version };
    expect(decided(after)).toEqual(expected);
    expect(JSON.parse((await store.getText('checkpointed/_delta_log/_last_checkpoint')) ?? '{}')).toMatchObject({
      version: before.version,
      numOfAddFiles: before.files.length,
    });
  });
});
