import {
  AuthError,
  BadResponseError,
  HttpStatusError,
  InvalidJsonError,
  type RequestContext,
} from './errors.js';
import { type ScannedPage, scanPage } from '../page/index.js';
import { checkAnswerBytes, parseIfSound } from './answer-bytes.js';
import { firstHeader, type RawResponse } from './transport.js';

/** The credential a request was sent with, as a refusal names it: its mechanism, and what to check (Authenticator). */
export interface Credential {
  mechanism: string;
  check: string;
}

export interface JsonResponse {
  body: unknown;
  /** The body's bytes as received (after content decoding), for writers that keep items verbatim. */
  bytes: Buffer;
  /** The path and query requested, e.g. `/api/v1/projects/acme/events?limit=1000`. */
  path: string;
  requestId: string | undefined;
  /** Attempts it took, 1 when the first one succeeded. */
  attempts: number;
}

/**
 * A list page's answer: its bytes scanned without building objects (scanPage), or, when the scan
 * leaves the page to JSON.parse, parsed (`scan` undefined, `body` the value).
 */
export interface PageResponse extends JsonResponse {
  scan: ScannedPage | undefined;
}

/**
 * A 2xx with a JSON body becomes a JsonResponse; anything else a typed error naming the request:
 * 401 an AuthError (naming the credential in use and what to check), a redirect a BadResponseError
 * (never followed, so that credentials stay with the configured host), other statuses an HttpStatusError.
 */
export function interpretResponse(raw: RawResponse, ctx: RequestContext, credential: Credential): JsonResponse {
  checkStatus(raw, ctx, credential);
  return answered(raw, ctx, parseBody(raw, ctx));
}

/** Like interpretResponse, for a list page: scanned when it can be, parsed when it must be. */
export function interpretPage(raw: RawResponse, ctx: RequestContext, credential: Credential): PageResponse {
  checkStatus(raw, ctx, credential);
  const scan = scanPage(raw.body);
  return { ...answered(raw, ctx, scan === undefined ? parseBody(raw, ctx) : undefined), scan };
}

/**
 * An answer read from its bytes by its caller's `read` (the datapoints answer's scan): `read` is
 * what it made of them, or undefined when it left them to JSON.parse, and `body` is then the value.
 */
export interface ReadResponse<T> extends JsonResponse {
  read: T | undefined;
}

/**
 * Like interpretResponse, the body read by `read` when it takes it, parsed when it does not: both
 * inside the request's attempts, so that a body that is not JSON is retried as for any request.
 */
export function interpretRead<T>(read: (bytes: Buffer) => T | undefined) {
  return (raw: RawResponse, ctx: RequestContext, credential: Credential): ReadResponse<T> => {
    checkStatus(raw, ctx, credential);
    const value = read(raw.body);
    return { ...answered(raw, ctx, value === undefined ? parseBody(raw, ctx) : undefined), read: value };
  };
}

function answered(raw: RawResponse, ctx: RequestContext, body: unknown): JsonResponse {
  return { body, bytes: raw.body, path: ctx.path, requestId: raw.requestId, attempts: ctx.attempts ?? 1 };
}

/**
 * JSON.parse of the body, once its bytes passed checkAnswerBytes: an answer nested too deep or
 * holding a number past a double's range is refused before the parse. A scan that answered read
 * neither (JsonGrammar), so that the check costs nothing on the path of the pages it reads.
 */
function parseBody(raw: RawResponse, ctx: RequestContext): unknown {
  checkAnswerBytes(raw.body, ctx);
  const text = raw.body.toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidJsonError(
      `HTTP ${raw.status} with a body that is not JSON (${raw.body.length} bytes${preview(text)})`,
      ctx,
    );
  }
}

/** Throws the typed error of an answer that is not a 2xx. */
function checkStatus(raw: RawResponse, ctx: RequestContext, credential: Credential): void {
  const { status } = raw;
  if (status >= 200 && status < 300) return;
  const message = errorMessage(raw);
  if (status === 401) {
    throw new AuthError(
      `The platform refused the ${credential.mechanism} credential: HTTP 401${message === undefined ? '' : ` ${message}`}. ` +
      `Check ${credential.check}`,
      ctx,
    );
  }
  if (status >= 300 && status < 400) {
    throw new BadResponseError(
      `Unexpected redirect (HTTP ${status} to ${firstHeader(raw.headers, 'location') ?? '?'}); redirects are not ` +
      'followed so that credentials stay with the configured host. Check source.baseUrl',
      ctx,
    );
  }
  throw new HttpStatusError(status, message, firstHeader(raw.headers, 'retry-after'), ctx, undefined, errorMissing(raw));
}

/** The platform's `error.missing`, when its error body lists what it does not know. */
function errorMissing(raw: RawResponse): readonly unknown[] | undefined {
  try {
    const missing = (JSON.parse(raw.body.toString('utf8')) as { error?: { missing?: unknown } } | null)?.error?.missing;
    return Array.isArray(missing) ? missing : undefined;
  } catch {
    return undefined;
  }
}

/** The request a response answered, for an error about its body. */
export function requestOf(method: string, response: JsonResponse): RequestContext {
  return {
    method,
    path: response.path,
    attempts: response.attempts,
    ...(response.requestId === undefined ? {} : { requestId: response.requestId }),
  };
}

/** The platform's `error.message`, or the title of an HTML error page from a proxy. */
export function errorMessage(raw: RawResponse): string | undefined {
  const body = parseIfSound(raw.body) as { error?: { message?: unknown } } | null | undefined;
  if (body !== undefined) return typeof body?.error?.message === 'string' ? body.error.message : undefined;
  const title = /<title>([^<]*)<\/title>/i.exec(raw.body.toString('utf8'))?.[1];
  return title === undefined ? undefined : `(HTML page: ${title.trim()})`;
}

function preview(text: string): string {
  if (text.length === 0) return ', empty';
  const start = text.slice(0, 60).replace(/\s+/g, ' ');
  return `, starting ${JSON.stringify(start)}${text.length > 60 ? '...' : ''}`;
}
