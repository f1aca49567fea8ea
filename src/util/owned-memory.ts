/**
 * Memory given back the moment its holder is done with it, rather than when V8 next collects it.
 *
 * An answer's buffers (its body, where its points lie) are megabytes each and live for one write.
 * Left to the collector, the ones already written pile up between collections, and the allocator
 * keeps the room they took once they are freed: a long export's peak then grows with its length
 * (bench/RESULTS.md, issue 46). `ArrayBuffer.prototype.transfer(0)` (Node.js 22 and later) detaches
 * a buffer and frees its memory at once.
 *
 * Only a buffer marked here is ever freed, and only by its one holder: a buffer made by the code
 * that marks it and handed to no one else (not one of undici's chunks, nor a slice of Node's pool).
 * A view of a freed buffer reads as empty: the holder frees it once nothing reads it any more.
 */

/**
 * Below this, a view is left to the collector: what freeing it saves is not worth a call, and a
 * Buffer smaller than half of Buffer.poolSize (64 KiB in Node.js 24) may be a slice of Node's
 * shared pool, which is not ours to free (and cannot be detached).
 */
const LEAST_BYTES = 64 * 1024;

type Detachable = ArrayBuffer & { transfer?: (length?: number) => ArrayBuffer; readonly detached?: boolean };

/** Whether this Node.js frees a buffer at once (22 and later); before, every buffer is left to the collector. */
export const canFreeNow = typeof (ArrayBuffer.prototype as Detachable).transfer === 'function';

const owned = new WeakSet<ArrayBuffer>();

/** What freeOwned freed in this process so far. */
const freed = { buffers: 0, bytes: 0 };

/** Marks `view`'s buffer as held by the caller alone, to be given to freeOwned once done; returns `view`. */
export function markOwned<T extends ArrayBufferView>(view: T): T {
  const { buffer } = view;
  const large = view.byteLength >= Math.max(LEAST_BYTES, Buffer.poolSize);
  if (canFreeNow && large && buffer instanceof ArrayBuffer) owned.add(buffer);
  return view;
}

/**
 * Frees the memory of `view`'s buffer now, when markOwned marked it (and it is not freed yet);
 * anything else is left as it is. Every view of the buffer reads as empty afterwards.
 */
export function freeOwned(view: ArrayBufferView | undefined): void {
  const buffer = view?.buffer as Detachable | undefined;
  if (!(buffer instanceof ArrayBuffer) || !owned.has(buffer) || buffer.detached === true) return;
  owned.delete(buffer);
  const bytes = buffer.byteLength;
  try {
    buffer.transfer!(0);
  } catch {
    // A buffer Node.js keeps from being detached: left to the collector, as an unmarked one is.
    return;
  }
  freed.buffers++;
  freed.bytes += bytes;
}

/** The buffers, and their bytes, freeOwned freed in this process so far. */
export function freedSoFar(): { buffers: number; bytes: number } {
  return { ...freed };
}
