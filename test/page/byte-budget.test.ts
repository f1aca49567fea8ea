import { describe, expect, it } from 'vitest';
import { ByteBudget } from '../../src/page/byte-budget.js';
import { prefetchOne } from '../../src/util/prefetch.js';

/** Lets every settled promise run its callbacks. */
const settle = () => new Promise((done) => setImmediate(done));

describe('ByteBudget', () => {
  it('the first page of a path holds the whole budget, so it goes alone; later ones hold its size', async () => {
    const budget = new ByteBudget(1000);
    const first = await budget.hold('/events');
    expect(first.bytes).toBe(1000);
    let second: number | undefined;
    void budget.hold('/events').then((hold) => (second = hold.bytes));
    await settle();
    expect(second, 'waits while the first page is out').toBeUndefined();
    first.resize(300);
    await settle();
    expect(second).toBe(300);
    expect(budget.held).toBe(600);
  });

  it('grants holds in order of asking while they fit, and never more than the limit', async () => {
    const budget = new ByteBudget(1000);
    (await budget.hold('/a')).resize(400);
    const granted: string[] = [];
    const holds = ['b', 'c', 'd'].map((name) => budget.hold('/a').then((hold) => (granted.push(name), hold)));
    await settle();
    // 400 held: one more page of 400 fits, a third would pass 1000.
    expect(granted).toEqual(['b']);
    expect(budget.held).toBe(800);
    expect(budget.pages, 'the first page and b').toBe(2);
    (await holds[0]!).release();
    (await holds[0]!).release();
    await settle();
    expect(granted).toEqual(['b', 'c']);
    expect(budget.pages, 'a release counts once').toBe(2);
    expect(budget.peak).toBeLessThanOrEqual(1000);
  });

  it('a page larger than the whole budget still goes, alone, and is counted at its size', async () => {
    const budget = new ByteBudget(1000);
    const first = await budget.hold('/big');
    first.resize(5000);
    expect(budget.held).toBe(5000);
    let next = false;
    void budget.hold('/big').then(() => (next = true));
    await settle();
    expect(next).toBe(false);
    first.release();
    await settle();
    expect(next).toBe(true);
    expect(budget.peak).toBe(5000);
  });

  it('the estimate follows the largest page seen lately: it decays by 2% a page', async () => {
    const budget = new ByteBudget(10_000);
    const a = await budget.hold('/p');
    a.resize(1000);
    a.release();
    const b = await budget.hold('/p');
    expect(b.bytes).toBe(1000);
    b.resize(100);
    b.release();
    expect((await budget.hold('/p')).bytes).toBe(980);
  });

  it('release and resize after release do nothing; held bytes go back exactly once', async () => {
    const budget = new ByteBudget(100);
    const hold = await budget.hold('/x');
    hold.release();
    hold.release();
    hold.resize(50);
    expect(budget.held).toBe(0);
    expect(hold.bytes).toBe(0);
  });

  it('a waiter whose signal aborts leaves the queue with the given error, and the next one moves up', async () => {
    const budget = new ByteBudget(100);
    const first = await budget.hold('/x');
    const controller = new AbortController();
    const waiting = budget.hold('/x', controller.signal, () => new Error('stopped'));
    let third = false;
    void budget.hold('/y').then(() => (third = true));
    controller.abort();
    await expect(waiting).rejects.toThrow('stopped');
    first.release();
    await settle();
    expect(third).toBe(true);
    // /y, a path not seen yet, holds the whole budget: a waiter with an aborted signal fails at once.
    await expect(budget.hold('/x', controller.signal, () => new Error('stopped again'))).rejects.toThrow('stopped again');
  });

  it('refuses a limit that is not a positive integer', () => {
    expect(() => new ByteBudget(0)).toThrow(RangeError);
    expect(() => new ByteBudget(1.5)).toThrow(RangeError);
  });
});

/** Yields `values` one by one as a remote source would (each after a turn), then throws `failure`. */
async function* source(values: number[], failure?: Error): AsyncGenerator<number> {
  for (const value of values) yield await Promise.resolve(value);
  if (failure !== undefined) throw failure;
}

describe('prefetchOne', () => {
  it('hands the value fetched ahead to discard when the consumer stops early', async () => {
    const discarded: number[] = [];
    const seen: number[] = [];
    for await (const n of prefetchOne(source([1, 2, 3, 4, 5]), (n) => discarded.push(n))) {
      seen.push(n);
      if (n === 2) break;
    }
    await settle();
    expect(seen).toEqual([1, 2]);
    expect(discarded).toEqual([3]);
  });

  it('discards nothing when the source ends or fails', async () => {
    const discarded: number[] = [];
    const seen: number[] = [];
    for await (const n of prefetchOne(source([1, 2]), (n) => discarded.push(n))) seen.push(n);
    await expect(async () => {
      for await (const n of prefetchOne(source([1], new Error('boom')), (n) => discarded.push(n))) seen.push(n);
    }).rejects.toThrow('boom');
    await settle();
    expect(seen).toEqual([1, 2, 1]);
    expect(discarded).toEqual([]);
  });
});
