import type { Clock } from '../util/clock.js';

interface Waiter {
  release: () => void;
  onAbort: () => void;
}

/**
 * Spaces request starts at least `1000 / rate` ms apart, first come first served. A token bucket
 * with room for one request: it never lets a burst through after an idle spell, because the server's
 * own bucket (burst = one second of its rate) may be the one that is empty. `Infinity` means unpaced.
 *
 * One pump sleeps until the next slot and releases the oldest waiter, so N waiters cost one timer,
 * not N. The rate is read again after every sleep, so a decrease applies to requests already
 * waiting, not only to those that arrive later.
 */
export class Pacer {
  private readonly waiting: Waiter[] = [];
  private pumping = false;
  /** Ends the pump's sleep when the last waiter gives up, so no timer outlives the queue. */
  private idle: AbortController | undefined;
  private lastStartMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly clock: Clock,
    /** Starts per second allowed now; read at every slot. */
    private readonly rate: () => number,
  ) {}

  /**
   * Resolves when the caller may start its request. An abort while waiting rejects with
   * `abortError()` and gives the slot to the next waiter.
   */
  acquire(signal?: AbortSignal, abortError: () => Error = () => new Error('aborted')): Promise<void> {
    if (signal?.aborted === true) return Promise.reject(abortError());
    if (this.waiting.length === 0 && this.nextSlotMs() <= this.clock.now()) {
      this.lastStartMs = this.clock.now();
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        release: () => {
          signal?.removeEventListener('abort', waiter.onAbort);
          resolve();
        },
        onAbort: () => {
          const index = this.waiting.indexOf(waiter);
          if (index >= 0) this.waiting.splice(index, 1);
          if (this.waiting.length === 0) this.idle?.abort();
          reject(abortError());
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.waiting.push(waiter);
      void this.pump();
    });
  }

  private nextSlotMs(): number {
    const rate = this.rate();
    return rate === Number.POSITIVE_INFINITY ? Number.NEGATIVE_INFINITY : this.lastStartMs + 1000 / rate;
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.waiting.length > 0) {
        const waitMs = this.nextSlotMs() - this.clock.now();
        if (waitMs > 0) {
          this.idle = new AbortController();
          await this.clock.sleep(waitMs, this.idle.signal);
          continue;
        }
        const waiter = this.waiting.shift();
        this.lastStartMs = this.clock.now();
        waiter?.release();
      }
    } finally {
      this.pumping = false;
      this.idle = undefined;
    }
  }
}
