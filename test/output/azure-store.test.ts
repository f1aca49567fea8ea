import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { inspect } from 'node:util';
import { generateBlobSASQueryParameters, ContainerSASPermissions, StorageSharedKeyCredential } from '@azure/storage-blob';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../src/cli/exit-codes.js';
import { ConfigError, OutputError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { createAzureBlobs } from '../../src/output/azure-blobs.js';
import { azureError, isTransient } from '../../src/output/azure-errors.js';
import { chooseCredential, credentialName } from '../../src/output/azure-credential.js';
import { createAzureStore, parseAzureUrl, type AzureStoreOptions } from '../../src/output/azure-store.js';
import type { OutputStore } from '../../src/output/store.js';
import { closedPort } from '../support/closed-port.js';
import { captureLogger } from '../support/log-capture.js';
import { tempDir } from '../support/resume-harness.js';
import { catchError, expectCreatedOnce, expectSmallFilesRoundTrip, expectStagedShardPublished, localFile, sha256Of } from '../support/store-helpers.js';
import { AZURITE_ACCOUNT, AZURITE_KEY, type Azurite, type AzureProxy, startAzurite, startAzureProxy } from '../support/azurite.js';

/**
 * The Azure store (src/output/azure-*.ts) against Microsoft's Azurite on loopback: the same cases
 * as the S3 store's (test/output/s3-store.test.ts), and Azure's own errors.
 */
const MiB = 1024 * 1024;
let azurite: Azurite;
let proxy: AzureProxy;
const stores: { close(): Promise<void> }[] = [];
/** Waits no real time: the retries' backoff is recorded instead. */
const waited: number[] = [];
const retry = { sleep: (ms: number) => (waited.push(ms), Promise.resolve()) };

beforeAll(async () => {
  azurite = await startAzurite();
  proxy = await startAzureProxy(azurite);
  await azurite.container('lake');
});
afterAll(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

function options(url: string, more: Partial<AzureStoreOptions> = {}): AzureStoreOptions {
  return { url, endpoint: azurite.endpoint, env: azurite.env, logger: silentLogger, retry, ...more };
}

function storeAt(url: string, more: Partial<AzureStoreOptions> = {}): OutputStore {
  const store = createAzureStore(options(url, more));
  stores.push(store);
  return store;
}

const abfss = (path: string, container = 'lake') => `abfss://${container}@${AZURITE_ACCOUNT}.dfs.core.windows.net/${path}`;

describe('parseAzureUrl', () => {
  it.each([
    ['abfss://lake@acct1.dfs.core.windows.net/exports/daily', { account: 'acct1', serviceUrl: 'https://acct1.blob.core.windows.net', container: 'lake', prefix: 'exports/daily' }],
    ['abfss://lake@acct1.dfs.core.windows.net', { account: 'acct1', container: 'lake', prefix: '' }],
    ['abfss://lake@acct1.dfs.core.chinacloudapi.cn/x/', { serviceUrl: 'https://acct1.blob.core.chinacloudapi.cn', prefix: 'x' }],
    ['https://acct1.blob.core.windows.net/lake/a/b', { account: 'acct1', serviceUrl: 'https://acct1.blob.core.windows.net', container: 'lake', prefix: 'a/b' }],
    ['az://lake/a', { account: undefined, serviceUrl: undefined, container: 'lake', prefix: 'a' }],
    [
      'abfss://Sales Workspace@onelake.dfs.fabric.microsoft.com/Sales.Lakehouse/Files/bulk-extract',
      { account: 'onelake', serviceUrl: 'https://onelake.blob.fabric.microsoft.com', container: 'Sales Workspace', prefix: 'Sales.Lakehouse/Files/bulk-extract' },
    ],
  ])('%s', (url, expected) => {
    expect(parseAzureUrl(url)).toMatchObject(expected);
  });

  it('az:// takes the account from the config', () => {
    expect(parseAzureUrl('az://lake/a', 'acct1')).toMatchObject({ account: 'acct1', serviceUrl: 'https://acct1.blob.core.windows.net' });
  });

  it.each([
    ['abfss://lake@acct1.blob.core.windows.net/x', 'Data Lake endpoint'],
    ['abfss://@acct1.dfs.core.windows.net/x', 'container is empty'],
    ['az:///x', 'container is empty'],
    ['az://Lake/x', 'lowercase'],
    ['az://la--ke/x', 'lowercase'],
    ['abfss://lake@Acct_1.dfs.core.windows.net/x', 'account name'],
    ['https://acct1.dfs.core.windows.net/lake/x', 'Blob endpoint'],
    ['az://lake/a//b', 'empty, "." or ".."'],
    ['az://lake/a/../b', 'empty, "." or ".."'],
    ['abfss://ws@onelake.dfs.fabric.microsoft.com/Sales.Lakehouse/Tables/x', 'Files'],
    ['gs://lake/x', 'start with abfss://'],
  ])('rejects %s', (url, why) => {
    const error = catchError(() => parseAzureUrl(url));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/^output\.dir must be an Azure URL/);
    expect((error as Error).message).toContain(why);
  });

  it('never repeats a URL that may carry a SAS token, and says where one goes', () => {
    const error = catchError(() => parseAzureUrl('az://lake/x?sv=2024&sig=TOPSECRETSIG'));
    expect((error as Error).message).not.toContain('TOPSECRETSIG');
    expect((error as Error).message).toContain('AZURE_STORAGE_SAS_TOKEN');
  });

  it('refuses an account in the config that another in the URL contradicts', () => {
    expect(() => parseAzureUrl('abfss://lake@acct1.dfs.core.windows.net/x', 'acct2')).toThrow(/output\.azure\.account is "acct2"/);
  });
});

describe('the credential', () => {
  it.each([
    [{ AZURE_STORAGE_CONNECTION_STRING: 'AccountName=a;AccountKey=k3y==', AZURE_STORAGE_KEY: 'x' }, 'connection string'],
    [{ AZURE_STORAGE_KEY: 'k3y==', AZURE_STORAGE_SAS_TOKEN: 'sv=1&sig=s' }, 'account key'],
    [{ AZURE_STORAGE_SAS_TOKEN: '?sv=1&sig=abcd' }, 'SAS token'],
    [{ AZURE_STORAGE_KEY: '  ' }, 'DefaultAzureCredential'],
    [{}, 'DefaultAzureCredential'],
  ])('is chosen in the order Azure tools read it: %j', (env, kind) => {
    expect(chooseCredential(env).kind).toBe(kind);
  });

  it('names the variable it came from, never the value', () => {
    const choice = chooseCredential({ AZURE_STORAGE_SAS_TOKEN: 'sv=1&sig=s3cr3tsig' });
    expect(credentialName(choice)).toBe('the SAS token in AZURE_STORAGE_SAS_TOKEN');
    expect(choice.secrets).toContain('s3cr3tsig');
    expect(credentialName(chooseCredential({}))).toMatch(/^DefaultAzureCredential \(workload identity, managed/);
  });

  it('with none set and an http:// endpoint (Azurite), says which to set instead of sending a token the SDK refuses', () => {
    const error = catchError(() => createAzureBlobs(options(abfss('x'), { env: {} })));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      `No Azure credential is set in the environment (AZURE_STORAGE_CONNECTION_STRING, AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN), and DefaultAzureCredential's tokens are sent over https:// only, not to ${azurite.endpoint}: set one of the three (for Azurite, its account key in AZURE_STORAGE_KEY).`,
    );
  });

  it('refuses a SAS token without a signature', () => {
    expect(() => chooseCredential({ AZURE_STORAGE_SAS_TOKEN: 'sv=1&sp=r' })).toThrow(/holds no signature/);
  });

  it('hands every secret it reads to onSecret before any request', () => {
    const seen: string[] = [];
    createAzureBlobs(options(abfss('x'), { onSecret: (value) => seen.push(value) }));
    expect(seen).toEqual([AZURITE_KEY]);
  });
});

describe('createAzureStore options', () => {
  it.each([
    [{ endpoint: 'ftp://127.0.0.1:21' }, /output\.azure\.endpoint must be an http/],
    [{ endpoint: 'http://user:hunter2@127.0.0.1:9000' }, /without credentials/],
    [{ endpoint: 'https://acct1.blob.core.windows.net/?sig=hunter2' }, /without credentials, query/],
    [{ endpoint: 'http://storage.example.com/acct' }, /plain http:\/\/ to storage\.example\.com/],
    [{ blockSizeBytes: 0 }, /blockSizeBytes/],
    [{ listPageSize: 5001 }, /listPageSize/],
  ])('rejects %j', (more, message) => {
    const error = catchError(() => createAzureStore(options(abfss('x'), more)));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('hunter2');
  });

  it('az:// without an account in the config is refused by name', () => {
    const error = catchError(() => createAzureStore(options('az://lake/x', { endpoint: undefined })));
    expect((error as Error).message).toContain('set output.azure.account');
  });

  it('names its location as given, without a trailing slash, and its credential', () => {
    const store = storeAt(`${abfss('a/b')}/`);
    expect(store.location).toBe(abfss('a/b'));
    expect(store.where('x.json')).toBe(`${abfss('a/b')}/x.json`);
    expect(store.credential).toBe('the account key in AZURE_STORAGE_KEY');
  });
});

describe('small blobs', () => {
  it('putText, getText and size round-trip; absent keys are undefined', async () => {
    const store = storeAt(abfss('text/run-1'));
    const text = await expectSmallFilesRoundTrip(store);
    const blob = azurite.service.getContainerClient('lake').getBlobClient('text/run-1/_checkpoint.json');
    expect((await blob.getProperties()).contentLength).toBe(Buffer.byteLength(text));
  });

  it('puts keys of a store without a path at the container root; az:// with the account in the config', async () => {
    const store = storeAt('az://lake', { account: AZURITE_ACCOUNT });
    await store.putText('rootkey/marker', 'x');
    expect(await azurite.service.getContainerClient('lake').getBlobClient('rootkey/marker').exists()).toBe(true);
    expect(await store.list('rootkey/')).toEqual(['rootkey/marker']);
  });

  it('read streams a blob and throws OutputError when it is absent', async () => {
    const store = storeAt(abfss('read'));
    await store.putText('a.ndjson', '{"id":1}\n');
    expect(await sha256Of(await store.read('a.ndjson'))).toBe(createHash('sha256').update('{"id":1}\n').digest('hex'));
    await expect(store.read('missing.ndjson')).rejects.toThrow(OutputError);
    await expect(store.read('missing.ndjson')).rejects.toThrow(`${abfss('read')}/missing.ndjson does not exist`);
  });

  it('createText creates only if absent, one winner of several at once (Put Blob with If-None-Match: *)', async () => {
    await expectCreatedOnce(storeAt(abfss('create')));
  });

  it('creates only if absent: the conditional Put Blob says whether it did', async () => {
    const blobs = createAzureBlobs(options(abfss('cond')));
    expect(await blobs.putTextIfAbsent('k', 'a')).toBe(true);
    expect(await blobs.putTextIfAbsent('k', 'b')).toBe(false);
    expect(await blobs.getText('k')).toBe('a');
  });
});

describe('list and remove', () => {
  it('lists recursively, relative to the root, sorted, across pages', async () => {
    const store = storeAt(abfss('lst'), { listPageSize: 5, endpoint: proxy.endpoint });
    const keys = Array.from({ length: 23 }, (_, i) => `events/part=${i % 3}/${String(i).padStart(6, '0')}.parquet`);
    for (const key of keys) await store.putText(key, key);
    await store.putText('_manifest.json', '{}');
    await storeAt(abfss('lst2')).putText('events/outside', 'not under lst/');
    const before = proxy.requests().length;
    expect(await store.list('events/')).toEqual([...keys].sort());
    const pages = proxy.requests().slice(before).filter((r) => r.comp === 'list');
    expect(pages).toHaveLength(5);
    expect(await store.list('')).toEqual(['_manifest.json', ...[...keys].sort()]);
    expect(await store.list('events/part=1/')).toEqual(keys.filter((key) => key.includes('part=1/')).sort());
    expect(await store.list('nothing/')).toEqual([]);
  });

  it('removes what it is given; missing keys are fine', async () => {
    const store = storeAt(abfss('rm'));
    const keys = Array.from({ length: 30 }, (_, i) => `shards/${String(i).padStart(6, '0')}.parquet`);
    const present = keys.filter((_, i) => i % 3 === 0);
    for (const key of present) await store.putText(key, 'x');
    await store.putText('keep.json', '{}');
    await store.remove(keys);
    expect(await store.list('')).toEqual(['keep.json']);
    await store.remove([]);
  });

  it('removeTree deletes only what `owned` says bulk-extract wrote, and names the rest', async () => {
    const store = storeAt(abfss('tree'));
    for (const key of ['run/a.parquet', 'run/b.parquet', 'run/notes.txt', 'other/c.parquet']) await store.putText(key, 'x');
    const left = await store.removeTree('run', (key) => key.endsWith('.parquet'));
    expect(left).toEqual(['run/notes.txt']);
    expect(await store.list('')).toEqual(['other/c.parquet', 'run/notes.txt']);
  });
});

describe('stage and publish', () => {
  it("a shard is staged in this process's staging folder, published under its key, and its staged file deleted", async () => {
    const store = storeAt(abfss('staged'), { staging: tempDir('azure-staging') });
    await store.prepare();
    await expectStagedShardPublished(store);
  });

  it('a small file goes in one Put Blob', async () => {
    const blobs = createAzureBlobs(options(abfss('pub-small'), { endpoint: proxy.endpoint }));
    const file = localFile('000000.parquet', 100 * 1024);
    const before = proxy.requests().length;
    await blobs.publishFile(file.path, 'events/000000.parquet');
    expect(existsSync(file.path)).toBe(false);
    const sent = proxy.requests().slice(before).map((r) => `${r.method} ${r.comp ?? ''}`);
    expect(sent).toEqual(['PUT ']);
    expect(await sha256Of(await blobs.read('events/000000.parquet'))).toBe(file.sha256);
  });

  it('a larger file goes in staged blocks, invisible until one Put Block List commits them', async () => {
    const blobs = createAzureBlobs(options(abfss('pub-blocks'), { endpoint: proxy.endpoint, singleShotBytes: MiB, blockSizeBytes: MiB, concurrency: 2 }));
    const file = localFile('big.parquet', 3 * MiB + 123);
    // The commit fails once, for good (a 403 is not retried): the blocks were sent, no blob exists.
    proxy.failNext((r) => r.comp === 'blocklist' && r.path.startsWith('/lake/pub-blocks/'), 403, 'AuthorizationFailure');
    const failed = await blobs.publishFile(file.path, 'events/big.parquet').catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: 'E_OUTPUT_AUTH' });
    expect(await blobs.size('events/big.parquet')).toBeUndefined();
    expect(existsSync(file.path)).toBe(true);
    const before = proxy.requests().length;
    await blobs.publishFile(file.path, 'events/big.parquet');
    const sent = proxy.requests().slice(before).map((r) => r.comp ?? '');
    expect(sent.filter((comp) => comp === 'block')).toHaveLength(4);
    expect(sent.at(-1)).toBe('blocklist');
    expect(await blobs.size('events/big.parquet')).toBe(3 * MiB + 123);
    expect(await sha256Of(await blobs.read('events/big.parquet'))).toBe(file.sha256);
  });
});

