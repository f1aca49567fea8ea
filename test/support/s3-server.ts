import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { afterAll } from 'vitest';
import { tempDir } from './resume-harness.js';
import {
  abortShim,
  conditionalPutShim,
  describe,
  type FsStore,
  listTokenShim,
  type Middleware,
  serialDeleteShim,
} from './s3rver-shims.js';

/**
 * A loopback S3 server for tests: s3rver 4.0.4 (files on disk, one bucket), with an observer of requests
 * and shims for what it lacks or gets wrong:
 * - AbortMultipartUpload (s3rver answers 405): deletes the upload's folder, as S3 drops its parts.
 * - ListObjectsV2 continuation tokens: s3rver encrypts them with DES, which OpenSSL 3 refuses (500
 *   InternalError on every truncated page). The shim hands out its own tokens; s3rver still does the listing.
 * - DeleteObjects deletes its keys concurrently, and s3rver's cleanup of emptied folders races with itself
 *   (ENOENT, 500): the shim runs the deletions of a request one after another.
 * - PutObject with If-None-Match: * (S3's conditional create): s3rver checks the header on GET and HEAD
 *   only and overwrites; the shim answers 412 PreconditionFailed when the object exists, as S3 does.
 * s3rver lacks ListMultipartUploads and ListParts too; uploadsInProgress() reads its folder instead.
 * s3rver lists keys in the order of its folders, not S3's byte order of keys: where a key sorts before a
 * folder it shares a start with ('a-b/x' before 'a/y'), a listing of more than one page can skip it.
 */

export interface S3Request {
  /** S3 API name derived from method, path and query, e.g. 'UploadPart', 'ListObjectsV2'. */
  operation: string;
  method: string;
  key: string;
  query: Record<string, string>;
  /** HTTP status sent; 0 when the client went away first. */
  status: number;
}

export interface HeldRequest {
  /** Resolves once a matching request arrived (and is waiting). */
  arrived: Promise<S3Request>;
  /** Lets it go on to s3rver. */
  release(): void;
}

export interface PendingUpload {
  uploadId: string;
  key: string;
  /** Stored parts (number and bytes), by number. */
  parts: { number: number; bytes: number }[];
}

export interface S3TestServer {
  /** http://127.0.0.1:PORT */
  endpoint: string;
  bucket: string;
  /** s3rver's folder: `<directory>/<bucket>/` holds the objects. */
  directory: string;
  close(): Promise<void>;
  /** Keys of the multipart uploads begun and neither completed nor aborted, sorted. */
  uploadsInProgress(): string[];
  /** The same with their upload ids and stored parts. */
  pendingUploads(): PendingUpload[];
  /** Requests answered so far, in order of completion. */
  requests(): S3Request[];
  /** Stops the first request matching `match` (from now on) until `release()`, or until its client disconnects. */
  hold(match: (request: S3Request) => boolean): HeldRequest;
  /** Answers the first request matching `match` with an S3 error (and `detail` elements) instead of serving it. */
  failNext(match: (request: S3Request) => boolean, error: InjectedError): void;
}

export interface InjectedError {
  status: number;
  code: string;
  /** More elements of the error document, as S3 sends them (e.g. CanonicalRequest). */
  detail?: Record<string, string>;
}

export interface S3ServerOptions {
  /** Default 'test-bucket'. */
  bucket?: string;
  /** Emulate AbortMultipartUpload. Default true; false shows how the store copes with a server without it. */
  abortMultipartUpload?: boolean;
  /** Reject requests whose signature does not match the secret (s3rver's account is S3RVER/S3RVER). Default false. */
  checkSignatures?: boolean;
  /**
   * Emulate PutObject's If-None-Match: * (412 when the object exists). Default true; false leaves
   * s3rver's own answer, which ignores the condition and overwrites.
   */
  conditionalPut?: boolean;
}

/** The credentials s3rver accepts, as the environment of a CLI process names them. */
export const S3RVER_CREDENTIALS = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' } as const;

/**
 * The environment an export run in this process (runJob) needs for s3rver, as a user's run takes
 * its credentials from the environment; no instance metadata lookup (169.254.169.254 is not loopback).
 */
export const S3RVER_ENV = { ...S3RVER_CREDENTIALS, AWS_REGION: 'us-east-1', AWS_EC2_METADATA_DISABLED: 'true' } as const;

/** The same as options of a store this process opens (createS3Store), with the region s3rver signs for. */
export const S3RVER_ACCESS = {
  region: 'us-east-1',
  credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
} as const;

