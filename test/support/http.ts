import { gunzipSync } from 'node:zlib';
import { request } from 'undici';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The raw body as text (after gunzip when the server compressed it). */
  text: string;
  /** The body parsed as JSON; throws when it is not JSON. */
  json<T = unknown>(): T;
}

/**
 * One HTTP request to the simulator on loopback, with no retries and no decoding magic: what the
 * server sent is what the test sees.
 */
export async function send(
  url: string,
  init: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string } = {},
): Promise<Reply> {
  const target = new URL(url);
  if (target.hostname !== '127.0.0.1' && target.hostname !== 'localhost') {
    throw new Error(`tests only talk to loopback, not ${target.hostname}`);
  }
  const response = await request(url, {
    method: init.method ?? 'GET',
    headers: init.headers ?? {},
    ...(init.body === undefined ? {} : { body: init.body }),
  });
  let bytes = Buffer.from(await response.body.arrayBuffer());
  if (response.headers['content-encoding'] === 'gzip') bytes = gunzipSync(bytes);
  const text = bytes.toString('utf8');
  return {
    status: response.statusCode,
    headers: response.headers,
    text,
    json: <T>() => JSON.parse(text) as T,
  };
}

/** Builds `base/path?params` with the params in the given order. */
export function listUrl(
  baseUrl: string,
  path: string,
  params: Record<string, string | number | undefined>,
): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) search.set(key, String(value));
  const query = search.toString();
  return `${baseUrl}${path}${query ? `?${query}` : ''}`;
}

export interface Page<T = Record<string, unknown>> {
  items: T[];
  nextCursor?: string;
}

/**
 * Follows a cursor chain to its end, repeating `params` exactly with only `cursor` changing, and
 * returns every page. Fails on any non-200 answer.
 */
export async function drain<T = Record<string, unknown>>(
  baseUrl: string,
  path: string,
  params: Record<string, string | number | undefined>,
  headers: Record<string, string>,
): Promise<Page<T>[]> {
  const pages: Page<T>[] = [];
  let cursor: string | undefined;
  do {
    const reply = await send(listUrl(baseUrl, path, { ...params, cursor }), { headers });
    if (reply.status !== 200) throw new Error(`GET ${path} answered ${reply.status}: ${reply.text}`);
    const page = reply.json<Page<T>>();
    pages.push(page);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return pages;
}

/**
 * Follows a `POST {path}` chain (`/{resource}/list`) to its end, `body` repeated with only `cursor`
 * added, and returns every page. Fails on any non-200 answer.
 */
export async function drainPost<T = Record<string, unknown>>(
  baseUrl: string,
  path: string,
  body: Record<string, unknown>,
  headers: Record<string, string>,
): Promise<Page<T>[]> {
  const pages: Page<T>[] = [];
  let cursor: string | undefined;
  do {
    const reply = await send(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(cursor === undefined ? body : { ...body, cursor }),
    });
    if (reply.status !== 200) throw new Error(`POST ${path} answered ${reply.status}: ${reply.text}`);
    const page = reply.json<Page<T>>();
    pages.push(page);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return pages;
}
