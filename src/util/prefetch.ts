/**
 * Yields what `source` yields, asking for the next value as soon as the current one is handed out:
 * while the consumer writes page k, page k+1 is on its way. At most one value is held ahead, so
 * memory stays bounded. When the consumer stops early, the value asked for ahead is never handed
 * out: it goes to `discard` when it arrives (a page gives its bytes back to the memory budget).
 */
export async function* prefetchOne<T>(
  source: AsyncIterable<T>,
  discard: (value: T) => void = () => {},
): AsyncGenerator<T, void, undefined> {
  const iterator = source[Symbol.asyncIterator]();
  let next = iterator.next();
  try {
    for (;;) {
      const result = await next;
      if (result.done === true) return;
      next = iterator.next();
      // Seen here so an early exit of the consumer leaves no unhandled rejection; awaited above.
      next.catch(() => undefined);
      yield result.value;
    }
  } finally {
    // Nothing when the source ended or failed; the value ahead when the consumer left early.
    next.then((ahead) => {
      if (ahead.done !== true) discard(ahead.value);
    }, () => undefined);
    await iterator.return?.();
  }
}
