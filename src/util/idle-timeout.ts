import { pipeline, type Readable, Transform } from 'node:stream';

/**
 * `body` passed through, failed with `stalled()` when no chunk has come for `ms` (a server that
 * sends the headers and then stops mid-body). The failure destroys `body` too, which closes its
 * connection. The clock also runs while the reader holds the stream back, so `ms` is meant in
 * minutes, not in the time one chunk takes.
 */
export function withIdleTimeout(body: Readable, ms: number, stalled: () => Error): Readable {
  const timer = setTimeout(() => guard.destroy(stalled()), ms);
  const guard = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      timer.refresh();
      done(null, chunk);
    },
  });
  guard.on('close', () => clearTimeout(timer));
  pipeline(body, guard, () => clearTimeout(timer));
  return guard;
}
