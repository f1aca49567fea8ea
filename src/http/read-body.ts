import type { Readable } from 'node:stream';
import { createGunzip, createInflate, type Gunzip, type Inflate } from 'node:zlib';
import { type BudgetHold, RoomRefused } from '../page/index.js';
import { formatByteSize } from '../util/format-byte-size.js';
import { freeOwned, markOwned } from '../util/owned-memory.js';
import { MemoryBudgetError, type RequestContext, ResponseTooLargeError } from './errors.js';

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

/** Where a body's bytes are counted as they arrive and are decoded: the response's part of the process's budget. */
export type BodyRoom = Pick<BudgetHold, 'bytes' | 'take' | 'give'>;

/**
 * Output chunks of 512 KiB instead of zlib's 16 KiB: a page of 1000 items (about 400 KB) then
 * decodes in one pass on the thread pool instead of 25 round trips through the event loop, which
 * cut zlib's CPU per page by a third (bench/RESULTS.md, "Levers kept"). A fixed size, never one a
 * server states (a gzip trailer's): a chunk is what zlib fills before its bytes are counted.
 */
const DECODE = { chunkSize: 512 * 1024 };
/**
 * The largest output chunk of a body decoded in one pass (decodeInOne): a page about as large as its
 * hold's estimate (the largest page of its stream lately, held before the request) decodes in one
 * pass on the thread pool into one buffer, with no copy.
 */
const ONE_PASS_MAX = 16 * 1024 * 1024;
/** Below this, an estimate is no guide to a page's size (a stream's pages are seldom smaller): chunks of 512 KiB. */
const ONE_PASS_MIN = 64 * 1024;
/** What a page may outgrow its estimate by and still decode in one pass: a quarter of it, at most 1 MiB. */
const ONE_PASS_HEADROOM = 1024 * 1024;

/**
 * Reads a response body to its end and decodes it (gzip and deflate, on zlib's thread pool), never
 * holding more than `limit`: the bytes are counted as they arrive, and the body is destroyed as
 * soon as they pass it (at once when its content-length does); zlib's output is counted chunk by
 * chunk and stops once it does, so a small gzip bomb stops at the limit too. Either is a
 * ResponseTooLargeError. An unsupported encoding is an Error with code `E_UNSUPPORTED_ENCODING`.
 *
 * With a `room`, every byte received and every decoded chunk is taken from it before the next is
 * read (the compressed bytes are given back once decoded): the body waits while the process's
 * budget is full (the socket is not read meanwhile), a body larger than the whole budget is a
 * ResponseTooLargeError naming `source.maxBufferedBytes`, and a wait that can never end is a
 * MemoryBudgetError (retried). `signal` ends a wait for room. A body about as large as what the
 * room held before it (its page's estimate) decodes in one pass into one buffer (onePassSize).
 *
 * A body made here (decoded, or joined from its chunks) is marked as the caller's alone
 * (util/owned-memory.ts): its holder may free it once done. The compressed bytes of a body
 * decoded are freed here, when they were joined here.
 */
export async function readBody(
  body: Readable,
  framing: BodyFraming,
  limit: ResponseLimit,
  ctx: RequestContext,
  room?: BodyRoom,
  signal?: AbortSignal,
): Promise<Buffer> {
  // What the hold holds before the body: the estimate of its page, counted already.
  const estimate = room?.bytes ?? 0;
  const counted = new Counted(limit, ctx, room, signal);
  const received = await receive(body, framing, counted);
  const { encoding } = framing;
  if (encoding === undefined || encoding === 'identity' || received.length === 0) return received;
  const create = encoding === 'gzip' || encoding === 'x-gzip' ? createGunzip : encoding === 'deflate' ? createInflate : undefined;
  if (create === undefined) {
    throw Object.assign(new Error(`unsupported content-encoding '${encoding}'`), { code: 'E_UNSUPPORTED_ENCODING' });
  }
  const size = onePassSize(received, encoding, estimate, limit);
  if (size !== undefined) {
    const decoded = await decodeInOne(received, create({ chunkSize: size }), size);
    if (decoded !== undefined) {
      await counted.add(decoded.length, decoded.length);
      counted.give(received.length);
      freeOwned(received);
      return markOwned(decoded);
    }
  }
  const decoded = await decode(received, create(DECODE), counted);
  // zlib has ended and reads the compressed bytes no more; a one-pass decode stopped above may
  // still be reading them on the thread pool, so they are then left to the collector.
  if (size === undefined) freeOwned(received);
  return markOwned(decoded);
}

/**
 * The output chunk of a one-pass decode, or undefined for chunks of 512 KiB. Its bound is ours: the
 * estimate the request held (plus a quarter, at most 1 MiB), never a size the server states. Within
 * it, a gzip body's trailer (its size once decoded, modulo 2^32) sizes the chunk to the byte, and
 * one that says the body is larger goes to chunks at once: a trailer that lies only costs a pass.
 */
