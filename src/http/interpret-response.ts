import {
  AuthError,
  BadResponseError,
  HttpStatusError,
  InvalidJsonError,
  type RequestContext,
} from './errors.js';
import { firstHeader, type RawResponse } from './transport.js';

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
 * A 2xx with a JSON body becomes a JsonResponse; anything else a typed error naming the request:
 * 401 an AuthError (for the `mechanism` in use), a redirect a BadResponseError (never followed, so
 * that credentials stay with the configured host), other statuses an HttpStatusError.
 */
export function interpretResponse(raw: RawResponse, ctx: RequestContext, mechanism: string): JsonResponse {
  const { status } = raw;
  if (status >= 200 && status < 300) {
    const text = raw.body.toString('utf8');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new InvalidJsonError(
        `HTTP ${status} with a body that is not JSON (${raw.body.length} bytes${preview(text)})`,
        ctx,
      );
    }
    return { body, bytes: raw.body, path: ctx.path, requestId: raw.requestId, attempts: ctx.attempts ?? 1 };
  }
  const message = errorMessage(raw);
  if (status === 401) {
    throw new AuthError(
      `The platform refused the ${mechanism} credential: HTTP 401${message === undefined ? '' : ` ${message}`}. Check source.auth`,
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
  throw new HttpStatusError(status, message, firstHeader(raw.headers, 'retry-after'), ctx);
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
  const text = raw.body.toString('utf8');
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } } | null)?.error?.message;
    return typeof message === 'string' ? message : undefined;
  } catch {
    const title = /<title>([^<]*)<\/title>/i.exec(text)?.[1];
    return title === undefined ? undefined : `(HTML page: ${title.trim()})`;
  }
}

function preview(text: string): string {
  if (text.length === 0) return ', empty';
  const start = text.slice(0, 60).replace(/\s+/g, ' ');
  return `, starting ${JSON.stringify(start)}${text.length > 60 ? '...' : ''}`;
}
