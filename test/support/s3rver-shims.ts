import { existsSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import type { S3Request } from './s3-server.js';

/**
 * The shims the test S3 server (s3-server.ts) puts into s3rver 4.0.4's middleware, for what it
 * lacks or gets wrong (that file's comment says which), and the reading of a request
 * as an S3 operation that they and the server's observer share.
 */

// The untyped parts of s3rver (a Koa application) that the test server uses.
export interface Ctx {
  method: string;
  path: string;
  query: Record<string, string | string[] | undefined>;
  status: number;
  body: unknown;
  type: string;
  respond: boolean;
  req: IncomingMessage;
  res: ServerResponse;
  store: FsStore;
}
export type Middleware = (ctx: Ctx, next: () => Promise<void>) => Promise<void>;
interface ListResult {
  objects: { key: string }[];
  isTruncated?: boolean;
}
export interface FsStore {
  listObjects(bucket: string, options: { startAfter?: string }): Promise<ListResult>;
  deleteObject(bucket: string, key: string): Promise<void>;
  existsObject(bucket: string, key: string): Promise<boolean>;
}

/** The S3 operation a request is, with its key and query (status 0 until answered). */
export function describe(ctx: Ctx): S3Request {
  const query = Object.fromEntries(
    Object.entries(ctx.query).map(([name, value]) => [name, Array.isArray(value) ? value[0] ?? '' : value ?? '']),
  );
  const [, bucket = '', ...rest] = ctx.path.split('/');
  const key = rest.map((segment) => decodeURIComponent(segment)).join('/');
  return { operation: operationOf(ctx.method, bucket, key, query), method: ctx.method, key, query, status: 0 };
}

function operationOf(method: string, bucket: string, key: string, query: Record<string, string>): string {
  if (bucket === '') return method === 'GET' ? 'ListBuckets' : method;
  if (key === '') {
    if (method === 'GET') return query['list-type'] === '2' ? 'ListObjectsV2' : 'ListObjects';
    if (method === 'POST' && 'delete' in query) return 'DeleteObjects';
    return { PUT: 'CreateBucket', HEAD: 'HeadBucket', DELETE: 'DeleteBucket' }[method] ?? method;
  }
  if (method === 'PUT') return 'partNumber' in query ? 'UploadPart' : 'PutObject';
  if (method === 'POST') return 'uploads' in query ? 'CreateMultipartUpload' : 'CompleteMultipartUpload';
  if (method === 'DELETE') return 'uploadId' in query ? 'AbortMultipartUpload' : 'DeleteObject';
  return method === 'HEAD' ? 'HeadObject' : 'GetObject';
}

function s3Error(ctx: Ctx, status: number, code: string, message: string): void {
  ctx.status = status;
  ctx.body = { Error: { Code: code, Message: message } };
}

/** AbortMultipartUpload: drops the upload's folder (its parts) if the upload exists for that key. */
export function abortShim(uploadsDir: string): Middleware {
  return async (ctx, next) => {
    const request = describe(ctx);
    if (request.operation !== 'AbortMultipartUpload') return next();
    const uploadId = request.query.uploadId ?? '';
    const dir = join(uploadsDir, uploadId);
    const known = /^[0-9a-f]+$/.test(uploadId) && existsSync(join(dir, 'key'));
    if (!known || readFileSync(join(dir, 'key'), 'utf8') !== request.key) {
      s3Error(ctx, 404, 'NoSuchUpload', 'The specified upload does not exist.');
      return Promise.resolve();
    }
    rmSync(dir, { recursive: true, force: true });
    ctx.status = 204;
    return Promise.resolve();
  };
}

const TOKEN_PREFIX = 'shim:';

/** ListObjectsV2 pagination with tokens of its own (base64url of the last key) instead of s3rver's DES ones. */
export const listTokenShim: Middleware = async (ctx, next) => {
  const request = describe(ctx);
  if (request.operation !== 'ListObjectsV2') return next();
  const token = request.query['continuation-token'];
  let startAfter: string | undefined;
  if (token !== undefined) {
    // The signature covers the query, which changes here; s3rver checks signatures only when asked to.
    startAfter = Buffer.from(token.slice(TOKEN_PREFIX.length), 'base64url').toString('utf8');
    const { 'continuation-token': _token, ...rest } = ctx.query;
    ctx.query = { ...rest, 'start-after': startAfter };
  }
  const real = ctx.store;
  let lastKey: string | undefined;
  ctx.store = Object.create(real, {
    listObjects: {
      value: async (bucket: string, options: { startAfter?: string }) => {
        const result = await real.listObjects(bucket, options);
        if (result.isTruncated !== true) return result;
        lastKey = result.objects.at(-1)?.key;
        return { ...result, isTruncated: false };
      },
    },
  }) as FsStore;
  await next();
  const body = (ctx.body as { ListBucketResult?: Record<string, unknown> } | undefined)?.ListBucketResult;
  if (body === undefined) return;
  if (token !== undefined) {
    body.ContinuationToken = token;
    body.StartAfter = undefined;
  }
  if (lastKey !== undefined) {
    body.IsTruncated = true;
    body.NextContinuationToken = TOKEN_PREFIX + Buffer.from(lastKey).toString('base64url');
  }
};

/** DeleteObjects: s3rver's deletions, one at a time. */
export const serialDeleteShim: Middleware = async (ctx, next) => {
  if (describe(ctx).operation !== 'DeleteObjects') return next();
  const real = ctx.store;
  let queue = Promise.resolve();
  ctx.store = Object.create(real, {
    deleteObject: {
      value: (bucket: string, key: string) => (queue = queue.then(() => real.deleteObject(bucket, key))),
    },
  }) as FsStore;
  return next();
};

/**
 * PutObject with `If-None-Match: *` (S3's conditional write, which s3rver ignores): 412
 * PreconditionFailed when the object exists, as S3 answers. Conditional puts of one key are served
 * one after another, so that two at once cannot both create it.
 */
export function conditionalPutShim(): Middleware {
  const queues = new Map<string, Promise<void>>();
  return async (ctx, next) => {
    const request = describe(ctx);
    if (request.operation !== 'PutObject' || ctx.req.headers['if-none-match'] !== '*') return next();
    const bucket = ctx.path.split('/')[1] ?? '';
    const before = queues.get(request.key) ?? Promise.resolve();
    let done = () => {};
    const mine = new Promise<void>((resolve) => (done = resolve));
    queues.set(request.key, before.then(() => mine));
    await before;
    try {
      if (await ctx.store.existsObject(bucket, request.key)) {
        ctx.req.resume();
        await finished(ctx.req);
        s3Error(ctx, 412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold');
        return;
      }
      await next();
    } finally {
      done();
    }
  };
}