function onePassSize(body: Buffer, encoding: string, estimate: number, limit: ResponseLimit): number | undefined {
  const bound = Math.min(estimate + Math.min(estimate / 4, ONE_PASS_HEADROOM), limit.bytes, ONE_PASS_MAX);
  if (estimate < ONE_PASS_MIN) return undefined;
  if (encoding === 'deflate' || body.length < 18) return Math.floor(bound) + 1;
  const said = body.readUInt32LE(body.length - 4);
  // One byte more than the body keeps zlib from starting a chunk it would not fill; zlib takes no
  // chunk under 64 bytes.
  return said < bound ? Math.max(said + 1, 64) : undefined;
}

/** The bytes of one body read so far, against its limit and its room. */
class Counted {
  constructor(
    private readonly limit: ResponseLimit,
    private readonly ctx: RequestContext,
    private readonly room: BodyRoom | undefined,
    private readonly signal: AbortSignal | undefined,
  ) {}

  /** Counts `bytes` of a part that now holds `total`: past the limit it throws; it waits for room. */
  async add(bytes: number, total: number): Promise<void> {
    if (total > this.limit.bytes) throw tooLarge(this.limit, this.ctx);
    const waiting = this.room?.take(bytes, this.signal);
    if (waiting !== undefined) await waiting.catch((error: unknown) => this.refused(error));
  }

  give(bytes: number): void {
    this.room?.give(bytes);
  }

  private refused(error: unknown): never {
    if (this.signal?.aborted === true) {
      const stopped = new Error('stopped while waiting for room in the memory budget', { cause: error });
      throw Object.assign(stopped, { waitingForRoom: true });
    }
    if (!(error instanceof RoomRefused)) throw error;
    const budget = formatByteSize(error.limit);
    if (error.reason === 'alone') {
      throw tooLarge({ bytes: error.limit, setting: 'source.maxBufferedBytes' }, this.ctx, undefined, 'the memory budget for every response held at once');
    }
    throw new MemoryBudgetError(
      `The responses in flight need more than source.maxBufferedBytes (${budget}) at once and none could finish: this one ` +
      'gave its bytes back to be asked again. Raise source.maxBufferedBytes, or lower source.concurrency',
      this.ctx,
    );
  }
}

async function receive(body: Readable, framing: BodyFraming, counted: Counted): Promise<Buffer> {
  if (framing.length !== undefined) {
    try {
      await counted.add(0, framing.length);
    } catch (error) {
      body.destroy();
      throw error;
    }
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      total += chunk.length;
      await counted.add(chunk.length, total);
      chunks.push(chunk);
    }
  } catch (error) {
    body.destroy();
    throw error;
  }
  // One chunk is undici's, and not ours to free; chunks joined are.
  return chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : markOwned(Buffer.concat(chunks, total));
}

/**
 * Decodes `input` into one output chunk of `size` bytes (onePassSize): the body, or undefined when
 * it fills the chunk (it is larger than said), zlib then stopped before it allocates another: the
 * caller decodes it again in chunks of 512 KiB, each counted.
 */
function decodeInOne(input: Buffer, stream: Gunzip | Inflate, size: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    stream.on('error', reject);
    stream.on('readable', () => {
      // A full chunk is read only once zlib may go on: stopping here leaves nothing more decoded.
      if (total + stream.readableLength >= size) {
        stream.destroy();
        resolve(undefined);
        return;
      }
      for (let chunk = stream.read() as Buffer | null; chunk !== null; chunk = stream.read() as Buffer | null) {
        chunks.push(chunk);
        total += chunk.length;
      }
    });
    stream.on('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total)));
    stream.end(input);
  });
}

/**
 * Decodes `input` in one write to zlib, its output counted chunk by chunk before the next is asked
 * for; the input's bytes are given back at the end. Throws what zlib throws for a body that is not
 * what its encoding says (a NetworkError's cause: a body cut short).
 */
async function decode(input: Buffer, stream: Gunzip | Inflate, counted: Counted): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  stream.end(input);
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      total += chunk.length;
      await counted.add(chunk.length, total);
      chunks.push(chunk);
    }
  } finally {
    stream.destroy();
  }
  counted.give(input.length);
  return chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks, total);
}

function tooLarge(limit: ResponseLimit, ctx: RequestContext, cause?: unknown, what?: string): ResponseTooLargeError {
  const larger = `The response is larger than ${formatByteSize(limit.bytes)} once decoded`;
  const message =
    limit.setting === undefined
      ? `${larger}, the fixed limit for this endpoint, whose answers are a few KB: the server is not answering as it should`
      : `${larger} (${limit.setting}${what === undefined ? '' : `, ${what}`}): if pages this large are expected, raise ` +
        `${limit.setting}; otherwise ask for fewer items per page (streams[].limit)`;
  return new ResponseTooLargeError(message, ctx, { limitBytes: limit.bytes, cause });
}
