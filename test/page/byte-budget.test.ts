import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { type BudgetHold, ByteBudget, RoomRefused } from '../../src/page/byte-budget.js';
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

  it('a page of a path whose estimate is the whole budget goes alone; resize counts it at the size given', async () => {
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

/** What a take came to, once its turn has run: undefined while it waits. */
async function outcome(taking: Promise<void> | undefined): Promise<string | undefined> {
  if (taking === undefined) return 'taken';
  let result: string | undefined;
  taking.then(() => (result = 'taken'), (error: unknown) => (result = error instanceof RoomRefused ? error.reason : String(error)));
  await settle();
  return result;
}

describe('ByteBudget: the bytes of a response as they arrive', () => {
  it('come from what the hold holds, then from the free room, without a wait while they fit', async () => {
    const budget = new ByteBudget(1000);
    const page = await budget.hold('/a');
    page.resize(300);
    page.release();
    const hold = await budget.hold('/a');
    expect(hold.take(200)).toBeUndefined();
    expect([hold.bytes, budget.held]).toEqual([300, 300]);
    expect(hold.take(300)).toBeUndefined();
    expect([hold.bytes, budget.held]).toEqual([500, 500]);
    hold.give(400);
    expect([hold.bytes, budget.held], 'back to what it held before its bytes').toEqual([300, 300]);
    const open = budget.open();
    expect(open.bytes).toBe(0);
    expect(open.take(700)).toBeUndefined();
    expect(budget.held).toBe(1000);
    expect(budget.peak).toBe(1000);
  });

  it('a response that needs more than the whole budget is refused at once (alone), whatever else is held', async () => {
    const budget = new ByteBudget(1000);
    const hold = budget.open();
    expect(hold.take(600)).toBeUndefined();
    expect(await outcome(hold.take(401))).toBe('alone');
    expect(hold.bytes, 'the bytes it had stay until the attempt is reset').toBe(600);
    hold.reset();
    expect(budget.held).toBe(0);
  });

  it('waits for a written page to be released, ahead of every request not sent yet', async () => {
    const budget = new ByteBudget(1000);
    const written = budget.open();
    expect(written.take(600)).toBeUndefined();
    written.resize(600);
    const arriving = budget.open();
    expect(arriving.take(300)).toBeUndefined();
    const taking = arriving.take(300);
    expect(await outcome(taking)).toBeUndefined();
    let sent = false;
    void budget.hold('/new').then(() => (sent = true));
    written.release();
    expect(await outcome(taking)).toBe('taken');
    expect([arriving.bytes, budget.held]).toEqual([600, 600]);
    await settle();
    expect(sent, 'a path not seen yet waits for the whole budget').toBe(false);
    arriving.resize(600);
    arriving.release();
    await settle();
    expect(sent).toBe(true);
    expect(budget.peak).toBeLessThanOrEqual(1000);
  });

  it('when every response holding bytes waits for more, the youngest is refused (stuck) and its bytes go back', async () => {
    const budget = new ByteBudget(1000);
    const [a, b, c] = [budget.open(), budget.open(), budget.open()];
    for (const hold of [a, b, c]) expect(hold.take(300)).toBeUndefined();
    const waitA = a.take(250);
    const waitB = b.take(250);
    expect(await outcome(waitA)).toBeUndefined();
    // c receives still: a and b may wait for it.
    expect(await outcome(waitB)).toBeUndefined();
    const waitC = c.take(200);
    // Now all three wait: c, the youngest, gives its 300 back; a then fits (850), b waits for a.
    expect(await outcome(waitC)).toBe('stuck');
    expect(c.bytes).toBe(0);
    expect(await outcome(waitA)).toBe('taken');
    expect(await outcome(waitB)).toBeUndefined();
    a.resize(550);
    a.release();
    expect(await outcome(waitB)).toBe('taken');
    expect(budget.peak).toBeLessThanOrEqual(1000);
  });

  it('a hold that has not started (a request not sent) gives its estimate back to an answer that would wait for ever', async () => {
    const budget = new ByteBudget(1000);
    const early = await budget.hold('/p');
    early.resize(200);
    early.release();
    // Its request may wait for the slot the answer below holds: nothing it holds would come back.
    const reserved = await budget.hold('/p');
    const a = budget.open();
    expect(a.take(800)).toBeUndefined();
    expect(await outcome(a.take(100))).toBe('taken');
    expect([reserved.bytes, a.bytes, budget.held]).toEqual([0, 900, 900]);
    // Sent at last, its answer's bytes are counted as they come.
    reserved.sent();
    expect(reserved.take(100)).toBeUndefined();
    expect(budget.held).toBe(1000);
    expect(budget.peak).toBeLessThanOrEqual(1000);
  });

  it('a hold sent (its request has its slot) is a reason to wait: it settles or fails by itself', async () => {
    const budget = new ByteBudget(1000);
    const page = await budget.hold('/p');
    page.resize(700);
    page.release();
    const sent = await budget.hold('/p');
    sent.sent();
    const a = budget.open();
    expect(a.take(300)).toBeUndefined();
    const waiting = a.take(100);
    expect(await outcome(waiting), 'waits for the page in flight, not refused as stuck').toBeUndefined();
    expect(sent.bytes).toBe(700);
    sent.resize(400);
    expect(await outcome(waiting)).toBe('taken');
    expect(budget.peak).toBeLessThanOrEqual(1000);
  });

  it('a wait ends with its signal, the bytes it waited for not counted', async () => {
    const budget = new ByteBudget(1000);
    const settled = budget.open();
    expect(settled.take(900)).toBeUndefined();
    settled.resize(900);
    const hold = budget.open();
    const controller = new AbortController();
    const taking = hold.take(200, controller.signal);
    expect(await outcome(taking)).toBeUndefined();
    controller.abort(new Error('deadline'));
    expect(await outcome(taking)).toBe('Error: deadline');
    expect([hold.bytes, budget.held]).toEqual([0, 900]);
  });

  it('reset and release while a take waits refuse it; everything goes back exactly once', async () => {
    const budget = new ByteBudget(100);
    const settled = budget.open();
    expect(settled.take(60)).toBeUndefined();
    settled.resize(60);
    const hold = budget.open();
    expect(hold.take(30)).toBeUndefined();
    const taking = hold.take(30);
    hold.release();
    expect(await outcome(taking)).toBe('stuck');
    hold.release();
    hold.reset();
    expect(hold.take(10)).toBeUndefined();
    expect(budget.held).toBe(60);
    expect(budget.pages).toBe(1);
  });

  it('responses of random sizes in random chunks, settled and written in any order: never past the limit, always finished', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            chunks: fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 6 }),
            estimate: fc.boolean(),
            wait: fc.nat(3),
          }),
          { minLength: 1, maxLength: 8 },
        ),
        async (responses) => {
          const budget = new ByteBudget(1000);
          const read = async (response: (typeof responses)[number]): Promise<string> => {
            for (let attempt = 0; ; attempt++) {
              const hold: BudgetHold = response.estimate ? await budget.hold('/r') : budget.open();
              try {
                for (const chunk of response.chunks) await hold.take(chunk);
                hold.resize(response.chunks.reduce((sum, n) => sum + n, 0));
                for (let turn = 0; turn < response.wait; turn++) await settle();
                return 'written';
              } catch (error) {
                if (!(error instanceof RoomRefused) || error.reason === 'alone' || attempt === 20) return 'refused';
                hold.reset();
              } finally {
                hold.release();
              }
            }
          };
          const outcomes = await Promise.all(responses.map(read));
          expect(outcomes).toHaveLength(responses.length);
          expect(budget.peak).toBeLessThanOrEqual(1000);
          expect([budget.held, budget.pages]).toEqual([0, 0]);
          for (const [i, response] of responses.entries()) {
            if (response.chunks.reduce((sum, n) => sum + n, 0) <= 1000 && responses.length === 1) expect(outcomes[i]).toBe('written');
          }
        },
      ),
      { numRuns: 300 },
    );
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
