import { describe, expect, it } from 'vitest';
import { canFreeNow, freedSoFar, freeOwned, markOwned } from '../../src/util/owned-memory.js';

const MiB = 1024 * 1024;

describe.runIf(canFreeNow)('memory freed at once (util/owned-memory.ts)', () => {
  it('frees a marked buffer, once: its views read as empty, a second free does nothing', () => {
    const before = freedSoFar();
    const body = markOwned(Buffer.alloc(MiB, 7));
    const view = body.subarray(10, 20);
    freeOwned(view);
    expect(body.length).toBe(0);
    expect(view.length).toBe(0);
    freeOwned(body);
    expect(freedSoFar()).toEqual({ buffers: before.buffers + 1, bytes: before.bytes + MiB });
  });

  it('leaves a buffer it did not mark as it is', () => {
    const body = Buffer.alloc(MiB, 7);
    freeOwned(body);
    expect(body.length).toBe(MiB);
    expect(body[MiB - 1]).toBe(7);
  });

  it("never marks a Buffer that may share Node's pool, nor a small array", () => {
    const pooled = Buffer.from('a short line');
    expect(pooled.buffer.byteLength, 'a slice of a larger buffer').toBeGreaterThan(pooled.length);
    freeOwned(markOwned(pooled));
    expect(pooled.toString()).toBe('a short line');
    // Nor one under 64 KiB, pooled or not.
    const half = markOwned(Buffer.alloc(Buffer.poolSize / 2, 1));
    freeOwned(half);
    expect(half.length).toBe(Buffer.poolSize / 2);
    const small = markOwned(new Int32Array(100).fill(3));
    freeOwned(small);
    expect(small[99]).toBe(3);
  });

  it('frees typed arrays as it frees Buffers', () => {
    const times = markOwned(new Float64Array(MiB / 8));
    freeOwned(times);
    expect(times.length).toBe(0);
  });
});

describe.skipIf(canFreeNow)('memory left to the collector where Node.js cannot free it at once', () => {
  it('frees nothing', () => {
    const body = markOwned(Buffer.alloc(MiB, 7));
    freeOwned(body);
    expect(body.length).toBe(MiB);
    expect(freedSoFar().buffers).toBe(0);
  });
});
