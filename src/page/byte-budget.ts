/**
 * Part of the budget held for one response: from before its request (an estimate, or nothing),
 * through its bytes as they arrive and are decoded, until its rows are written.
 */
export interface BudgetHold {
  /** Bytes held now. */
  readonly bytes: number;
  /**
   * Counts `bytes` more of the response (received, or decoded): from what the hold holds, then
   * from the free room. Nothing to wait for when they fit (undefined); otherwise a promise that
   * settles once they do, or rejects with a RoomRefused when they never can.
   */
  take(bytes: number, signal?: AbortSignal): Promise<void> | undefined;
  /** `bytes` of the response no longer held (a compressed body, once decoded). */
  give(bytes: number): void;
  /** The attempt failed: the response's bytes go back, the hold keeps what it held before it. */
  reset(): void;
  /**
   * Its request was sent (it holds a request slot): until its answer's bytes come, it waits on the
   * server, not on the budget, so a wait for room may end through it (it settles, or fails).
   */
  sent(): void;
  /** Holds `bytes` instead: the response's real size, once it has arrived. Never waits. */
  resize(bytes: number): void;
  /** Gives the bytes back; a second call does nothing. */
  release(): void;
}

/**
 * Why a response could not take its bytes: `alone`, it needs more than the whole budget (no wait
 * can help); `stuck`, every response holding part of the budget waits for more and none can finish,
 * so this one, the youngest, gave its bytes back (asking again may help). The caller turns it into
 * the request's error.
 */
export class RoomRefused extends Error {
  constructor(
    readonly reason: 'alone' | 'stuck',
    readonly limit: number,
  ) {
    super(
      reason === 'alone' ? 'the response alone needs more than the whole budget' : 'every response holding the budget waits for more',
    );
  }
}

/** Where a hold's response stands, for telling a wait that can end from one that cannot. */
const RESERVED = 0;
const RECEIVING = 1;
const WAITING = 2;
const SETTLED = 3;
/** Sent, no byte of its answer yet. */
const SENT = 4;
type Stage = typeof RESERVED | typeof RECEIVING | typeof WAITING | typeof SETTLED | typeof SENT;

interface Hold {
  /** Granted `seq`-th: younger holds have larger ones. */
  seq: number;
  key: string | undefined;
  /** What it holds besides its response's bytes: the estimate asked before the request, or the size it settled at. */
  reserved: number;
  /** Bytes of the current response counted so far. */
  filled: number;
  /** Held now: max(reserved, filled); 0 once released. */
  held: number;
  stage: Stage;
  released: boolean;
}

interface Grower {
  hold: Hold;
  resolve: () => void;
  reject: (error: Error) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

interface Waiter {
  key: string;
  grant: () => void;
}

/**
 * The budget of response bytes held in memory at once, one for the whole process (its platform
 * client's): every partition of a run, and every other request (counts, views, `/login/status`), so
 * that memory is bounded by bytes and not by pages (a page of items with large metadata can be 50
 * times a typical one), and no server can push it further.
 *
 * A response's bytes are counted as they arrive and as they are decoded, chunk by chunk, never from a
 * size the server states (BudgetHold.take); a response that needs more than the whole budget is
 * refused as soon as it does. Before its request, a page may hold an estimate, so that pages wait
 * for room rather than crowd in: the size of the largest page seen lately on the same path (decaying
 * by 2% a page); a path not seen yet holds the whole budget, so the first page of each stream goes
 * alone and its size is learned before other pages of that stream are asked for. Holds are granted
 * in order of asking.
 *
 * When a response needs more room than is free it waits, ahead of every request not sent yet, for
 * what other holds give back: a page written, a response that settled smaller than its estimate. A
 * wait that can never end, because every hold that could give bytes back waits itself (none has
 * settled, none is receiving, none is sent and waiting on the server), is broken at once: first the
 * estimates of requests not sent yet go back (such a request may wait for a request slot that a
 * waiting answer holds; its bytes are counted as they come), then, if that is not enough, the
 * youngest waiting response is refused (`stuck`) and its bytes go back, so that the others go on.
 * A wait on pages whose release depends on the waiter (which the budget cannot see) ends with the
 * request's own deadline.
 */
export class ByteBudget {
  private used = 0;
  private highest = 0;
  private holds = 0;
  private granted = 0;
  /** Holds that could give bytes back without more room: settled, sent, or receiving without waiting. */
  private live = 0;
  private readonly queue: Waiter[] = [];
  private readonly growers: Grower[] = [];
  /** Every hold not released yet. */
  private readonly holding = new Set<Hold>();
  private readonly estimates = new Map<string, number>();

  constructor(readonly limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`ByteBudget: limit must be a positive integer, got ${limit}`);
  }

  /** Bytes held now. */
  get held(): number {
    return this.used;
  }

  /** Responses held now: asked for, arriving, or being written. */
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
    if (this.queue.length === 0 && this.growers.length === 0 && this.fits(key)) return Promise.resolve(hold());
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

  /** A hold of nothing, granted at once: for a request that asks no estimate (its bytes are counted as they come). */
  open(): BudgetHold {
    return this.grant(undefined, 0);
  }

  private estimate(key: string): number {
    return Math.min(this.estimates.get(key) ?? this.limit, this.limit);
  }

  private fits(key: string): boolean {
    return this.used === 0 || this.used + this.estimate(key) <= this.limit;
  }

