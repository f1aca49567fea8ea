import { createReadStream } from 'node:fs';
import { stat, unlink } from 'node:fs/promises';
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { ConfigError, OutputError } from '../errors.js';
import { crashPoint } from '../util/crash-point.js';
import type { Logger } from '../log.js';
import { errorCode, isAbsent, isPreconditionFailed, s3Error, S3OutputError, safeCause } from './s3-errors.js';
import { parseS3Url } from './s3-url.js';
import type { OutputStore } from './store.js';

/** The object operations of an S3 store; s3-store.ts adds staging, the lock and the probe. */
export type S3Objects = Pick<
  OutputStore,
  'location' | 'where' | 'putText' | 'getText' | 'size' | 'keys' | 'list' | 'remove' | 'read' | 'close'
> & {
  /**
   * Uploads the local file `localPath` to `key` (multipart), resolved only after
   * CompleteMultipartUpload succeeded; then the local file is deleted. On failure the upload is
   * aborted (best effort) and the error is an OutputError naming the key.
   */
  publishFile(localPath: string, key: string): Promise<void>;
  /** Creates `key` only if it does not exist (If-None-Match: *); false when it does. */
  putTextIfAbsent(key: string, text: string): Promise<boolean>;
};

/** Credentials for S3, for callers that hold them (tests, library use); a run leaves them to the SDK's chain. */
export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

const MiB = 1024 * 1024;
/** S3's limits: parts of 5 MiB to 5 GiB (but the last), at most 10,000 parts, 1,000 keys per delete or list page. */
const MIN_PART_BYTES = 5 * MiB;
const MAX_PART_BYTES = 5 * 1024 * MiB;
const MAX_PARTS = 10_000;
const MAX_BATCH = 1000;

export interface S3StoreOptions {
  /** `output.dir`: `s3://bucket` or `s3://bucket/prefix`. */
  url: string;
  /** An S3-compatible endpoint (MinIO, Ceph, s3rver), e.g. `http://127.0.0.1:9000`. Default: AWS S3. */
  endpoint?: string | undefined;
  /** Default: 'us-east-1' when an endpoint is given, else the SDK's lookup (env AWS_REGION, the profile). */
  region?: string | undefined;
  /**
   * Default: the SDK's default provider chain (AWS_ACCESS_KEY_ID and the rest of the environment,
   * the profile, the pod's web identity, an instance role).
   */
  credentials?: S3Credentials | undefined;
  /** Addresses `endpoint/bucket/key` instead of `bucket.endpoint/key`. Default: true when an endpoint is given. */
  forcePathStyle?: boolean | undefined;
  /** Bytes per multipart part. Default 16 MiB, at least 5 MiB; raised for files that would need > 10,000 parts. */
  partSizeBytes?: number | undefined;
  /** Parts in flight per publish; each buffers one part in memory. Default 4. */
  queueSize?: number | undefined;
  /** Attempts per request, the first included (the SDK's standard retry mode). Default 3. */
  maxAttempts?: number | undefined;
  /** Time to open a connection. Default 10,000 ms. */
  connectionTimeoutMs?: number | undefined;
  /** Time a connection may stay silent before the request fails (and is retried). Default 120,000 ms. */
  socketIdleTimeoutMs?: number | undefined;
  /** Keys per list request (1 to 1000). Default 1000; tests lower it to exercise pagination. */
  listPageSize?: number | undefined;
  logger: Logger;
}

/** A bucket prefix and the client that reaches it: what every operation below works with. */
interface Bucket {
  client: S3Client;
  bucket: string;
  /** s3://bucket/prefix, for messages and logs. */
  location: string;
  /** The prefix with its trailing '/', or ''. */
  root: string;
  log: Logger;
  partSize: number;
  queueSize: number;
  pageSize: number;
  /** The URL of a key, for messages. */
  url: (key: string) => string;
  /** A failed request as an S3OutputError naming the operation and the object. */
  fail: (operation: string, key: string, error: unknown) => S3OutputError;
}

/** Objects on S3 or an S3-compatible server. */
export function createS3Objects(options: S3StoreOptions): S3Objects {
  const at = bucketOf(options);
  return {
    location: at.location,
    where: at.url,
    publishFile: (localPath, key) => publishFile(at, localPath, key),
    putText: (key, text) => putText(at, key, text),
    putTextIfAbsent: (key, text) => putTextIfAbsent(at, key, text),
    getText: (key) => getText(at, key),
    size: (key) => size(at, key),
    keys: (prefix) => listKeys(at, prefix),
    async list(prefix) {
      const keys: string[] = [];
      for await (const key of listKeys(at, prefix)) keys.push(key);
      return keys.sort();
    },
    remove: (keys) => removeKeys(at, keys),
    read: (key) => readObject(at, key),
    close() {
      at.client.destroy();
      return Promise.resolve();
    },
  };
}

