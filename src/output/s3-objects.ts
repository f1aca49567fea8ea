import { Readable } from 'node:stream';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { OutputError } from '../errors.js';
import { type Bucket, bucketOf, MAX_BATCH, request, type S3StoreOptions } from './s3-bucket.js';
import { isAbsent, isPreconditionFailed, S3OutputError, safeCause } from './s3-errors.js';
import { publishFile } from './s3-upload.js';
import { sortedKeys, type StoreObjects } from './object-store.js';

/** The object operations of an S3 store; object-store.ts adds staging, the lock and the probe. */
export type S3Objects = StoreObjects;

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
    list: (prefix) => sortedKeys(listKeys(at, prefix)),
    remove: (keys) => removeKeys(at, keys),
    read: (key) => readObject(at, key),
    close() {
      at.client.destroy();
      return Promise.resolve();
    },
  };
}

function contentType(key: string): string {
  return key.endsWith('.json') ? 'application/json' : 'text/plain; charset=utf-8';
}

async function putText(at: Bucket, key: string, text: string): Promise<void> {
  const body = Buffer.from(text, 'utf8');
  await request(at, 'PutObject', key, () => at.client.send(new PutObjectCommand({
    Bucket: at.bucket, Key: at.root + key, Body: body, ContentLength: body.length, ContentType: contentType(key),
  })));
}

async function putTextIfAbsent(at: Bucket, key: string, text: string): Promise<boolean> {
  const body = Buffer.from(text, 'utf8');
  try {
    await at.client.send(new PutObjectCommand({
      Bucket: at.bucket, Key: at.root + key, Body: body, ContentLength: body.length, ContentType: contentType(key),
      IfNoneMatch: '*',
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
