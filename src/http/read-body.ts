import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { gunzip, inflate } from 'node:zlib';
import { formatByteSize } from '../util/format-byte-size.js';
import { type RequestContext, ResponseTooLargeError } from './errors.js';

/** The most bytes a response body may have once decoded, and the config key that sets it. */
export interface ResponseLimit {
  bytes: number;
  /** The key that raises it, named in the error; none for a fixed limit. */
  setting?: string | undefined;
}

/**
 * The fixed limit for answers of a few KB: the token endpoint's, `/login/status` and `/logout`.
 * 1 MiB, far above any real one, so that a server answering them with something else (a page, an
 * endless body) cannot take the process's memory.
 */
export const SMALL_ANSWER_LIMIT: ResponseLimit = { bytes: 1024 * 1024 };

/** What the response headers say about its body. */
export interface BodyFraming {
  /** `content-encoding`, lowercase; undefined when absent. */
  encoding: string | undefined;
  /** `content-length`; undefined when absent (a chunked body). */
  length: number | undefined;
}

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);
/**
 * Output chunks of 512 KiB instead of zlib's 16 KiB: a page of 1000 items (about 400 KB) then
 * decodes in one pass on the thread pool instead of 25 round trips through the event loop, which
 * cut zlib's CPU per page by a third (bench/RESULTS.md, "Levers kept").
 */
const DECODE = { chunkSize: 512 * 1024 };
/** The smallest output chunk asked of zlib for a gzip body (gzipChunk). */
const MIN_CHUNK = 64 * 1024;

/**
 * Reads a response body to its end and decodes it (gzip and deflate, on zlib's thread pool), never
 * holding more than `limit`: the bytes are counted as they arrive, and the body is destroyed as
 * soon as they pass it (at once when its content-length does); zlib stops once its output does,
 * so a small gzip bomb stops at the limit too. Either is a ResponseTooLargeError. An unsupported
 * encoding is an Error with code `E_UNSUPPORTED_ENCODING`.
 */
export async function readBody(
  body: Readable,
  framing: BodyFraming,
  limit: ResponseLimit,
  ctx: RequestContext,
): Promise<Buffer> {
  return decode(await receive(body, framing, limit, ctx), framing, limit, ctx);
}

async function receive(body: Readable, framing: BodyFraming, limit: ResponseLimit, ctx: RequestContext) {
  if (framing.length !== undefined && framing.length > limit.bytes) {
    body.destroy();
    throw tooLarge(limit, ctx);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > limit.bytes) {
      body.destroy();
      throw tooLarge(limit, ctx);
    }
    chunks.push(chunk);
  }
  return chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks, total);
}

async function decode(body: Buffer, framing: BodyFraming, limit: ResponseLimit, ctx: RequestContext): Promise<Buffer> {
  const { encoding } = framing;
  if (encoding === undefined || encoding === 'identity' || body.length === 0) return body;
  const options = { ...DECODE, maxOutputLength: limit.bytes };
  try {
    if (encoding === 'gzip' || encoding === 'x-gzip') return await gunzipAsync(body, { ...options, chunkSize: gzipChunk(body, limit) });
    if (encoding === 'deflate') return await inflateAsync(body, options);
  } catch (error) {
    // zlib's code for output past maxOutputLength.
    if ((error as { code?: unknown } | null)?.code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(limit, ctx, error);
    throw error;
  }
  throw Object.assign(new Error(`unsupported content-encoding '${encoding}'`), { code: 'E_UNSUPPORTED_ENCODING' });
}

/**
 * An output chunk that holds the whole decoded body, so that zlib hands it over as it is instead of
 * copying its chunks into one more buffer: the gzip trailer's last 4 bytes are the decoded size
 * (modulo 2^32), one byte more keeps zlib from starting a chunk it would not fill. Only a size
 * hint: a server that gives a wrong one gets more chunks (too small) or one chunk of at most
 * `limit` (too large), and the same bytes either way.
 */
function gzipChunk(body: Buffer, limit: ResponseLimit): number {
  if (body.length < 18) return DECODE.chunkSize;
  const size = body.readUInt32LE(body.length - 4) + 1;
  return Math.min(Math.max(size, MIN_CHUNK), Math.max(limit.bytes, MIN_CHUNK));
}

function tooLarge(limit: ResponseLimit, ctx: RequestContext, cause?: unknown): ResponseTooLargeError {
  const larger = `The response is larger than ${formatByteSize(limit.bytes)} once decoded`;
  const what =
    limit.setting === undefined
      ? `${larger}, the fixed limit for this endpoint, whose answers are a few KB: the server is not answering as it should`
      : `${larger} (${limit.setting}): if pages this large are expected, raise ${limit.setting}; ` +
        'otherwise ask for fewer items per page (streams[].limit)';
  return new ResponseTooLargeError(what, ctx, { limitBytes: limit.bytes, cause });
}
