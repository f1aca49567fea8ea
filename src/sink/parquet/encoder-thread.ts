import { parentPort } from 'node:worker_threads';
import { type EncodeJob, encodeSpill } from './encode.js';

/** Messages between the export's main thread and the encoder thread (encoder-pool.ts). */
export type ToEncoder = { id: number; job: EncodeJob } | { close: true };
export type FromEncoder =
  | { id: number; chunk: Uint8Array } |
  { id: number; done: true } |
  { id: number; error: string };

// The encoder thread: one job at a time, chunks of the Parquet file sent back as they come (their
// memory moves to the main thread, no copy), then `done` or `error`.
const port = parentPort;
if (port !== null) {
  port.on('message', (request: ToEncoder) => {
    // Closing the port ends the thread once nothing else is pending (EncoderPool.close).
    if ('close' in request) {
      port.close();
      return;
    }
    const { id, job } = request;
    const send = (message: FromEncoder, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
    encodeSpill(job, (chunk) => {
      // A chunk that views a larger buffer is copied, so that only its own bytes move.
      const own = chunk.byteLength === chunk.buffer.byteLength ? chunk : chunk.slice();
      send({ id, chunk: own }, [own.buffer as ArrayBuffer]);
    }).then(
      () => send({ id, done: true }),
      (error: unknown) => send({ id, error: error instanceof Error ? error.message : String(error) }),
    );
  });
}