describe('an answer that stops mid-body', () => {
  // The SDK's own timeout ends when the headers arrive; these bodies then stall for good.
  const stalling = (prefix: string) =>
    createAzureBlobs(options(abfss(prefix), { endpoint: proxy.endpoint, requestTimeoutMs: 300 }));

  it('a download fails with one line once no byte has come for the request timeout; the next read is whole', async () => {
    const blobs = stalling('stall-read');
    const file = localFile('000000.parquet', 256 * 1024);
    await blobs.publishFile(file.path, 'events/000000.parquet');
    proxy.stallNext((r) => r.method === 'GET' && r.path === '/lake/stall-read/events/000000.parquet', 1000);
    const failed = await sha256Of(await blobs.read('events/000000.parquet')).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(OutputError);
    const blob = `abfss://lake@${AZURITE_ACCOUNT}.dfs.core.windows.net/stall-read/events/000000.parquet`;
    expect((failed as Error).message).toBe(
      `Azure Get Blob of ${blob} failed: BodyStalled: no complete answer within 0.3 s. ` +
      'The server stopped answering mid-request: what was committed stays valid; run again to resume.',
    );
    expect(exitCodeOf(failed as OutputError)).toBe(1);
    // The next read is whole.
    expect(await sha256Of(await blobs.read('events/000000.parquet'))).toBe(file.sha256);
  });

  it('a state file whose answer stalls is asked again', async () => {
    const blobs = stalling('stall-text');
    const text = `${'{"cursor":"x"}'.repeat(2000)}\n`;
    await blobs.putText('_checkpoint.json', text);
    proxy.stallNext((r) => r.method === 'GET' && r.path === '/lake/stall-text/_checkpoint.json', 100);
    expect(await blobs.getText('_checkpoint.json')).toBe(text);
  });

  it('a write whose error answer stalls mid-body is sent again', async () => {
    const blobs = stalling('stall-put');
    // Azurite refuses the second create with 409 and an XML body: the proxy sends 20 bytes of it.
    expect(await blobs.putTextIfAbsent('_lock.json', '{"a":1}')).toBe(true);
    proxy.stallNext((r) => r.method === 'PUT' && r.path === '/lake/stall-put/_lock.json', 20);
    expect(await blobs.putTextIfAbsent('_lock.json', '{"a":2}')).toBe(false);
    expect(await blobs.getText('_lock.json')).toBe('{"a":1}');
  });

  it('an upload whose answer stalls (its headers came, its end never does) is sent again', async () => {
    const blobs = stalling('stall-upload');
    const file = localFile('000001.parquet', 64 * 1024);
    proxy.stallNext((r) => r.method === 'PUT' && r.path === '/lake/stall-upload/events/000001.parquet', 0);
    await blobs.publishFile(file.path, 'events/000001.parquet');
    expect(await sha256Of(await blobs.read('events/000001.parquet'))).toBe(file.sha256);
  });

  it('a listing whose answer stalls is asked again', async () => {
    const blobs = stalling('stall-list');
    await blobs.putText('a/1.json', '{}');
    await blobs.putText('a/2.json', '{}');
    proxy.stallNext((r) => r.method === 'GET' && r.comp === 'list', 50);
    expect(await blobs.list('a/')).toEqual(['a/1.json', 'a/2.json']);
  });
});

