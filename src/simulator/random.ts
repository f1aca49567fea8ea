/**
 * Deterministic, allocation-free randomness for the simulator. Every generated value is a pure
 * function of (seed, index, salt), so any item can be produced on demand in O(1) without state.
 */

/** MurmurHash3's 32-bit finaliser: a fast bijective mix with good avalanche. */
export function mix32(value: number): number {
  let h = value | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Hashes three 32-bit inputs into one 32-bit value. */
export function hash3(a: number, b: number, c: number): number {
  return mix32(mix32(mix32(a) ^ Math.imul(b | 0, 0x9e3779b1)) ^ Math.imul(c | 0, 0x85ebca77));
}

/** Hashes a string into 32 bits (FNV-1a followed by a mix). */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return mix32(h);
}

/**
 * A small reseedable generator (mulberry32). One instance is reused per generator to avoid a closure
 * allocation per item; it is not reentrant, which is fine for synchronous generation.
 */
export class Rng {
  private state = 0;

  reset(seed: number): this {
    this.state = seed >>> 0;
    return this;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, bound). */
  int(bound: number): number {
    return Math.floor(this.next() * bound);
  }

  pick<T>(values: readonly T[]): T {
    const value = values[this.int(values.length)];
    if (value === undefined) throw new RangeError('pick() from an empty list');
    return value;
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }
}
