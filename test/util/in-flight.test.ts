import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { InFlight } from '../../src/util/in-flight.js';

/** A promise and the functions that settle it. */
function gate<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: Error) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise, resolve, reject };
}

describe('InFlight', () => {
  it('gives values in the order they settle, not the order they were added', async () => {
    const [a, b, c] = [gate<string>(), gate<string>(), gate<string>()];
    const lanes = new InFlight<string>();
    for (const g of [a, b, c]) lanes.add(g.promise);
    c.resolve('c');
    expect(await lanes.next()).toBe('c');
    b.resolve('b');
    a.resolve('a');
    expect(await lanes.next()).toBe('b');
    expect(await lanes.next()).toBe('a');
    expect(lanes.size).toBe(0);
  });

  it('keeps a rejection until it is taken, and then throws it', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const [a, b] = [gate<string>(), gate<string>()];
      const lanes = new InFlight<string>();
      lanes.add(a.promise);
      lanes.add(b.promise);
      b.reject(new Error('refused'));
      await new Promise((resolve) => setImmediate(resolve));
      await expect(lanes.next()).rejects.toThrow('refused');
      a.resolve('a');
      expect(await lanes.next()).toBe('a');
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('settle() waits for every one left and gives the values of those that resolved', async () => {
    const [a, b, c] = [gate<number>(), gate<number>(), gate<number>()];
    const lanes = new InFlight<number>();
    for (const g of [a, b, c]) lanes.add(g.promise);
    const all = lanes.settle();
    c.resolve(3);
    b.reject(new Error('failed'));
    a.resolve(1);
    expect((await all).sort()).toEqual([1, 3]);
    expect(lanes.size).toBe(0);
  });

  it('next() with nothing in flight is a mistake of the caller', async () => {
    await expect(new InFlight<number>().next()).rejects.toThrow('nothing in flight');
  });

  it('keeps no value it gave while another promise stays pending', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const lanes = new InFlight<{ bytes: Uint8Array }>();
    lanes.add(new Promise(() => undefined));
    const taken: WeakRef<object>[] = [];
    for (let i = 0; i < 20; i++) {
      lanes.add(Promise.resolve({ bytes: new Uint8Array(1 << 20) }));
      taken.push(new WeakRef(await lanes.next()));
    }
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(taken.filter((ref) => ref.deref() !== undefined).length).toBeLessThan(2);
  });
});
