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
  'location' | 'where' | 'publishFile' | 'putText' | 'getText' | 'size' | 'list' | 'remove' | 'read' | 'close'
> & {
  /** Creates `key` only if it does not exist (If-None-Match: *); false when it does. */
  putTextIfAbsent(key: string, text: string): Promise<boolean>;
};

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
  /** Default: env `AWS_REGION`, else 'us-east-1' when an endpoint is given, else the SDK's lookup (profile). */
  region?: string | undefined;
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

function integerOption(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`S3 option ${name} must be an integer from ${min} to ${max}; got ${value}.`);
  }
  return value;
}

/** Objects on S3 or an S3-compatible server. Credentials come from the SDK's default provider chain. */
export function createS3Objects(options: S3StoreOptions): S3Objects {
  const { bucket, prefix } = parseS3Url(options.url);
  const partSize = integerOption('partSizeBytes', options.partSizeBytes ?? 16 * MiB, MIN_PART_BYTES, MAX_PART_BYTES);
  const queueSize = integerOption('queueSize', options.queueSize ?? 4, 1, 64);
  const pageSize = integerOption('listPageSize', options.listPageSize ?? MAX_BATCH, 1, MAX_BATCH);
  const endpointUrl = options.endpoint;
  const endpoint = endpointUrl === undefined ? undefined : endpointOrigin(endpointUrl);
  const region = options.region ?? (endpoint === undefined ? process.env.AWS_REGION : process.env.AWS_REGION ?? 'us-east-1');
  const client = new S3Client({
    ...(endpointUrl === undefined ? {} : { endpoint: endpointUrl }),
    ...(region === undefined ? {} : { region }),
    forcePathStyle: options.forcePathStyle ?? endpoint !== undefined,
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
  const root = prefix === '' ? '' : `${prefix}/`;
  const location = `s3://${bucket}${prefix === '' ? '' : `/${prefix}`}`;
  const log = options.logger.child({ output: location });
  const url = (key: string) => `s3://${bucket}/${root}${key}`;
  const fail = (operation: string, key: string, error: unknown) =>
    s3Error(operation, url(key), bucket, endpoint, error);
  /** Runs one request; its failure becomes an S3OutputError naming the operation and the object. */
  async function request<T>(operation: string, key: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      throw fail(operation, key, error);
    }
  }

  async function abortUpload(uploadId: string | undefined, key: string): Promise<void> {
    if (uploadId === undefined) return;
    try {
      await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: root + key, UploadId: uploadId }));
    } catch (error) {
      // Best effort: the parts stay (invisible, but stored) until an AbortIncompleteMultipartUpload rule
      // of the bucket's lifecycle removes them. The publish failed either way and reports its own error.
      log.warn({ key, uploadId, s3Code: errorCode(error) }, 'could not abort the multipart upload');
    }
  }

  return {
    location,

    where: url,

    async publishFile(localPath, key) {
      const started = performance.now();
      let bytes: number;
      try {
        bytes = (await stat(localPath)).size;
      } catch (error) {
        throw new OutputError(`Publishing ${localPath} to ${url(key)} failed: cannot read the local file (${errorCode(error)}).`, {
          cause: error,
        });
      }
      const body = createReadStream(localPath);
      const upload = new Upload({
        client,
        params: { Bucket: bucket, Key: root + key, Body: body, ContentLength: bytes },
        partSize: Math.max(partSize, Math.ceil(bytes / MAX_PARTS)),
        queueSize,
        // We abort ourselves: lib-storage's own abort would replace the cause with the abort's error.
        leavePartsOnError: true,
      });
      // Fires as each part is received: the upload is not complete yet (crash tests stop here).
      upload.on('httpUploadProgress', () => crashPoint('after-upload-part'));
      try {
        await upload.done();
      } catch (error) {
        await abortUpload(upload.uploadId, key);
        throw fail('upload', key, error);
      } finally {
        body.destroy();
      }
      try {
        await unlink(localPath);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
          throw new OutputError(`Published ${url(key)} but could not delete ${localPath} (${errorCode(error)}).`, {
            cause: error,
          });
        }
      }
      const ms = Math.round(performance.now() - started);
      log.debug({ key, bytes, multipart: upload.uploadId !== undefined, ms }, 'file published');
    },

    async putText(key, text) {
      const body = Buffer.from(text, 'utf8');
      const type = key.endsWith('.json') ? 'application/json' : 'text/plain; charset=utf-8';
      await request('PutObject', key, () => client.send(new PutObjectCommand({
        Bucket: bucket, Key: root + key, Body: body, ContentLength: body.length, ContentType: type,
      })));
    },

    async putTextIfAbsent(key, text) {
      const body = Buffer.from(text, 'utf8');
      try {
        await client.send(new PutObjectCommand({
          Bucket: bucket, Key: root + key, Body: body, ContentLength: body.length, IfNoneMatch: '*',
        }));
        return true;
      } catch (error) {
        // 412: it exists. 409 (ConditionalRequestConflict): another conditional write of it is in progress.
        if (isPreconditionFailed(error)) return false;
        throw fail('PutObject', key, error);
      }
    },

    async getText(key) {
      try {
        const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: root + key }));
        return (await object.Body?.transformToString('utf-8')) ?? '';
      } catch (error) {
        if (isAbsent(error)) return undefined;
        throw fail('GetObject', key, error);
      }
    },

    async size(key) {
      try {
        const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: root + key }));
        return head.ContentLength ?? 0;
      } catch (error) {
        // A HEAD response has no body, so a missing bucket reads as a missing key here; every other
        // operation names it.
        if (isAbsent(error)) return undefined;
        throw fail('HeadObject', key, error);
      }
    },

    async list(folder) {
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await request('ListObjectsV2', folder, () =>
          client.send(new ListObjectsV2Command({
            Bucket: bucket,
            Prefix: root + folder,
            MaxKeys: pageSize,
            ...(token === undefined ? {} : { ContinuationToken: token }),
          })));
        for (const { Key } of page.Contents ?? []) if (Key !== undefined) keys.push(Key.slice(root.length));
        token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
        if (page.IsTruncated === true && token === undefined) {
          throw new OutputError(`Listing ${url(folder)} failed: the server said there is more but sent no continuation token.`);
        }
      } while (token !== undefined);
      return keys.sort();
    },

    async remove(keys) {
      for (let start = 0; start < keys.length; start += MAX_BATCH) {
        const batch = keys.slice(start, start + MAX_BATCH);
        const objects = batch.map((key) => ({ Key: root + key }));
        const result = await request('DeleteObjects', batch[0] ?? '', () =>
          client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: objects, Quiet: true } })));
        const [first] = result.Errors ?? [];
        if (first !== undefined) {
          const key = (first.Key ?? '').slice(root.length);
          const count = result.Errors?.length ?? 1;
          throw new S3OutputError(
            `DeleteObjects failed for ${count} key(s), first ${url(key)}: ${first.Code ?? 'error'}: ${first.Message ?? ''}`,
            'DeleteObjects', url(key), first.Code ?? 'error', undefined, { cause: result.Errors },
          );
        }
      }
    },

    async read(key) {
      let body: unknown;
      try {
        body = (await client.send(new GetObjectCommand({ Bucket: bucket, Key: root + key }))).Body;
      } catch (error) {
        if (isAbsent(error)) throw new OutputError(`${url(key)} does not exist.`, { cause: safeCause(error) });
        throw fail('GetObject', key, error);
      }
      if (!(body instanceof Readable)) throw new OutputError(`GetObject of ${url(key)} returned no readable body.`);
      return body;
    },

    close() {
      client.destroy();
      return Promise.resolve();
    },
  };
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
