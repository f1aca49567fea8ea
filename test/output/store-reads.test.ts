import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutputError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { createLocalStore } from '../../src/output/local-store.js';
import { createAzureStore } from '../../src/output/azure-store.js';
import { createS3Store } from '../../src/output/s3-store.js';
import type { OutputStore } from '../../src/output/store.js';
import { tempDir } from '../support/resume-harness.js';
import { type AzureProxy, startAzureProxy, startAzurite } from '../support/azurite.js';
import { S3RVER_ACCESS, type S3TestServer, startS3Server } from '../support/s3-server.js';

/**
 * The reads verify and repair make through an OutputStore, the same for an output folder and for a
 * bucket prefix (s3rver on loopback) and for an Azure container prefix (Azurite on loopback, through
 * a proxy that counts its requests), each listed two keys a page: `getText`, `size`, `read`, and the
 * keys under a prefix, streamed by `keys` and collected by `list`.
 */

let server: S3TestServer;
let azure: AzureProxy;
let prefixes = 0;
const stores: OutputStore[] = [];

beforeAll(async () => {
  server = await startS3Server({ bucket: 'reads' });
  const azurite = await startAzurite();
  await azurite.container('reads');
  azure = await startAzureProxy(azurite);
  azureEnv = azurite.env;
});
let azureEnv: Record<string, string> = {};
afterAll(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
  await server.close();
});

/** Each kind of store, and the list requests its server has answered so far (none for a folder). */
const kinds: [string, () => OutputStore, () => number][] = [
  ['a folder', () => createLocalStore(tempDir('store-reads'), silentLogger), () => 0],
  [
    'a bucket prefix',
    () => createS3Store({
      url: `s3://reads/p${++prefixes}`,
      endpoint: server.endpoint,
      listPageSize: 2,
      logger: silentLogger,
      ...S3RVER_ACCESS,
    }),
    () => server.requests().filter((request) => request.operation === 'ListObjectsV2').length,
  ],
  [
    'an Azure container prefix',
    () => createAzureStore({
      url: `abfss://reads@devstoreaccount1.dfs.core.windows.net/p${++prefixes}`,
      endpoint: azure.endpoint,
      env: azureEnv,
      listPageSize: 2,
      logger: silentLogger,
    }),
    () => azure.requests().filter((request) => request.comp === 'list').length,
  ],
];

/**
 * Keys whose sorted order is not that of a walk that lists folders first or last. None sorts before
 * a folder it shares a start with ('a-b/' before 'a/'): s3rver would skip it across pages.
 */
const KEYS = ['aa/x.json', 'a/run=2/b.json', 'a/run=1/a.json', 'a/z.json', 'a/part=0/000000.ndjson', 'ab.json', 'b.json'];

async function filled(open: () => OutputStore): Promise<OutputStore> {
  const store = open();
  stores.push(store);
  for (const key of KEYS) await store.putText(key, `{"key":"${key}","é":1}`);
  return store;
}

async function collected(keys: AsyncIterable<string>): Promise<string[]> {
  const found: string[] = [];
  for await (const key of keys) found.push(key);
  return found;
}

describe.each(kinds)('the reads of %s', (kind, open, listRequests) => {
  it('getText, size and read: the bytes as put (UTF-8), undefined or an OutputError when absent', async () => {
    const store = await filled(open);
    const content = '{"key":"a/z.json","é":1}';
    expect(await store.getText('a/z.json')).toBe(content);
    expect(await store.size('a/z.json')).toBe(Buffer.byteLength(content));
    expect(await text(await store.read('a/z.json'))).toBe(content);
    expect(await store.getText('a/none.json')).toBeUndefined();
    expect(await store.size('a/none.json')).toBeUndefined();
    await expect(store.read('a/none.json')).rejects.toBeInstanceOf(OutputError);
  });

  it('keys streams what is under a folder, or under a folder and the start of a name; list sorts them', async () => {
    const store = await filled(open);
    expect((await collected(store.keys(''))).sort()).toEqual([...KEYS].sort());
    expect((await collected(store.keys('a/'))).sort()).toEqual(['a/part=0/000000.ndjson', 'a/run=1/a.json', 'a/run=2/b.json', 'a/z.json']);
    expect((await collected(store.keys('a/run='))).sort()).toEqual(['a/run=1/a.json', 'a/run=2/b.json']);
    expect(await collected(store.keys('c/'))).toEqual([]);
    expect(await store.list('a/')).toEqual(['a/part=0/000000.ndjson', 'a/run=1/a.json', 'a/run=2/b.json', 'a/z.json']);
    expect(await store.list('')).toEqual([...KEYS].sort());
  });

  it('keys can be left early, having read only what was asked for', async () => {
    const store = await filled(open);
    const before = listRequests();
    for await (const key of store.keys('')) {
      expect(KEYS).toContain(key);
      break;
    }
    // A bucket or a container: one page of two keys of seven; a folder sends no request.
    expect(listRequests() - before).toBe(kind === 'a folder' ? 0 : 1);
  });
});
