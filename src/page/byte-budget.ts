/** Part of the budget held for one page, from before its request until its rows are written. */
export interface BudgetHold {
  /** Bytes held now. */
  readonly bytes: number;
  /** Holds `bytes` instead: the page's real size, once it has arrived. Never waits. */
  resize(bytes: number): void;
  /** Gives the bytes back; a second call does nothing. */
  release(): void;
}

interface Waiter {
  key: string;
  grant: () => void;
}

/**
 * A budget of response bytes held in memory at once, shared by every partition of a run, so that
 * memory is bounded by bytes and not by pages (a page of items with large metadata can be 50 times
 * a typical one).
 *
 * A page's size is known only once it has arrived, so a request holds an estimate before it is
 * sent, and the hold is resized to the page's real size when the page arrives. The estimate is the
 * size of the largest page seen lately on the same path (decaying by 2% a page); a path not seen yet
 * holds the whole budget, so the first page of each stream goes alone and its size is learned
 * before other pages of that stream are asked for. Holds are granted in order of asking. A page
 * larger than the whole budget is still asked for, alone, so that an export always moves.
 */
export class ByteBudget {
  private used = 0;
  private highest = 0;
  private holds = 0;
  private readonly queue: Waiter[] = [];
  private readonly estimates = new Map<string, number>();

  constructor(readonly limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`ByteBudget: limit must be a positive integer, got ${limit}`);
  }

  /** Bytes held now. */
  get held(): number {
    return this.used;
  }

  /** Pages held now: asked for, arrived or being written. */
  get pages(): number {
    return this.holds;
  }

  /** The most bytes held at once so far. */
  get peak(): number {
    return this.highest;
  }

  /**
   * Waits until the estimate for a page of `key` (a request path) fits, then holds it. Rejects with
   * `abortError()` if `signal` aborts first.
   */
  hold(key: string, signal?: AbortSignal, abortError: () => Error = () => new Error('aborted')): Promise<BudgetHold> {
    // Estimated when granted, not when asked: a waiter then uses what the pages before it taught.
    const hold = (): BudgetHold => this.grant(key, this.estimate(key));
    if (this.queue.length === 0 && this.fits(key)) return Promise.resolve(hold());
    if (signal?.aborted === true) return Promise.reject(abortError());
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        key,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(hold());
        },
      };
      const onAbort = () => {
        const at = this.queue.indexOf(waiter);
        if (at >= 0) this.queue.splice(at, 1);
        reject(abortError());
        this.wake();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
    });
  }

  private estimate(key: string): number {
    return Math.min(this.estimates.get(key) ?? this.limit, this.limit);
  }

  private fits(key: string): boolean {
    return this.used === 0 || this.used + this.estimate(key) <= this.limit;
  }

  private grant(key: string, initial: number): BudgetHold {
    let bytes = initial;
    let released = false;
    this.take(bytes);
    this.holds++;
    return {
      get bytes() {
        return released ? 0 : bytes;
      },
      resize: (actual) => {
        if (released) return;
        this.learn(key, actual);
        this.used += actual - bytes;
        bytes = actual;
        this.highest = Math.max(this.highest, this.used);
        this.wake();
      },
      release: () => {
        if (released) return;
        released = true;
        this.used -= bytes;
        this.holds--;
        this.wake();
      },
    };
  }

  private take(bytes: number): void {
    this.used += bytes;
    this.highest = Math.max(this.highest, this.used);
  }

  private learn(key: string, actual: number): void {
    const before = this.estimates.get(key);
    this.estimates.set(key, Math.max(actual, Math.floor((before ?? 0) * 0.98), 1));
  }

  /** Grants waiters in order while the first one fits. */
  private wake(): void {
    while (this.queue.length > 0 && this.fits(this.queue[0]!.key)) this.queue.shift()!.grant();
  }
}
