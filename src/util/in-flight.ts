type Settled<T> = { from: Promise<Settled<T>> } & ({ ok: true; value: T } | { ok: false; error: unknown });

/**
 * Promises in flight, taken in the order they settle rather than the order they were added. A
 * rejection waits until it is taken (next() throws it): it never goes unhandled meanwhile.
 */
export class InFlight<T> {
  private readonly pending = new Set<Promise<Settled<T>>>();

  get size(): number {
    return this.pending.size;
  }

  add(promise: Promise<T>): void {
    const settled: Promise<Settled<T>> = promise.then(
      (value) => ({ from: settled, ok: true, value }),
      (error: unknown) => ({ from: settled, ok: false, error }),
    );
    this.pending.add(settled);
  }

  /** The value of the first promise to settle (one already settled first), or its error. */
  async next(): Promise<T> {
    if (this.pending.size === 0) throw new Error('InFlight.next: nothing in flight');
    const first = await Promise.race(this.pending);
    this.pending.delete(first.from);
    if (!first.ok) throw first.error;
    return first.value;
  }

  /** Waits for every promise still in flight and takes them all: the values of those that resolved. */
  async settle(): Promise<T[]> {
    const all = await Promise.all(this.pending);
    this.pending.clear();
    return all.flatMap((settled) => (settled.ok ? [settled.value] : []));
  }
}