describe('throttling', () => {
  it('503 ServerBusy and 500 OperationTimedOut are sent again after a backoff; the write happens once', async () => {
    const store = storeAt(abfss('busy'), { endpoint: proxy.endpoint });
    proxy.failNext((r) => r.path === '/lake/busy/_checkpoint.json' && r.method === 'PUT', 503, 'ServerBusy', 2);
    proxy.failNext((r) => r.path === '/lake/busy/_checkpoint.json' && r.method === 'PUT', 500, 'OperationTimedOut', 1);
    waited.length = 0;
    await store.putText('_checkpoint.json', '{"v":1}');
    expect(waited).toHaveLength(3);
    // Full jitter under a doubling ceiling: 500 ms, 1 s, 2 s.
    waited.forEach((ms, i) => expect(ms).toBeLessThan(500 * 2 ** i));
    expect(await store.getText('_checkpoint.json')).toBe('{"v":1}');
    const puts = proxy.requests().filter((r) => r.path === '/lake/busy/_checkpoint.json' && r.method === 'PUT');
    expect(puts.map((r) => r.status)).toEqual([503, 503, 500, 201]);
  });

  it('throttling past the attempts is one line that says to run again (exit 1)', async () => {
    const store = storeAt(abfss('busy2'), { endpoint: proxy.endpoint, retry: { ...retry, maxAttempts: 3 } });
    proxy.failNext((r) => r.path.startsWith('/lake/busy2/'), 503, 'ServerBusy', 3);
    const error = await store.putText('_manifest.json', '{}').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'E_OUTPUT' });
    expect(exitCodeOf(error as { code: string })).toBe(1);
    expect((error as Error).message).toBe(
      `Azure Put Blob of ${abfss('busy2')}/_manifest.json failed: ServerBusy (HTTP 503): Injected by the test. ` +
      'Azure throttled the requests past their retries: what was committed stays valid; run again later to resume.',
    );
    expect((error as Error).message).not.toContain('\n');
  });
});

