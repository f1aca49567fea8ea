import type { IncomingHttpHeaders } from 'node:http';
import { promisify } from 'node:util';
import { gunzip, inflate } from 'node:zlib';
import { Pool } from 'undici';
import {
  AbortedError,
  BadResponseError,
  InsecureTransportError,
  NetworkError,
  type RequestContext,
  TimeoutError,
  TlsError,
} from './errors.js';

export interface TransportOptions {
  /** Most connections open to the origin at once. Default 32. */
  connections: number;
  /** Time to establish a connection (TCP and TLS), ms. Default 10,000. */
  connectTimeoutMs: number;
  /** Time from sending a request to receiving the response headers, ms. Default 60,000. */
  headersTimeoutMs: number;
  /** Longest pause between two chunks of a response body, ms. Default 60,000. */
  bodyTimeoutMs: number;
  /** PEM certificates to trust in addition to the system's (a private CA). TLS verification stays on. */
  ca?: string | undefined;
}

export const DEFAULT_TRANSPORT: TransportOptions = {
  connections: 32,
  connectTimeoutMs: 10_000,
  headersTimeoutMs: 60_000,
  bodyTimeoutMs: 60_000,
};

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body, already decompressed when the server compressed it. */
  body: Buffer;
  requestId: string | undefined;
}

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);
/**
 * Output chunks of 512 KiB instead of zlib's 16 KiB: a page of 1000 items (about 400 KB) then
 * decodes in one pass on the thread pool instead of 25 round trips through the event loop, which
 * cut zlib's CPU per page by a third (bench/RESULTS.md, "Levers kept").
 */
const DECODE = { chunkSize: 512 * 1024 };

/**
 * Keep-alive connections to one origin. gzip and deflate bodies are decoded on zlib's thread pool;
 * failures come out as typed errors: a body cut short fails to decode and is a NetworkError.
 */
export class Transport {
  private readonly pool: Pool;

  constructor(
    readonly origin: string,
    options: TransportOptions,
  ) {
    this.pool = new Pool(origin, {
      connections: options.connections,
      headersTimeout: options.headersTimeoutMs,
      bodyTimeout: options.bodyTimeoutMs,
      connect: { timeout: options.connectTimeoutMs, ...(options.ca === undefined ? {} : { ca: options.ca }) },
    });
  }

  async request(
    method: 'GET' | 'POST',
    path: string,
    headers: Record<string, string>,
    ctx: RequestContext,
    body?: string,
    signal?: AbortSignal,
  ): Promise<RawResponse> {
    try {
      const response = await this.pool.request({
        origin: this.origin,
        method,
        path,
        headers: { ...headers, 'accept-encoding': 'gzip, deflate' },
        ...(body === undefined ? {} : { body }),
        ...(signal === undefined ? {} : { signal }),
      });
      const bytes = await decode(Buffer.from(await response.body.arrayBuffer()), response.headers);
      return {
        status: response.statusCode,
        headers: response.headers,
        body: bytes,
        requestId: firstHeader(response.headers, 'x-request-id'),
      };
    } catch (error) {
      if (signal?.aborted === true) throw new AbortedError('Stopped before the answer arrived', ctx, { cause: error });
      throw classifyTransportError(error, ctx);
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

async function decode(body: Buffer, headers: IncomingHttpHeaders): Promise<Buffer> {
  const encoding = firstHeader(headers, 'content-encoding')?.toLowerCase();
  if (encoding === undefined || encoding === 'identity' || body.length === 0) return body;
  if (encoding === 'gzip' || encoding === 'x-gzip') return gunzipAsync(body, DECODE);
  if (encoding === 'deflate') return inflateAsync(body, DECODE);
  throw Object.assign(new Error(`unsupported content-encoding '${encoding}'`), { code: 'E_UNSUPPORTED_ENCODING' });
}

const TLS_CODE = /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ERR_TLS|ERR_SSL/;
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Maps what undici, the socket or zlib threw onto the typed errors the retry policy knows. */
export function classifyTransportError(error: unknown, ctx: RequestContext): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return error;
  const detail = `${(error as Error).message} [${code}]`;
  if (TIMEOUT_CODES.has(code)) return new TimeoutError(`Timed out: ${detail}`, ctx, { cause: error });
  if (TLS_CODE.test(code)) {
    return new TlsError(
      `TLS verification failed: ${detail}. If the server uses a private CA, set source.caFile to its PEM file`,
      ctx,
      { cause: error },
    );
  }
  if (code === 'E_UNSUPPORTED_ENCODING') return new BadResponseError(detail, ctx, { cause: error });
  if (code === 'ENOTFOUND') {
    return new NetworkError(`Host not found: ${detail}. Check source.baseUrl`, ctx, { cause: error, retryable: false });
  }
  if (code.startsWith('UND_ERR_') || code.startsWith('Z_') || /^E[A-Z]+$/.test(code)) {
    return new NetworkError(`Connection failed: ${detail}`, ctx, { cause: error });
  }
  return error;
}

/** The first value of a response header, or undefined. */
export function firstHeader(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value: unknown = headers[name];
  if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** 127.0.0.0/8, ::1 and localhost: traffic that never leaves this machine. */
export function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Refuses plain http:// to another machine unless the user opted in. */
export function assertSecureTransport(url: URL, allowInsecureHttp: boolean, setting: string): void {
  if (url.protocol === 'https:' || allowInsecureHttp || isLoopback(url.hostname)) return;
  throw new InsecureTransportError(
    `Refusing to send credentials over plain http:// to ${url.host} (${setting}): use https://, or set source.allowInsecureHttp: true if this network is trusted.`,
  );
}
