import { sameBytes } from '../parquet/json-bytes.js';

/**
 * Columns found by a key's UTF-8 bytes where they lie, without decoding it: candidates by the
 * key's length and first byte, then compared byte for byte.
 */
export class KeyIndex {
  private readonly byKey = new Map<number, number[]>();
  private readonly names: (Buffer | undefined)[];

  /** `names[c]`: the key of column `c`, or undefined for a column no key names. */
  constructor(names: readonly (string | undefined)[]) {
    this.names = names.map((name) => (name === undefined ? undefined : Buffer.from(name)));
    this.names.forEach((name, c) => {
      if (name === undefined) return;
      const code = name.length * 256 + (name[0] ?? 0);
      const candidates = this.byKey.get(code);
      if (candidates === undefined) this.byKey.set(code, [c]);
      else candidates.push(c);
    });
  }

  /** The column whose key is [start, end) of `b`, or -1. */
  find(b: Buffer, start: number, end: number): number {
    const length = end - start;
    const candidates = this.byKey.get(length * 256 + (length === 0 ? 0 : b[start]!));
    if (candidates === undefined) return -1;
    for (const c of candidates) if (sameBytes(b, start, this.names[c]!, 0, length)) return c;
    return -1;
  }
}
