import { S3Client } from '@aws-sdk/client-s3';
import { ConfigError } from '../errors.js';
import type { Logger } from '../log.js';
import { bucketPathWithoutSlash } from './s3-bucket-path.js';
import { type S3Error, s3Error } from './s3-errors.js';
import { parseS3Url } from './s3-url.js';

/** Credentials for S3, for callers that hold them (tests, library use); a run leaves them to the SDK's chain. */
export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

const MiB = 1024 * 1024;
/** S3's limits: parts of 5 MiB to 5 GiB (but the last), 1,000 keys per delete or list page. */
const MIN_PART_BYTES = 5 * MiB;
const MAX_PART_BYTES = 5 * 1024 * MiB;
export const MAX_BATCH = 1000;

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
export interface Bucket {
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
  /** A failed request as an S3Error naming the operation and the object (its class decides the exit code). */
  fail: (operation: string, key: string, error: unknown) => S3Error;
}

/** The client and the names of the bucket prefix `options.url`, with the options checked. */
export function bucketOf(options: S3StoreOptions): Bucket {
  const { bucket, prefix } = parseS3Url(options.url);
  const endpoint = options.endpoint === undefined ? undefined : endpointOrigin(options.endpoint);
  const root = prefix === '' ? '' : `${prefix}/`;
  const url = (key: string) => `s3://${bucket}/${root}${key}`;
  const location = `s3://${bucket}${prefix === '' ? '' : `/${prefix}`}`;
  return {
    client: clientOf(options, bucket, endpoint !== undefined),
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

function clientOf(options: S3StoreOptions, bucket: string, hasEndpoint: boolean): S3Client {
  const region = options.region ?? (hasEndpoint ? 'us-east-1' : undefined);
  const client = new S3Client({
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
  // Before signing (the build step): the path signed is the path sent.
  client.middlewareStack.add(
    (next) => (args) => {
      const { request, input } = args as { request?: { path?: unknown }; input: object };
      if (typeof request?.path === 'string') request.path = bucketPathWithoutSlash(request.path, bucket, input);
      return next(args);
    },
    { step: 'build', name: 'bucketPathWithoutSlash' },
  );
  return client;
}

function integerOption(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`S3 option ${name} must be an integer from ${min} to ${max}; got ${value}.`);
  }
  return value;
}

/** Runs one request; its failure becomes an S3Error naming the operation and the object. */
export async function request<T>(at: Bucket, operation: string, key: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    throw at.fail(operation, key, error);
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
