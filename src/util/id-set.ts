/** The most slots an IdSet takes: 12 bytes each, 48 MiB; it holds 3/4 of them, 3,145,728 ids. */
export const MAX_ID_SLOTS = 2 ** 22;
const FIRST_SLOTS = 1024;
/** The share of its slots a set fills before it doubles them. */
const MAX_LOAD = 0.75;

/**
 * A set of integer ids (1 to 2^53 - 1), each with a 32-bit tag (where it was met), in typed
 * arrays: an open-addressing hash table with linear probing, 12 bytes a slot, at most 3/4 full
 * and doubled when it is (16 to 32 bytes an id, off the JS heap). It never takes more than
 * `maxSlots`: once as full as that allows, `add` refuses new ids (it answers `full`) while still
 * finding those it holds.
 */
export class IdSet {
  private ids: Float64Array;
  private tags: Uint32Array;
  private count = 0;

  constructor(private readonly maxSlots = MAX_ID_SLOTS) {
    const slots = Math.min(FIRST_SLOTS, maxSlots);
    if (!Number.isInteger(Math.log2(slots))) throw new RangeError(`IdSet: maxSlots must be a power of two, got ${maxSlots}`);
    this.ids = new Float64Array(slots);
    this.tags = new Uint32Array(slots);
  }

  get size(): number {
    return this.count;
  }

  /** Bytes its arrays take now. */
  get bytes(): number {
    return this.ids.byteLength + this.tags.byteLength;
  }

  /**
   * Adds `id` with `tag`: `added`, or the tag it was added with before (`{ tag }`, left as it
   * was), or `full` when it is not there and the set may not grow.
   */
  add(id: number, tag: number): 'added' | 'full' | { tag: number } {
    let at = this.find(id);
    if (this.ids[at] === id) return { tag: this.tags[at]! };
    if (this.count + 1 > this.ids.length * MAX_LOAD) {
      if (this.ids.length * 2 > this.maxSlots) return 'full';
      this.grow();
      at = this.find(id);
    }
    this.ids[at] = id;
    this.tags[at] = tag >>> 0;
    this.count++;
    return 'added';
  }

  /** The tag `id` was added with; undefined when it is not in the set. */
  tagOf(id: number): number | undefined {
    const at = this.find(id);
    return this.ids[at] === id ? this.tags[at] : undefined;
  }

  /** Removes every id whose tag `drop` says to. */
  removeWhere(drop: (tag: number) => boolean): void {
    const { ids, tags } = this;
    this.ids = new Float64Array(ids.length);
    this.tags = new Uint32Array(ids.length);
    this.count = 0;
    for (let k = 0; k < ids.length; k++) {
      const id = ids[k]!;
      if (id !== 0 && !drop(tags[k]!)) this.put(id, tags[k]!);
    }
  }

  /** The slot of `id`, or of the empty slot where it would go. */
  private find(id: number): number {
    if (!Number.isSafeInteger(id) || id < 1) throw new RangeError(`IdSet: an id is an integer from 1 to 2^53 - 1, got ${id}`);
    const { ids } = this;
    const mask = ids.length - 1;
    let at = hash(id) & mask;
    while (ids[at] !== 0 && ids[at] !== id) at = (at + 1) & mask;
    return at;
  }

  private put(id: number, tag: number): void {
    const at = this.find(id);
    this.ids[at] = id;
    this.tags[at] = tag;
    this.count++;
  }

  private grow(): void {
    const { ids, tags } = this;
    this.ids = new Float64Array(ids.length * 2);
    this.tags = new Uint32Array(ids.length * 2);
    this.count = 0;
    for (let k = 0; k < ids.length; k++) if (ids[k] !== 0) this.put(ids[k]!, tags[k]!);
  }
}

/** Mixes both 32-bit halves of an id (murmur3's finalizer): ids that differ in any bit spread. */
function hash(id: number): number {
  let h = (id >>> 0) ^ Math.imul(Math.floor(id / 2 ** 32), 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
