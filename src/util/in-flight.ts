type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * Promises in flight, taken in the order they settle rather than the order they were added. A
 * rejection waits until it is taken (next() throws it): it never goes unhandled meanwhile.
 *
 * Each promise is followed once, when added. Not with Promise.race at each next(): that leaves a
 * reaction on every promise still pending for every race, each holding its race's result, so a
 * promise pending across many races keeps every value taken meanwhile (answers long written) alive.
 */
export class InFlight<T> {
  private pending = 0;
  private readonly settled: Settled<T>[] = [];
  private wake: (() => void) | undefined;

  get size(): number {
    return this.pending + this.settled.length;
  }

  add(promise: Promise<T>): void {
    this.pending++;
    const arrive = (settled: Settled<T>) => {
      this.pending--;
      this.settled.push(settled);
      const wake = this.wake;
      this.wake = undefined;
      wake?.();
    };
    promise.then(
      (value) => arrive({ ok: true, value }),
      (error: unknown) => arrive({ ok: false, error }),
    );
  }

  /** The value of the first promise to settle (one already settled first), or its error. */
  async next(): Promise<T> {
    if (this.size === 0) throw new Error('InFlight.next: nothing in flight');
    while (this.settled.length === 0) await new Promise<void>((resolve) => (this.wake = resolve));
    const first = this.settled.shift()!;
    if (!first.ok) throw first.error;
    return first.value;
  }

  /** Waits for every promise still in flight and takes them all: the values of those that resolved. */
  async settle(): Promise<T[]> {
    while (this.pending > 0) await new Promise<void>((resolve) => (this.wake = resolve));
    return this.settled.splice(0).flatMap((settled) => (settled.ok ? [settled.value] : []));
  }
}