interface S3rver {
  middleware: Middleware[];
  store: FsStore;
  httpServer?: Server;
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rver;

const require = createRequire(import.meta.url);
const servers = new Set<S3TestServer>();
afterAll(async () => {
  await Promise.all([...servers].map((server) => server.close()));
});

/** Starts s3rver on 127.0.0.1 (a free port) in a fresh temp folder with one bucket. */
export async function startS3Server(options: S3ServerOptions = {}): Promise<S3TestServer> {
  const bucket = options.bucket ?? 'test-bucket';
  const directory = tempDir('s3rver');
  const S3rverServer = require('@20minutes/s3rver') as S3rverClass;
  const s3rver = new S3rverServer({
    address: '127.0.0.1',
    port: 0,
    directory,
    silent: true,
    vhostBuckets: false,
    allowMismatchedSignatures: options.checkSignatures !== true,
    configureBuckets: [{ name: bucket }],
  });
  const uploadsDir = join(directory, bucket, '._S3rver_uploads');
  const observer = new Observer();
  // Koa composes its middleware when it starts listening, so the shims go in now: the observer first (it
  // sees every answer), the rest just before the router (inside the XML encoder, so bodies are still objects).
  if (s3rver.middleware.at(-1)?.name !== 'dispatch') throw new Error('s3rver changed: its router is not its last middleware');
  s3rver.middleware.unshift(observer.middleware);
  const shims = [listTokenShim, serialDeleteShim];
  if (options.conditionalPut !== false) shims.push(conditionalPutShim());
  if (options.abortMultipartUpload !== false) shims.push(abortShim(uploadsDir));
  s3rver.middleware.splice(s3rver.middleware.length - 1, 0, ...shims);
  const { port } = await s3rver.run();

  const pendingUploads = (): PendingUpload[] => {
    if (!existsSync(uploadsDir)) return [];
    return readdirSync(uploadsDir).sort().map((uploadId) => {
      const dir = join(uploadsDir, uploadId);
      const parts = readdirSync(dir)
        .filter((name) => /^\d+$/.test(name))
        .map((name) => ({ number: Number(name), bytes: statSync(join(dir, name)).size }))
        .sort((a, b) => a.number - b.number);
      return { uploadId, key: readFileSync(join(dir, 'key'), 'utf8'), parts };
    });
  };
  let closed: Promise<void> | undefined;
  const server: S3TestServer = {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    directory,
    close() {
      closed ??= (async () => {
        servers.delete(server);
        observer.dropHeld();
        s3rver.httpServer?.closeAllConnections();
        await s3rver.close();
      })();
      return closed;
    },
    uploadsInProgress: () => pendingUploads().map((upload) => upload.key).sort(),
    pendingUploads,
    requests: () => [...observer.answered],
    hold: (match) => observer.hold(match),
    failNext: (match, error) => observer.failures.push({ match, error }),
  };
  servers.add(server);
  return server;
}

interface Hold {
  match: (request: S3Request) => boolean;
  arrive(request: S3Request): void;
  released: Promise<void>;
  release(): void;
}

class Observer {
  readonly answered: S3Request[] = [];
  readonly failures: { match: (request: S3Request) => boolean; error: InjectedError }[] = [];
  private readonly holds: Hold[] = [];
  private readonly waiting = new Set<Hold>();
  /** Set when the server closes: held requests then end without reaching s3rver. */
  private closing = false;

  hold(match: (request: S3Request) => boolean): HeldRequest {
    let arrive!: (request: S3Request) => void;
    const arrived = new Promise<S3Request>((resolve) => (arrive = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const hold = { match, arrive, released, release };
    this.holds.push(hold);
    this.waiting.add(hold);
    return { arrived, release };
  }

  /** Ends every held request unanswered (the server is closing). */
  dropHeld(): void {
    this.closing = true;
    for (const hold of this.waiting) hold.release();
  }

  readonly middleware: Middleware = async (ctx, next) => {
    const request = describe(ctx);
    const hold = takeFirst(this.holds, request);
    if (hold !== undefined) {
      hold.arrive(request);
      // A client that went away (killed) shows only when the socket is read, so mostly at close().
      const gone = new Promise<boolean>((resolve) => ctx.res.once('close', () => resolve(true)));
      const clientLeft = await Promise.race([hold.released.then(() => false), gone]);
      this.waiting.delete(hold);
      if (clientLeft || this.closing) {
        ctx.respond = false;
        this.answered.push({ ...request, status: 0 });
        return;
      }
    }
    const failure = takeFirst(this.failures, request);
    if (failure !== undefined) {
      // Read the body first: a client still sending would see a reset connection and retry.
      ctx.req.resume();
      await finished(ctx.req);
      const { status, code, detail = {} } = failure.error;
      const elements = Object.entries({ Code: code, Message: 'injected by the test', ...detail })
        .map(([name, value]) => `<${name}>${value.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</${name}>`);
      ctx.status = status;
      ctx.type = 'application/xml';
      ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error>${elements.join('')}</Error>`;
      this.answered.push({ ...request, status: ctx.status });
      return;
    }
    try {
      await next();
      this.answered.push({ ...request, status: ctx.status });
    } catch (error) {
      this.answered.push({ ...request, status: (error as { status?: number }).status ?? 500 });
      throw error;
    }
  };
}

/** Removes and returns the first entry whose `match` accepts `request`. */
function takeFirst<T extends { match: (request: S3Request) => boolean }>(list: T[], request: S3Request): T | undefined {
  const index = list.findIndex((entry) => entry.match(request));
  return index < 0 ? undefined : list.splice(index, 1)[0];
}