describe('azureError: each failure as the class that decides its exit code', () => {
  const at = { container: 'lake', account: 'acct1', endpoint: 'https://acct1.blob.core.windows.net', credential: 'the account key in AZURE_STORAGE_KEY', credentialFix: 'check it' };
  it.each([
    [{ code: 'ENOTFOUND', message: 'getaddrinfo ENOTFOUND acct1.blob.core.windows.net' }, 'E_OUTPUT_ACCESS', 2, 'No storage account answers at https://acct1.blob.core.windows.net (account "acct1")'],
    [{ statusCode: 404, code: 'ContainerNotFound' }, 'E_OUTPUT_ACCESS', 2, 'The container "lake" does not exist'],
    [{ statusCode: 403, code: 'AuthorizationPermissionMismatch' }, 'E_OUTPUT_AUTH', 3, 'Tried the account key in AZURE_STORAGE_KEY: check it.'],
    [{ name: 'CredentialUnavailableError', message: 'DefaultAzureCredential failed to retrieve a token' }, 'E_OUTPUT_AUTH', 3, 'Tried the account key'],
    [{ statusCode: 503, code: 'ServerBusy' }, 'E_OUTPUT', 1, 'Azure throttled the requests'],
    [{ code: 'ECONNRESET' }, 'E_OUTPUT', 1, 'is unreachable'],
  ])('%j', (error, code, exit, says) => {
    const failure = azureError('Put Blob', 'az://lake/x', at, Object.assign(new Error(), error));
    expect(failure.code).toBe(code);
    expect(exitCodeOf(failure)).toBe(exit);
    expect(failure.message).toContain(says);
  });

  it('a transient failure is retried, a final one is not', () => {
    expect(isTransient({ statusCode: 503 })).toBe(true);
    expect(isTransient({ statusCode: 500, code: 'OperationTimedOut' })).toBe(true);
    expect(isTransient({ code: 'ECONNRESET' })).toBe(true);
    expect(isTransient({ statusCode: 403 })).toBe(false);
    expect(isTransient({ statusCode: 404, code: 'ContainerNotFound' })).toBe(false);
    expect(isTransient({ code: 'ENOTFOUND' })).toBe(false);
  });
});