/** The client and the names of the bucket prefix `options.url`, with the options checked. */
function bucketOf(options: S3StoreOptions): Bucket {
  const { bucket, prefix } = parseS3Url(options.url);
  const endpoint = options.endpoint === undefined ? undefined : endpointOrigin(options.endpoint);
  const root = prefix === '' ? '' : `${prefix}/`;
  const url = (key: string) => `s3://${bucket}/${root}${key}`;
  const location = `s3://${bucket}${prefix === '' ? '' : `/${prefix}`}`;
  return {
    client: clientOf(options, endpoint !== undefined),
    bucket,
    location,
    root,
    log: options.logger.child({ output: location }),
    partSize: integerOption('partSizeBytes', options.partSizeBytes ?? 16 * MiB, MIN_PART_BYTES, MAX_PART_BYTES),
    queueSize: integerOption('queueSize', options.queueSize ?? 4, 1, 64),
    pageSize: integerOption('listPageSize', options.listPageSize ?? MAX_BATCH, 1, MAX_BATCH),
    url,
    fail: (operation, key, error) => s3Error(operation, url(key), bucket, endpoint, error),
  };
}

function clientOf(options: S3StoreOptions, hasEndpoint: boolean): S3Client {
  const region = options.region ?? (hasEndpoint ? 'us-east-1' : undefined);
  return new S3Client({
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    ...(region === undefined ? {} : { region }),
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    forcePathStyle: options.forcePathStyle ?? hasEndpoint,
    maxAttempts: integerOption('maxAttempts', options.maxAttempts ?? 3, 1, 20),
    // The SDK's default adds CRC32 checksums to every upload (aws-chunked bodies with trailers) and insists on
    // them in downloads; many S3-compatible servers (s3rver, older MinIO and Ceph) reject or omit those.
    // 'WHEN_REQUIRED' sends checksums only where S3 demands one (DeleteObjects) and works everywhere.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: {
      connectionTimeout: options.connectionTimeoutMs ?? 10_000,
      socketTimeout: options.socketIdleTimeoutMs ?? 120_000,
    },
  });
}

function integerOption(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`S3 option ${name} must be an integer from ${min} to ${max}; got ${value}.`);
  }
  return value;
}

/** Runs one request; its failure becomes an S3OutputError naming the operation and the object. */
async function request<T>(at: Bucket, operation: string, key: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    throw at.fail(operation, key, error);
  }
}

async function publishFile(at: Bucket, localPath: string, key: string): Promise<void> {
  const started = performance.now();
  const bytes = await localSize(at, localPath, key);
  const uploadId = await upload(at, localPath, bytes, key);
  try {
    await unlink(localPath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new OutputError(`Published ${at.url(key)} but could not delete ${localPath} (${errorCode(error)}).`, {
        cause: error,
      });
    }
  }
  const ms = Math.round(performance.now() - started);
  at.log.debug({ key, bytes, multipart: uploadId !== undefined, ms }, 'file published');
}

async function localSize(at: Bucket, localPath: string, key: string): Promise<number> {
  try {
    return (await stat(localPath)).size;
  } catch (error) {
    throw new OutputError(`Publishing ${localPath} to ${at.url(key)} failed: cannot read the local file (${errorCode(error)}).`, {
      cause: error,
    });
  }
}

/** Uploads a local file whole (multipart when past one part); resolves to its upload id, if multipart. */
async function upload(at: Bucket, localPath: string, bytes: number, key: string): Promise<string | undefined> {
  const body = createReadStream(localPath);
  const upload = new Upload({
    client: at.client,
    params: { Bucket: at.bucket, Key: at.root + key, Body: body, ContentLength: bytes },
    partSize: Math.max(at.partSize, Math.ceil(bytes / MAX_PARTS)),
    queueSize: at.queueSize,
    // We abort ourselves: lib-storage's own abort would replace the cause with the abort's error.
    leavePartsOnError: true,
  });
  // Fires as each part is received: the upload is not complete yet (crash tests stop here).
  upload.on('httpUploadProgress', () => crashPoint('after-upload-part'));
  try {
    await upload.done();
    return upload.uploadId;
  } catch (error) {
    await abortUpload(at, upload.uploadId, key);
    throw at.fail('upload', key, error);
  } finally {
    body.destroy();
  }
}

async function abortUpload(at: Bucket, uploadId: string | undefined, key: string): Promise<void> {
  if (uploadId === undefined) return;
  try {
    const abort = new AbortMultipartUploadCommand({ Bucket: at.bucket, Key: at.root + key, UploadId: uploadId });
    await at.client.send(abort);
  } catch (error) {
    // Best effort: the parts stay (invisible, but stored) until an AbortIncompleteMultipartUpload rule
    // of the bucket's lifecycle removes them. The publish failed either way and reports its own error.
    at.log.warn({ key, uploadId, s3Code: errorCode(error) }, 'could not abort the multipart upload');
  }
}

