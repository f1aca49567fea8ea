import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { BodyFault } from './faults.js';
import type { RequestNotes } from './stats.js';

const gzipAsync = promisify(gzip);
/**
 * The largest request body read: room for the largest filter the platform takes (events' metadata,
 * 200,000 bytes in all; 5000 asset ids), and a bound on what a client can make the simulator hold.
 */
const MAX_REQUEST_BODY = 1024 * 1024;

/** One request and its response, with what the response helpers need. */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  url: URL;
  gzipLevel: number;
}

/** The platform's error body: `{"error":{"code","message"}}`. */
export function sendError(
  ex: Exchange,
  status: number,
  message: string,
  headers: Record<string, string> = {},
) {
  return sendJson(ex, status, { error: { code: status, message } }, headers);
}

export function sendJson(ex: Exchange, status: number, body: unknown, headers: Record<string, string> = {}) {
  return sendText(ex, status, JSON.stringify(body), 'application/json; charset=utf-8', headers);
}

/**
 * Sends a text body, gzip-compressed when the client accepts it (zlib runs off the event loop).
 * A body fault mangles the JSON text ('truncate', 'malformed') or the wire ('reset': headers and
 * half the bytes are sent, then the connection is destroyed).
 */
export async function sendText(
  ex: Exchange,
  status: number,
  text: string,
  contentType: string,
  headers: Record<string, string> = {},
  fault?: BodyFault,
): Promise<void> {
  const { req, res } = ex;
  let body = text;
  if (fault === 'truncate') body = text.slice(0, Math.floor(text.length / 2));
  if (fault === 'malformed') body = `${text.slice(0, -1)},}`;
  let bytes: Buffer = Buffer.from(body);
  const compress = /\bgzip\b/.test(req.headers['accept-encoding'] ?? '');
  if (compress) bytes = await gzipAsync(bytes, { level: ex.gzipLevel });
  if (res.destroyed) return;
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': String(bytes.length),
    ...(compress ? { 'content-encoding': 'gzip', 'vary': 'accept-encoding' } : {}),
    ...headers,
  });
  if (fault === 'reset') {
    res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => res.destroy());
    return;
  }
  res.end(bytes);
}

/** Reads a small request body as text; undefined when it is larger than 64 KiB. */
async function readText(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_REQUEST_BODY) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export type JsonBody = { ok: true; value: unknown } | { ok: false; message: string };

/** A JSON request body, or why it cannot be read (for a 400). */
export async function readJsonBody(req: IncomingMessage): Promise<JsonBody> {
  const text = await readText(req);
  if (text === undefined) return { ok: false, message: `The request body is larger than ${MAX_REQUEST_BODY / 1024 / 1024} MiB.` };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, message: `The request body is not valid JSON (${(error as Error).message}).` };
  }
}

/**
 * The JSON body of a POST to a resource route (`/list`, `/aggregate`), noted for the request
 * record; or why it cannot be taken: 415 without a JSON content type, 400 when it does not parse.
 */
export async function readResourceBody(
  ex: Exchange,
  notes: RequestNotes,
): Promise<{ ok: true; value: unknown } | { ok: false; status: number; message: string }> {
  if (!(ex.req.headers['content-type'] ?? '').startsWith('application/json')) {
    return { ok: false, status: 415, message: 'Expected a JSON body (content-type: application/json).' };
  }
  const body = await readJsonBody(ex.req);
  if (!body.ok) return { ...body, status: 400 };
  notes.body = body.value;
  return body;
}

/** Reads a small request body (form or JSON) into key/value pairs; undefined when unreadable. */
export async function readForm(req: IncomingMessage): Promise<Map<string, string> | undefined> {
  const text = await readText(req);
  if (text === undefined) return undefined;
  const type = req.headers['content-type'] ?? '';
  if (type.startsWith('application/x-www-form-urlencoded')) return new Map(new URLSearchParams(text));
  if (type.startsWith('application/json')) {
    try {
      const value: unknown = JSON.parse(text);
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
      return new Map(
        Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
      );
    } catch {
      return undefined;
    }
  }
  return undefined;
}