describe('errors', () => {
  it('a missing container: one line naming it, exit 2', async () => {
    const store = storeAt(abfss('x', 'no-such-container'));
    const error = await store.putText('_checkpoint.json', '{}').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'E_OUTPUT_ACCESS', failure: { azureCode: 'ContainerNotFound', httpStatus: 404 } });
    expect(exitCodeOf(error as { code: string })).toBe(2);
    expect((error as Error).message).toContain('The container "no-such-container" does not exist: create it');
    // A HEAD has no body: Azure's code comes in a header, so a missing container is told from a missing blob here too.
    await expect(store.size('_checkpoint.json')).rejects.toMatchObject({ code: 'E_OUTPUT_ACCESS' });
    await expect(store.getText('_checkpoint.json')).rejects.toMatchObject({ code: 'E_OUTPUT_ACCESS' });
    await expect(store.list('')).rejects.toMatchObject({ code: 'E_OUTPUT_ACCESS' });
  });

  it('a wrong account key: one line naming the credential tried, exit 3, the key never shown', async () => {
    const wrong = Buffer.from('not-the-key-of-this-account-0123456789').toString('base64');
    const capture = captureLogger();
    const store = storeAt(abfss('k'), { env: { AZURE_STORAGE_KEY: wrong }, logger: capture.logger });
    const error = await store.putText('a.json', '{}').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'E_OUTPUT_AUTH', failure: { httpStatus: 403 } });
    expect(exitCodeOf(error as { code: string })).toBe(3);
    expect((error as Error).message).toContain('Tried the account key in AZURE_STORAGE_KEY');
    expect((error as Error).message).toContain("check that the key is one of the account's two current keys");
    capture.logger.error({ err: error }, 'failed');
    for (const text of [inspect(error, { depth: null, showHidden: true }), JSON.stringify(error), capture.lines().join('\n')]) {
      expect(text).not.toContain(wrong);
    }
  });

  it('an expired SAS token: exit 3, the signature never shown; a valid one works', async () => {
    const key = new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY);
    const sas = (expiresOn: Date) => generateBlobSASQueryParameters(
      { containerName: 'lake', permissions: ContainerSASPermissions.parse('racwdl'), startsOn: new Date(Date.now() - 3_600_000), expiresOn },
      key,
    ).toString();
    const expired = sas(new Date(Date.now() - 60_000));
    const signature = new URLSearchParams(expired).get('sig') ?? '';
    const store = storeAt(abfss('sas'), { env: { AZURE_STORAGE_SAS_TOKEN: expired } });
    const error = await store.putText('a.json', '{}').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'E_OUTPUT_AUTH' });
    expect((error as Error).message).toContain('Tried the SAS token in AZURE_STORAGE_SAS_TOKEN');
    const text = inspect(error, { depth: null, showHidden: true });
    expect(text).not.toContain(signature);
    expect(text).not.toContain(encodeURIComponent(signature));
    await storeAt(abfss('sas'), { env: { AZURE_STORAGE_SAS_TOKEN: sas(new Date(Date.now() + 3_600_000)) } }).putText('a.json', '{}');
  });

  it('a connection string is used before the rest', async () => {
    const connection = `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};BlobEndpoint=${azurite.endpoint};`;
    const store = storeAt(abfss('cs'), { endpoint: undefined, env: { AZURE_STORAGE_CONNECTION_STRING: connection, AZURE_STORAGE_KEY: 'wrong' } });
    await store.putText('a.json', '{}');
    expect(store.credential).toBe('the connection string in AZURE_STORAGE_CONNECTION_STRING');
    expect(await store.getText('a.json')).toBe('{}');
  });

  it('fails with a hint when the endpoint is unreachable, after its retries', async () => {
    const port = await closedPort();
    const store = storeAt(abfss('x'), { endpoint: `http://127.0.0.1:${port}/${AZURITE_ACCOUNT}`, retry: { ...retry, maxAttempts: 2 } });
    const error = await store.putText('a', 'b').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutputError);
    expect((error as Error).message).toContain(`http://127.0.0.1:${port}/${AZURITE_ACCOUNT} is unreachable`);
  });
});