async function putText(at: Bucket, key: string, text: string): Promise<void> {
  const body = Buffer.from(text, 'utf8');
  const type = key.endsWith('.json') ? 'application/json' : 'text/plain; charset=utf-8';
  await request(at, 'PutObject', key, () => at.client.send(new PutObjectCommand({
    Bucket: at.bucket, Key: at.root + key, Body: body, ContentLength: body.length, ContentType: type,
  })));
}

async function putTextIfAbsent(at: Bucket, key: string, text: string): Promise<boolean> {
  const body = Buffer.from(text, 'utf8');
  try {
    await at.client.send(new PutObjectCommand({
      Bucket: at.bucket, Key: at.root + key, Body: body, ContentLength: body.length, IfNoneMatch: '*',
    }));
    return true;
  } catch (error) {
    // 412: it exists. 409 (ConditionalRequestConflict): another conditional write of it is in progress.
    if (isPreconditionFailed(error)) return false;
    throw at.fail('PutObject', key, error);
  }
}

async function getText(at: Bucket, key: string): Promise<string | undefined> {
  try {
    const object = await at.client.send(new GetObjectCommand({ Bucket: at.bucket, Key: at.root + key }));
    return (await object.Body?.transformToString('utf-8')) ?? '';
  } catch (error) {
    if (isAbsent(error)) return undefined;
    throw at.fail('GetObject', key, error);
  }
}

async function size(at: Bucket, key: string): Promise<number | undefined> {
  try {
    const head = await at.client.send(new HeadObjectCommand({ Bucket: at.bucket, Key: at.root + key }));
    return head.ContentLength ?? 0;
  } catch (error) {
    // A HEAD response has no body, so a missing bucket reads as a missing key here; every other
    // operation names it.
    if (isAbsent(error)) return undefined;
    throw at.fail('HeadObject', key, error);
  }
}

async function readObject(at: Bucket, key: string): Promise<NodeJS.ReadableStream> {
  let body: unknown;
  try {
    body = (await at.client.send(new GetObjectCommand({ Bucket: at.bucket, Key: at.root + key }))).Body;
  } catch (error) {
    if (isAbsent(error)) throw new OutputError(`${at.url(key)} does not exist.`, { cause: safeCause(error) });
    throw at.fail('GetObject', key, error);
  }
  if (!(body instanceof Readable)) throw new OutputError(`GetObject of ${at.url(key)} returned no readable body.`);
  return body;
}

/** The keys under `prefix`, a ListObjectsV2 page at a time (in the server's order: by key). */
async function* listKeys(at: Bucket, prefix: string): AsyncGenerator<string> {
  let token: string | undefined;
  do {
    const page = await request(at, 'ListObjectsV2', prefix, () =>
      at.client.send(new ListObjectsV2Command({
        Bucket: at.bucket,
        Prefix: at.root + prefix,
        MaxKeys: at.pageSize,
        ...(token === undefined ? {} : { ContinuationToken: token }),
      })));
    for (const { Key } of page.Contents ?? []) if (Key !== undefined) yield Key.slice(at.root.length);
    token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
    if (page.IsTruncated === true && token === undefined) {
      throw new OutputError(`Listing ${at.url(prefix)} failed: the server said there is more but sent no continuation token.`);
    }
  } while (token !== undefined);
}

async function removeKeys(at: Bucket, keys: readonly string[]): Promise<void> {
  for (let start = 0; start < keys.length; start += MAX_BATCH) {
    const batch = keys.slice(start, start + MAX_BATCH);
    const objects = batch.map((key) => ({ Key: at.root + key }));
    const result = await request(at, 'DeleteObjects', batch[0] ?? '', () =>
      at.client.send(new DeleteObjectsCommand({ Bucket: at.bucket, Delete: { Objects: objects, Quiet: true } })));
    const [first] = result.Errors ?? [];
    if (first !== undefined) {
      const key = (first.Key ?? '').slice(at.root.length);
      const count = result.Errors?.length ?? 1;
      throw new S3OutputError(
        `DeleteObjects failed for ${count} key(s), first ${at.url(key)}: ${first.Code ?? 'error'}: ${first.Message ?? ''}`,
        'DeleteObjects', at.url(key), first.Code ?? 'error', undefined, { cause: result.Errors },
      );
    }
  }
}

/** The endpoint's origin (scheme, host, port), which is safe to show: no user info, path or query. */
function endpointOrigin(endpoint: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(endpoint);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || !['http:', 'https:'].includes(parsed.protocol) || parsed.username !== '') {
    throw new ConfigError('output.s3.endpoint must be an http:// or https:// address without credentials.');
  }
  return parsed.origin;
}
