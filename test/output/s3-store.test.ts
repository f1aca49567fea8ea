import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, OutputAccessError, OutputAuthError, OutputError } from '../../src/errors.js';
import { createS3Store, parseS3Url, S3AccessError, type S3StoreOptions } from '../../src/output/s3-store.js';
import { createS3Objects, type S3Objects } from '../../src/output/s3-objects.js';
import type { OutputStore } from '../../src/output/store.js';
import { silentLogger } from '../../src/log.js';
import { captureLogger } from '../support/log-capture.js';
import { tempDir } from '../support/resume-harness.js';
import {
  catchError,
  expectCreatedOnce,
  expectSmallFilesRoundTrip,
  expectStagedShardPublished,
  localFile,
  sha256Of,
} from '../support/store-helpers.js';
import { S3RVER_ACCESS, type S3Request, type S3TestServer, startS3Server } from '../support/s3-server.js';

const MiB = 1024 * 1024;
const DIST_OBJECTS = fileURLToPath(new URL('../../dist/output/s3-objects.js', import.meta.url));
const DIST_LOG = fileURLToPath(new URL('../../dist/log.js', import.meta.url));

let server: S3TestServer;
const stores: { close(): Promise<void> }[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  server = await startS3Server();
});
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
afterAll(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

function storeAt(url: string, options: Partial<S3StoreOptions> = {}): OutputStore {
  const store = createS3Store({ url, endpoint: server.endpoint, logger: silentLogger, ...S3RVER_ACCESS, ...options });
  stores.push(store);
  return store;
}

/** The object operations under a store (createS3Objects), for what they do alone: uploads. */
function objectsAt(url: string, options: Partial<S3StoreOptions> = {}): S3Objects {
  const objects = createS3Objects({
    url, endpoint: server.endpoint, logger: silentLogger, ...S3RVER_ACCESS, ...options,
  });
  stores.push(objects);
  return objects;
}

function requestsUnder(prefix: string, target = server): S3Request[] {
  return target.requests().filter((request) => request.key.startsWith(prefix));
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe('parseS3Url', () => {
  it.each([
    ['s3://bucket', { bucket: 'bucket', prefix: '' }],
    ['s3://bucket/', { bucket: 'bucket', prefix: '' }],
    ['s3://my.bucket-1/some/prefix', { bucket: 'my.bucket-1', prefix: 'some/prefix' }],
    ['s3://bucket//exports/daily/', { bucket: 'bucket', prefix: 'exports/daily' }],
  ])('%s', (url, expected) => {
    expect(parseS3Url(url)).toEqual(expected);
  });

  it.each([
    ['s3:/x', 'start with s3://'],
    ['s3://', 'bucket name is empty'],
    ['s3:///prefix', 'bucket name is empty'],
    ['S3://bucket', 'start with s3://'],
    ['/local/dir', 'start with s3://'],
    ['s3://ab', '3 to 63'],
    ['s3://My_Bucket', 'lowercase'],
    ['s3://bucket-', 'lowercase'],
    ['s3://a..b', 'adjacent periods'],
    ['s3://192.168.1.1', 'IP address'],
    ['s3://xn--bucket', 'reserved'],
    ['s3://bucket?versionId=1', 'query string'],
    ['s3://bucket/a#b', 'query string'],
    ['s3://bucket/a//b', 'empty'],
    ['s3://bucket/a/../b', '".."'],
  ])('rejects %s', (url, why) => {
    expect(() => parseS3Url(url)).toThrow(ConfigError);
    expect(() => parseS3Url(url)).toThrow(/^output\.dir must be s3:\/\/bucket/);
    expect(() => parseS3Url(url)).toThrow(why);
  });

  it('never repeats a URL that may carry credentials', () => {
    const error = catchError(() => parseS3Url('s3://AKIAID:topsecret@bucket/x'));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).not.toContain('topsecret');
  });
});

describe('createS3Store options', () => {
  it.each([
    [{ partSizeBytes: 5 * MiB - 1 }, /partSizeBytes must be an integer from 5242880/],
    [{ queueSize: 0 }, /queueSize/],
    [{ listPageSize: 1001 }, /listPageSize/],
    [{ endpoint: 'ftp://127.0.0.1:21' }, /output\.s3\.endpoint must be an http/],
    [{ endpoint: 'http://user:hunter2@127.0.0.1:9000' }, /without credentials/],
  ])('rejects %j', (options, message) => {
    const error = catchError(() => createS3Store({ url: 's3://bucket', logger: silentLogger, ...options }));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('hunter2');
  });

  it('names its location without a trailing slash', () => {
    expect(storeAt('s3://test-bucket/a/b/').location).toBe('s3://test-bucket/a/b');
    expect(storeAt('s3://test-bucket').location).toBe('s3://test-bucket');
  });
});

describe('small objects', () => {
  it('putText, getText and size round-trip; absent keys are undefined', async () => {
    const store = storeAt('s3://test-bucket/text/run-1');
    await expectSmallFilesRoundTrip(store);
    expect(requestsUnder('text/').map((r) => r.key)).toContain('text/run-1/_checkpoint.json');
  });

  it('puts keys of a store without prefix at the bucket root', async () => {
    const store = storeAt('s3://test-bucket');
    await store.putText('rootkey/marker', 'x');
    expect(existsSync(join(server.directory, server.bucket, 'rootkey', 'marker._S3rver_object'))).toBe(true);
    expect(await store.list('rootkey/')).toEqual(['rootkey/marker']);
  });

  it('createText creates only if absent, one winner of several at once (the server answers If-None-Match: * as S3 does)', async () => {
    const store = storeAt('s3://test-bucket/create');
    await expectCreatedOnce(store);
    const creates = requestsUnder('create/').filter((r) => r.operation === 'PutObject' && r.key.endsWith('.json'));
    expect(creates.filter((r) => r.status === 412).length).toBeGreaterThan(0);
  });

  it('createText on s3rver alone: it ignores If-None-Match: * on PutObject, so the second create overwrites and says true', async () => {
    const plain = await startS3Server({ bucket: 'plain', conditionalPut: false });
    try {
      const store = storeAt('s3://plain/create', { endpoint: plain.endpoint });
      expect(await store.createText('_delta_log/00000000000000000000.json', 'first')).toBe(true);
      expect(await store.createText('_delta_log/00000000000000000000.json', 'second')).toBe(true);
      expect(await store.getText('_delta_log/00000000000000000000.json')).toBe('second');
    } finally {
      await plain.close();
    }
  });

  it('read streams an object and throws OutputError when it is absent', async () => {
    const store = storeAt('s3://test-bucket/read');
    await store.putText('a.ndjson', '{"id":1}\n');
    expect(await sha256Of(await store.read('a.ndjson'))).toBe(createHash('sha256').update('{"id":1}\n').digest('hex'));
    await expect(store.read('missing.ndjson')).rejects.toThrow(OutputError);
    await expect(store.read('missing.ndjson')).rejects.toThrow('s3://test-bucket/read/missing.ndjson does not exist');
  });
});

describe('list and remove', () => {
  it('lists recursively, relative to the root, sorted, across pages', async () => {
    const store = storeAt('s3://test-bucket/lst', { listPageSize: 5 });
    const keys = Array.from({ length: 23 }, (_, i) => `events/part=${i % 3}/${String(i).padStart(6, '0')}.parquet`);
    for (const key of keys) await store.putText(key, key);
    await store.putText('_manifest.json', '{}');
    await storeAt('s3://test-bucket/lst2').putText('events/outside', 'not under lst/');

    const before = requestsUnder('').filter((r) => r.operation === 'ListObjectsV2').length;
    const listed = await store.list('events/');
    expect(listed).toEqual([...keys].sort());
    const pages = server.requests().filter((r) => r.operation === 'ListObjectsV2').slice(before);
    expect(pages).toHaveLength(5);
    expect(pages.slice(1).every((page) => page.query['continuation-token'] !== undefined)).toBe(true);
    expect(await store.list('')).toEqual(['_manifest.json', ...[...keys].sort()]);
    expect(await store.list('events/part=1/')).toEqual(keys.filter((key) => key.includes('part=1/')).sort());
    expect(await store.list('nothing/')).toEqual([]);
  });

  it('removes in batches of 1000; missing keys are fine', async () => {
    const store = storeAt('s3://test-bucket/rm');
    const keys = Array.from({ length: 2500 }, (_, i) => `shards/${String(i).padStart(6, '0')}.parquet`);
    // Many in one folder: s3rver's cleanup of emptied folders races unless the test server serializes it.
    const present = keys.filter((_, i) => i % 100 === 0 || i === 999 || i === 2499);
    for (const key of present) await store.putText(key, 'x');
    await store.putText('keep.json', '{}');
    expect(await store.list('')).toHaveLength(present.length + 1);

    await store.remove(keys);
    const deletes = requestsUnder('').filter((r) => r.operation === 'DeleteObjects');
    expect(deletes.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(await store.list('')).toEqual(['keep.json']);
    await store.remove([]);
    expect(server.requests().filter((r) => r.operation === 'DeleteObjects')).toHaveLength(3);
  });
});

describe('stage and publish', () => {
  it('a shard is staged in this process\'s staging folder, published under its key, and its staged file deleted', async () => {
    const store = storeAt('s3://test-bucket/staged', { staging: tempDir('s3-staging'), partSizeBytes: 5 * MiB });
    await store.prepare();
    const path = await expectStagedShardPublished(store);
    expect(path.endsWith(join('events', 'part=1-of-2', '000000.ndjson'))).toBe(true);
  });

  it('refuses to stage before the staging folder is prepared', async () => {
    await expect(storeAt('s3://test-bucket/unprepared').stage('a/000000.ndjson')).rejects.toThrow('not prepared');
  });
});

describe('publishFile', () => {
  it('uploads a small file in one PutObject and deletes the local copy', async () => {
    const store = objectsAt('s3://test-bucket/pub-small', { partSizeBytes: 5 * MiB });
    const file = localFile('000000.parquet', 100 * 1024);
    await store.publishFile(file.path, 'events/000000.parquet');
    expect(existsSync(file.path)).toBe(false);
    expect(await store.size('events/000000.parquet')).toBe(100 * 1024);
    expect(await sha256Of(await store.read('events/000000.parquet'))).toBe(file.sha256);
    expect(requestsUnder('pub-small/').map((r) => r.operation)).toEqual(['PutObject', 'HeadObject', 'GetObject']);
  });

  it('uploads a file larger than a part in parts, and resolves only after CompleteMultipartUpload', async () => {
    const store = objectsAt('s3://test-bucket/pub-multi', { partSizeBytes: 5 * MiB, queueSize: 2 });
    const file = localFile('big.parquet', 12 * MiB + 123);
    const complete = server.hold((r) => r.operation === 'CompleteMultipartUpload' && r.key.startsWith('pub-multi/'));
    let settled = false;
    const publishing = store.publishFile(file.path, 'events/big.parquet').finally(() => (settled = true));

    await complete.arrived;
    expect(await store.size('events/big.parquet')).toBeUndefined();
    expect(await store.list('')).toEqual([]);
    expect(server.uploadsInProgress()).toEqual(['pub-multi/events/big.parquet']);
    expect(settled).toBe(false);
    expect(existsSync(file.path)).toBe(true);
    complete.release();
    await publishing;

    const operations = requestsUnder('pub-multi/').filter((r) => r.method !== 'HEAD' && r.method !== 'GET');
    expect(operations.filter((r) => r.operation === 'CreateMultipartUpload')).toHaveLength(1);
    const parts = operations.filter((r) => r.operation === 'UploadPart').map((r) => r.query.partNumber).sort();
    expect(parts).toEqual(['1', '2', '3']);
    expect(operations.at(-1)?.operation).toBe('CompleteMultipartUpload');
    expect(server.uploadsInProgress()).toEqual([]);
    expect(existsSync(file.path)).toBe(false);
    expect(await store.size('events/big.parquet')).toBe(12 * MiB + 123);
    expect(await sha256Of(await store.read('events/big.parquet'))).toBe(file.sha256);
  });

  it('aborts the upload when a part fails, keeps the local file and names the key', async () => {
    const store = objectsAt('s3://test-bucket/pub-fail', { partSizeBytes: 5 * MiB, queueSize: 1 });
    const file = localFile('big.parquet', 11 * MiB);
    server.failNext((r) => r.operation === 'UploadPart' && r.query.partNumber === '2' && r.key.startsWith('pub-fail/'), {
      status: 403,
      code: 'AccessDenied',
    });
    const error = await store.publishFile(file.path, 'events/big.parquet').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(S3AccessError);
    expect(error).toMatchObject({ code: 'E_OUTPUT_ACCESS', s3Code: 'AccessDenied', httpStatus: 403 });
    expect((error as Error).message).toContain('s3://test-bucket/pub-fail/events/big.parquet');
    expect((error as Error).message).toContain('its policy does not allow this on the bucket');
    const aborts = requestsUnder('pub-fail/').filter((r) => r.operation === 'AbortMultipartUpload');
    expect(aborts.map((r) => r.status)).toEqual([204]);
    expect(server.uploadsInProgress()).toEqual([]);
    expect(await store.size('events/big.parquet')).toBeUndefined();
    expect(existsSync(file.path)).toBe(true);
  });

  it('reports the part failure, not the abort, when the server cannot abort (and leaves the upload)', async () => {
    const bare = await startS3Server({ abortMultipartUpload: false });
    const capture = captureLogger();
    const store = objectsAt('s3://test-bucket/pub-noabort', {
      endpoint: bare.endpoint,
      partSizeBytes: 5 * MiB,
      queueSize: 1,
      logger: capture.logger,
    });
    const file = localFile('big.parquet', 11 * MiB);
    bare.failNext((r) => r.operation === 'UploadPart' && r.query.partNumber === '2', { status: 403, code: 'AccessDenied' });
    await expect(store.publishFile(file.path, 'big.parquet')).rejects.toMatchObject({ s3Code: 'AccessDenied' });
    expect(requestsUnder('', bare).filter((r) => r.operation === 'AbortMultipartUpload').map((r) => r.status))
      .toEqual([405]);
    const warning = capture.records().find((record) => record.msg === 'could not abort the multipart upload');
    expect(warning).toMatchObject({ level: 40, key: 'big.parquet', s3Code: 'MethodNotAllowed' });
    expect(bare.uploadsInProgress()).toEqual(['pub-noabort/big.parquet']);

    await store.publishFile(file.path, 'big.parquet');
    expect(await sha256Of(await store.read('big.parquet'))).toBe(file.sha256);
  });

  it('leaves no object when the publishing process is killed mid-upload; a new publish completes', async () => {
    expect(existsSync(DIST_OBJECTS), `${DIST_OBJECTS} is missing: run npm run build`).toBe(true);
    const file = localFile('big.parquet', 12 * MiB);
    const url = 's3://test-bucket/killed';
    // With one part in flight, part 2 arriving means part 1 was stored; it is held so the kill lands mid-upload.
    const part2 = server.hold((r) => r.operation === 'UploadPart' && r.query.partNumber === '2' && r.key === 'killed/big.parquet');
    const script = [
      `const { createS3Objects } = await import(${JSON.stringify(pathToFileURL(DIST_OBJECTS).href)});`,
      `const { silentLogger } = await import(${JSON.stringify(pathToFileURL(DIST_LOG).href)});`,
      'const [endpoint, url, file, access] = process.argv.slice(1);',
      'const options = { url, endpoint, partSizeBytes: 5 * 1024 * 1024, queueSize: 1, logger: silentLogger };',
      'const objects = createS3Objects({ ...options, ...JSON.parse(access) });',
      "await objects.publishFile(file, 'big.parquet');",
    ].join('\n');
    const args = [server.endpoint, url, file.path, JSON.stringify(S3RVER_ACCESS)];
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, ...args], {
      env: process.env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = once(child, 'exit');
    await Promise.race([part2.arrived, exited.then(() => Promise.reject(new Error(`publisher exited early: ${stderr}`)))]);
    child.kill('SIGKILL');
    expect((await exited)[1]).toBe('SIGKILL');

    const store = objectsAt(url, { partSizeBytes: 5 * MiB });
    expect(await store.size('big.parquet')).toBeUndefined();
    expect(await store.list('')).toEqual([]);
    const [dangling, ...others] = server.pendingUploads().filter((upload) => upload.key === 'killed/big.parquet');
    expect(others).toEqual([]);
    expect(dangling?.parts).toEqual([{ number: 1, bytes: 5 * MiB }]);
    expect(existsSync(file.path)).toBe(true);

    await store.publishFile(file.path, 'big.parquet');
    expect(await sha256Of(await store.read('big.parquet'))).toBe(file.sha256);
    // The killed upload stays until something aborts it (on S3: a lifecycle rule); it never becomes an object.
    expect(server.pendingUploads().map((upload) => upload.uploadId)).toEqual([dangling?.uploadId]);
  });
});

describe('errors', () => {
  it('names a missing bucket and says what to do', async () => {
    const store = objectsAt('s3://no-such-bucket/x');
    const error = await store.putText('_checkpoint.json', '{}').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutputAccessError);
    expect(error).toMatchObject({ code: 'E_OUTPUT_ACCESS', s3Code: 'NoSuchBucket', httpStatus: 404, operation: 'PutObject' });
    expect((error as Error).message).toBe(
      'S3 PutObject of s3://no-such-bucket/x/_checkpoint.json failed: NoSuchBucket (HTTP 404): The specified bucket does not exist. The bucket "no-such-bucket" does not exist: create it or fix output.dir.',
    );
    await expect(store.getText('_checkpoint.json')).rejects.toThrow('create it or fix output.dir');
    await expect(store.list('')).rejects.toThrow('NoSuchBucket');
    const file = localFile('f.parquet', 10);
    await expect(store.publishFile(file.path, 'f.parquet')).rejects.toThrow('s3://no-such-bucket/x/f.parquet failed: NoSuchBucket');
  });

  // docs/errors.md: the bucket missing or not allowed is exit 2 (E_OUTPUT_ACCESS); the credential refused exit 3.
  it.each([
    [404, 'NoSuchBucket', 'E_OUTPUT_ACCESS', 'create it or fix output.dir'],
    [403, 'AccessDenied', 'E_OUTPUT_ACCESS', 'The credential works, but its policy does not allow this on the bucket "test-bucket"'],
    [403, 'SignatureDoesNotMatch', 'E_OUTPUT_AUTH', 'Check the credentials in the environment'],
    [403, 'InvalidAccessKeyId', 'E_OUTPUT_AUTH', 'Check the credentials in the environment'],
    [400, 'ExpiredToken', 'E_OUTPUT_AUTH', 'Check the credentials in the environment'],
    [400, 'InvalidToken', 'E_OUTPUT_AUTH', 'Check the credentials in the environment'],
    [403, 'Whatever', 'E_OUTPUT_AUTH', 'and that their policy allows this on the bucket "test-bucket"'],
    [400, 'InvalidArgument', 'E_OUTPUT', 'run again to resume'],
  ])('HTTP %i %s is %s, saying what to do', async (status, code, expected, hint) => {
    server.failNext((r) => r.key === `kinds/${code}.json`, { status, code });
    const error = await storeAt('s3://test-bucket/kinds').putText(`${code}.json`, '{}').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: expected, s3Code: code, httpStatus: status });
    expect((error as Error).message).toContain(hint);
  });

  it('fails fast with a hint when the endpoint is unreachable', async () => {
    const port = await closedPort();
    const store = storeAt('s3://test-bucket/x', { endpoint: `http://127.0.0.1:${port}`, maxAttempts: 2 });
    const started = performance.now();
    const error = await store.putText('a', 'b').catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(5000);
    expect(error).toBeInstanceOf(OutputError);
    expect((error as Error).message).toContain(`ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:${port}`);
    expect((error as Error).message).toContain(`http://127.0.0.1:${port} is unreachable: check output.s3.endpoint`);
  });

  it('never shows the secret key or session token, in messages, causes or logs', async () => {
    const secret = 'FAKE-SECRET-KEY-9f8e7d6c5b4a';
    const token = 'FAKE-SESSION-TOKEN-1a2b3c4d5e';
    const capture = captureLogger();
    const checking = await startS3Server({ checkSignatures: true });
    const texts: string[] = [];
    const fail = async (store: S3Objects, expected: string) => {
      const file = localFile('f.parquet', 6 * MiB);
      const attempts: (() => Promise<unknown>)[] = [
        () => store.putText('a.json', '{}'), () => store.getText('a.json'), () => store.list(''),
        () => store.remove(['a.json']), () => store.read('a.json'), () => store.publishFile(file.path, 'f.parquet'),
        () => store.size('a.json'), // HEAD: no body, so no S3 code, only 403 Forbidden
      ];
      for (const attempt of attempts) {
        const error = await attempt().then(() => undefined, (e: unknown) => e);
        // The credential refused, HEAD's bare 403 too: exit 3 (docs/errors.md).
        expect(error).toBeInstanceOf(OutputAuthError);
        expect((error as Error).message).toMatch(attempt === attempts.at(-1) ? 'Forbidden (HTTP 403)' : expected);
        expect((error as Error).message).toContain('Check the credentials in the environment');
        capture.logger.error({ err: error }, 'failed');
        texts.push(inspect(error, { depth: null, showHidden: true }), JSON.stringify(error));
      }
    };
    const unknownKey = { accessKeyId: 'AKIAFAKEFORTESTS', secretAccessKey: secret, sessionToken: token };
    const options = { logger: capture.logger, partSizeBytes: 5 * MiB, credentials: unknownKey };
    await fail(objectsAt('s3://test-bucket/secret', options), 'InvalidAccessKeyId');
    // The key id s3rver knows, with the wrong secret, on a server that checks signatures.
    const wrongSecret = { accessKeyId: 'S3RVER', secretAccessKey: secret, sessionToken: token };
    const store = objectsAt('s3://test-bucket/secret', { endpoint: checking.endpoint, logger: capture.logger, credentials: wrongSecret });
    await fail(store, 'SignatureDoesNotMatch');
    expect(texts).toHaveLength(28);
    const logged = capture.lines().join('\n');
    expect(logged).toContain('InvalidAccessKeyId');
    for (const text of [...texts, logged]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(token);
    }
    // The checking server does accept the right secret, so the failures above were the secret's.
    await storeAt('s3://test-bucket/secret', { endpoint: checking.endpoint }).putText('ok', 'ok');
  });

  it("drops an error's fields that may hold the session token (S3 echoes the canonical request)", async () => {
    const token = 'FAKE-SESSION-TOKEN-echoed-7c6d';
    server.failNext((r) => r.key === 'echo/a.json', {
      status: 403,
      code: 'SignatureDoesNotMatch',
      detail: { CanonicalRequest: `PUT\n/test-bucket/echo/a.json\nx-amz-security-token:${token}`, RequestId: 'R1' },
    });
    const error = await storeAt('s3://test-bucket/echo').putText('a.json', '{}').catch((e: unknown) => e);
    expect(error).toMatchObject({ s3Code: 'SignatureDoesNotMatch', cause: { RequestId: 'R1' } });
    expect(inspect(error, { depth: null, showHidden: true })).not.toContain(token);
  });
});