  private grant(key: string | undefined, reserved: number): BudgetHold {
    const hold: Hold = { seq: this.granted++, key, reserved, filled: 0, held: 0, stage: RESERVED, released: false };
    this.holds++;
    this.holding.add(hold);
    this.setHeld(hold, reserved);
    return {
      get bytes() {
        return hold.held;
      },
      take: (bytes, signal) => this.take(hold, bytes, signal),
      sent: () => {
        if (!hold.released && hold.stage === RESERVED) this.stage(hold, SENT);
      },
      give: (bytes) => {
        if (hold.released) return;
        hold.filled = Math.max(0, hold.filled - bytes);
        this.setHeld(hold, Math.max(hold.reserved, hold.filled));
        this.wake();
      },
      reset: () => {
        if (hold.released) return;
        this.refuse(hold);
        hold.filled = 0;
        this.stage(hold, RESERVED);
        this.setHeld(hold, hold.reserved);
        this.wake();
      },
      resize: (actual) => {
        if (hold.released) return;
        if (hold.key !== undefined) this.learn(hold.key, actual);
        hold.reserved = actual;
        hold.filled = 0;
        this.stage(hold, SETTLED);
        this.setHeld(hold, actual);
        this.wake();
      },
      release: () => {
        if (hold.released) return;
        this.refuse(hold);
        this.stage(hold, RESERVED);
        this.setHeld(hold, 0);
        hold.released = true;
        this.holds--;
        this.holding.delete(hold);
        this.wake();
      },
    };
  }

  private take(hold: Hold, bytes: number, signal: AbortSignal | undefined): Promise<void> | undefined {
    if (hold.released) return undefined;
    if (hold.stage === RESERVED || hold.stage === SETTLED || hold.stage === SENT) this.stage(hold, RECEIVING);
    hold.filled += bytes;
    if (hold.filled <= hold.held) return undefined;
    if (hold.filled > this.limit) {
      hold.filled -= bytes;
      return Promise.reject(new RoomRefused('alone', this.limit));
    }
    if (this.growers.length === 0 && this.used + hold.filled - hold.held <= this.limit) {
      this.setHeld(hold, hold.filled);
      return undefined;
    }
    if (signal?.aborted === true) {
      hold.filled -= bytes;
      return Promise.reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    }
    return new Promise((resolve, reject) => {
      const grower: Grower = {
        hold,
        resolve,
        reject: (error) => {
          signal?.removeEventListener('abort', grower.onAbort);
          reject(error);
        },
        signal,
        onAbort: () => {
          this.refuse(hold, signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
          this.wake();
        },
      };
      signal?.addEventListener('abort', grower.onAbort, { once: true });
      this.growers.push(grower);
      this.stage(hold, WAITING);
      this.wake();
    });
  }

  /** Rejects the hold's wait for room, if it has one, with `error` (the request goes on without those bytes). */
  private refuse(hold: Hold, error?: Error): void {
    const at = this.growers.findIndex((grower) => grower.hold === hold);
    if (at < 0) return;
    const [grower] = this.growers.splice(at, 1);
    hold.filled = Math.min(hold.filled, hold.held);
    this.stage(hold, RECEIVING);
    // Made only when a grower is refused: an Error captures a stack, and every release comes here.
    grower!.reject(error ?? new RoomRefused('stuck', this.limit));
  }

  private stage(hold: Hold, stage: Stage): void {
    const wasLive = hold.stage === RECEIVING || hold.stage === SETTLED || hold.stage === SENT;
    const isLive = !hold.released && (stage === RECEIVING || stage === SETTLED || stage === SENT);
    this.live += (isLive ? 1 : 0) - (wasLive && !hold.released ? 1 : 0);
    hold.stage = stage;
  }

  /** Gives back the estimates held by requests not sent (nor receiving): whether one held any. */
  private revokeUnsent(): boolean {
    let revoked = false;
    for (const hold of this.holding) {
      if (hold.stage !== RESERVED || hold.filled > 0 || hold.reserved === 0) continue;
      hold.reserved = 0;
      this.setHeld(hold, 0);
      revoked = true;
    }
    return revoked;
  }

  private setHeld(hold: Hold, bytes: number): void {
    if (hold.released) return;
    this.used += bytes - hold.held;
    hold.held = bytes;
    this.highest = Math.max(this.highest, this.used);
  }

  private learn(key: string, actual: number): void {
    const before = this.estimates.get(key);
    this.estimates.set(key, Math.max(actual, Math.floor((before ?? 0) * 0.98), 1));
  }

  /**
   * Grants room to responses waiting for it, in order, then to requests waiting to be sent; and
   * breaks a wait that can never end (see the class).
   */
  private wake(): void {
    for (;;) {
      for (let g = 0; g < this.growers.length;) {
        const { hold, resolve, signal, onAbort } = this.growers[g]!;
        if (this.used + hold.filled - hold.held > this.limit) {
          g++;
          continue;
        }
        this.growers.splice(g, 1);
        signal?.removeEventListener('abort', onAbort);
        this.setHeld(hold, hold.filled);
        this.stage(hold, RECEIVING);
        resolve();
      }
      if (this.growers.length === 0 || this.live > 0) break;
      // Every hold that could give bytes back waits for more. First the estimates of requests not
      // sent yet go back (their bytes are counted as they come): such a request may wait for the
      // request slot a waiting answer holds. Then the youngest waiting answer is refused.
      if (this.revokeUnsent()) continue;
      const { hold } = this.growers.reduce((a, b) => (b.hold.seq > a.hold.seq ? b : a));
      this.refuse(hold);
      hold.filled = 0;
      this.stage(hold, RESERVED);
      this.setHeld(hold, hold.reserved);
    }
    while (this.growers.length === 0 && this.queue.length > 0 && this.fits(this.queue[0]!.key)) {
      this.queue.shift()!.grant();
    }
  }
}
